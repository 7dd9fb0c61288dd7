/**
 * The security matrix every /v1 route is checked against (docs/access.md "The security matrix"):
 * for each operation, each kind of caller, the exact status and `error.code`. Routes add themselves
 * to OPERATIONS as they land; test/access/matrix.test.ts runs the whole table in-process and
 * against the running service.
 *
 * Callers are built by `provisionCallers` through the same services the administration command
 * line uses, on the data folder the app (or the running `serve`) uses.
 */
import { crcBase62, generateKey } from "../../src/keys/api-key.ts";
import type { Core } from "../../src/app/core.ts";
import type { Operation } from "../../src/http/access.ts";
import { and, eq, isNull } from "drizzle-orm";
import { q, type Store } from "../../src/storage/store.ts";

export interface MatrixOperation {
  readonly operation: Operation;
  readonly method: "GET" | "POST";
  /** Path of a request that passes access; ids are well-formed but need not exist. */
  readonly path: string;
  readonly body?: unknown;
  /** What a caller that passes every access rule gets: `status` or `status CODE`. */
  readonly admitted: string;
}

const HASH = "sha256:" + "ab".repeat(32);
const SOME_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";

export const OPERATIONS: readonly MatrixOperation[] = [
  { operation: "verifications.create", method: "POST", path: "/v1/verifications", body: { originalDocHash: HASH }, admitted: "200" },
  { operation: "verifications.list", method: "GET", path: "/v1/verifications", admitted: "200" },
  { operation: "verifications.get", method: "GET", path: `/v1/verifications/${SOME_ID}`, admitted: "404 NOT_FOUND" },
  { operation: "records.create", method: "POST", path: "/v1/records", body: { originalDocHash: HASH }, admitted: "201" },
  { operation: "records.revoke", method: "POST", path: `/v1/records/${SOME_ID}/revoke`, body: { reason: "SUPERSEDED" }, admitted: "404 NOT_FOUND" },
  { operation: "receipts.get", method: "GET", path: `/v1/records/${SOME_ID}/receipt`, admitted: "404 NOT_FOUND" },
];

export type CallerName =
  | "no credential"
  | "malformed key"
  | "bad CRC"
  | "unknown key id"
  | "wrong secret"
  | "revoked key"
  | "expired key"
  | "test key"
  | "key without the scope"
  | "organisation without API access"
  | "organisation without the add-on"
  | "two Authorization headers"
  | "non-Bearer scheme"
  | "Origin present"
  | "full key";

export interface Callers {
  /** Headers each caller sends. */
  readonly headers: Readonly<Record<CallerName, Record<string, string>>>;
  /** A live key with every scope, of a validated organisation with API access and the add-on. */
  readonly fullKey: string;
  readonly orgId: string;
}

type Expectation = { status: number; code: string } | "admitted";
const E = (status: number, code: string) => ({ status, code });
const UNAUTH = E(401, "UNAUTHENTICATED");

/** What each caller gets on each operation (docs/access.md "Order of refusals"). */
export function expected(op: MatrixOperation, caller: CallerName): Expectation {
  const records = op.operation.startsWith("records.");
  switch (caller) {
    case "no credential":
      return op.operation === "verifications.create" ? "admitted" : UNAUTH;
    case "malformed key":
    case "bad CRC":
    case "unknown key id":
    case "wrong secret":
    case "revoked key":
    case "expired key":
    case "two Authorization headers":
    case "non-Bearer scheme":
      return UNAUTH;
    case "Origin present":
      return E(403, "FORBIDDEN");
    case "organisation without API access":
      return E(402, "PAYMENT_REQUIRED");
    case "test key":
      return records ? E(403, "TEST_ENVIRONMENT") : "admitted";
    case "organisation without the add-on":
      return records ? E(402, "ADDON_REQUIRED") : "admitted";
    case "key without the scope":
      // Every key carries verifications:read; the scope-less key lacks records:write (and revoke).
      return records ? E(403, "SCOPE_REQUIRED") : "admitted";
    case "full key":
      return "admitted";
  }
}

export const CALLERS: readonly CallerName[] = [
  "no credential",
  "malformed key",
  "bad CRC",
  "unknown key id",
  "wrong secret",
  "revoked key",
  "expired key",
  "test key",
  "key without the scope",
  "organisation without API access",
  "organisation without the add-on",
  "two Authorization headers",
  "non-Bearer scheme",
  "Origin present",
  "full key",
];

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * Organisations and keys for every caller, made through the core services on the app's data
 * folder. `onTopic` gives organisations with the add-on a topic id so record operations can be
 * admitted without waiting for the ledger (null: leave topic creation to the running service).
 */
export async function provisionCallers(core: Pick<Core, "organisations" | "apiKeys"> & { readonly store: Store }, actor = "test"): Promise<Callers> {
  const full = await core.organisations.create({ name: "Full Access Ltd", apiAccess: true, addon: true, validated: true }, actor);
  const noApi = await core.organisations.create({ name: "No API Ltd", apiAccess: false, addon: true, validated: true }, actor);
  const noAddon = await core.organisations.create({ name: "No Addon Ltd", apiAccess: true, addon: false, validated: true }, actor);

  const fullKey = await core.apiKeys.mint({ orgId: full.id, environment: "live", revoke: true }, actor);
  const testKey = await core.apiKeys.mint({ orgId: full.id, environment: "test" }, actor);
  const revoked = await core.apiKeys.mint({ orgId: full.id, environment: "live", revoke: true }, actor);
  await core.apiKeys.revoke(revoked.keyId, actor);
  // A key with every scope whose expiry has passed: minted to expire, then its expiry moved into
  // the past, as the clock would move it (minting refuses an expiry that is not in the future).
  const expired = await core.apiKeys.mint({ orgId: full.id, environment: "live", revoke: true, expiresAt: Date.now() + 3_600_000 }, actor);
  await core.store.write((tx, t) => q(tx.update(t.apiKeys).set({ expiresAt: Date.now() - 1 }).where(eq(t.apiKeys.keyId, expired.keyId))));
  // Minted before the add-on was granted: verifications:read only, for ever: scopes are fixed at
  // minting.
  const lateAddon = await core.organisations.create({ name: "Late Addon Ltd", apiAccess: true, addon: false, validated: true }, actor);
  const scopeless = await core.apiKeys.mint({ orgId: lateAddon.id, environment: "live" }, actor);
  await core.organisations.set(lateAddon.id, { addon: true }, actor);
  const noApiKey = await core.apiKeys.mint({ orgId: noApi.id, environment: "live", revoke: true }, actor);
  const noAddonKey = await core.apiKeys.mint({ orgId: noAddon.id, environment: "live" }, actor);

  const k = fullKey.key;
  const body = k.slice(0, 56);
  const other = generateKey("live"); // well-formed, valid CRC, never stored
  const wrongSecret = (() => {
    // Same key id, another secret, a correct CRC: only the stored digest can tell.
    const forged = generateKey("live");
    const text = `dv_live_${fullKey.keyId}${forged.secret}`;
    return text + crcBase62(text);
  })();
  const badCrcLast = k.at(-1) === "0" ? "1" : "0";

  return {
    fullKey: k,
    orgId: full.id,
    headers: {
      "no credential": {},
      "malformed key": bearer("dv_live_short"),
      "bad CRC": bearer(body + k.slice(56, 61) + badCrcLast),
      "unknown key id": bearer(other.key),
      "wrong secret": bearer(wrongSecret),
      "revoked key": bearer(revoked.key),
      "expired key": bearer(expired.key),
      "test key": bearer(testKey.key),
      "key without the scope": bearer(scopeless.key),
      "organisation without API access": bearer(noApiKey.key),
      "organisation without the add-on": bearer(noAddonKey.key),
      // What Bun (and any fetch) makes of two Authorization headers: one value joined by ", ".
      "two Authorization headers": { authorization: `Bearer ${k}, Bearer ${k}` },
      "non-Bearer scheme": { authorization: `Basic ${Buffer.from(`${k}:`).toString("base64")}` },
      "Origin present": { ...bearer(k), origin: "https://example.com" },
      "full key": bearer(k),
    },
  };
}

/** Gives every organisation with the add-on a topic id, so record creation does not wait for the ledger. */
export function giveTopics(core: Pick<Core, "db">): void {
  core.db.$client.run("UPDATE organisations SET topic_id = '0.0.' || (1000 + rowid) WHERE addon = 1 AND topic_id IS NULL");
}

/** giveTopics on either engine (test/support/engine.ts): the organisations' rows through the store. */
export async function giveTopicsOn(store: Store): Promise<void> {
  await store.write(function* (tx, t) {
    const rows = yield* q(tx.select({ id: t.organisations.id }).from(t.organisations).where(and(eq(t.organisations.addon, true), isNull(t.organisations.topicId))).orderBy(t.organisations.createdAt, t.organisations.id));
    let n = 1000;
    for (const { id } of rows) yield* q(tx.update(t.organisations).set({ topicId: `0.0.${++n}` }).where(eq(t.organisations.id, id)));
  });
}
