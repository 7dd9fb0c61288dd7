/**
 * The administration command line (docs/operations.md "Administration on the server",
 * docs/admin.md): `org create|set|list|rotate-key|key-compromised`, `key mint|list|revoke` and
 * `person add|list|suspend|link`. It works on the data folder directly (no network API), also
 * while `serve` runs on it: SQLite's locking and the services' IMMEDIATE transactions make the two
 * safe side by side. Every flag is checked strictly; refusals change nothing.
 */
import { osActor } from "./actor.ts";
import { enrolmentBase } from "./enrolment-url.ts";
import { openAdminCore, type AdminCore, type CoreOptions } from "../app/core.ts";
import { parseConfig } from "../config/index.ts";
import { keyPrefix } from "../keys/api-key.ts";
import { isExpired, parseExpiry, type ApiKeyInfo } from "../keys/api-keys.ts";
import { parseOrgDomain, type OrgChanges, type Organisation } from "../keys/organisations.ts";
import type { KeyRotation } from "../keys/org-keys.ts";
import { audit } from "../keys/audit.ts";
import { createSealRotation } from "../records/seal-rotation.ts";
import { createPersons, type EnrolmentLink, type Person, type Persons } from "../persons/persons.ts";
import { parseFlags, UsageError, type FlagSpec } from "../lib/args.ts";
import { DomainError } from "../lib/errors.ts";
import { parseRfc3339 } from "../lib/formats.ts";
import { createLogger } from "../lib/log.ts";

type Out = { write(s: string): void };

const COMMON: FlagSpec = { json: { type: "boolean" }, data: { type: "string" } };

function parse(args: readonly string[], options: FlagSpec, positionals = 0) {
  return parseFlags(args, { ...COMMON, ...options }, positionals);
}

function onOff(value: string | boolean | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "on") return true;
  if (value === "off") return false;
  throw new UsageError(`--${flag} must be on or off, not ${JSON.stringify(value)}`);
}

/** Runs `fn` over the core the settings name, closing it after. */
async function withOpened<C extends AdminCore, T>(
  env: Readonly<Record<string, string | undefined>>,
  data: string | boolean | undefined,
  open: (options: CoreOptions) => C | Promise<C>,
  fn: (core: C) => T | Promise<T>,
): Promise<T> {
  const config = parseConfig(env, { dataDir: typeof data === "string" ? data : undefined });
  // Administrative commands keep stdout for their answer; the core's own log lines go to stderr.
  const log = createLogger({ level: "warn", write: (l) => process.stderr.write(l + "\n") });
  const core = await open({ config, log });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}

/**
 * Organisations, API keys and persons, on either engine (docs/storage.md), for a command that
 * changes them: a missing data folder is created, with its database and master key.
 */
export const withAdminCore = <T>(env: Readonly<Record<string, string | undefined>>, data: string | boolean | undefined, fn: (core: AdminCore) => T | Promise<T>) =>
  withOpened(env, data, openAdminCore, fn);

/**
 * The same for a command that only reads, or changes only what must exist already (an
 * organisation's key): it creates nothing (no data folder, database or master key), and a data
 * folder that does not exist is refused with NoDataFolderError.
 */
export const withExistingAdminCore = <T>(env: Readonly<Record<string, string | undefined>>, data: string | boolean | undefined, fn: (core: AdminCore) => T | Promise<T>) =>
  withOpened(env, data, (options) => openAdminCore({ ...options, mayCreate: false }), fn);

const yes = (b: boolean) => (b ? "on" : "off");
const time = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString());

function orgLine(o: Organisation): string {
  return `${o.id}  ${JSON.stringify(o.name)}  api-access=${yes(o.apiAccess)} addon=${yes(o.addon)} validated=${yes(o.validated)} suspended=${yes(o.suspended)}  domain=${o.domain ?? "-"}  topic=${o.topicId ?? "-"}  created=${time(o.createdAt)}`;
}

/** `--domain`'s value: a DNS name (lowercased), or null for `none`; refused with the reason otherwise. */
function domainFlag(value: string | boolean | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new UsageError("--domain needs a value: a DNS name such as example.org, or none");
  if (value === "none") return null;
  const parsed = parseOrgDomain(value);
  if ("problem" in parsed) throw new UsageError(`--domain ${JSON.stringify(value)}: ${parsed.problem}`);
  return parsed.domain;
}

const rotationJson = (r: KeyRotation) => ({ orgId: r.orgId, keyFingerprint: r.keyFingerprint, replaces: r.replaces, at: time(r.at) });
const rotationLine = (r: KeyRotation) => `${r.orgId}  key=${r.keyFingerprint}  replaces=${r.replaces}  at=${time(r.at)}`;

/**
 * `--since`'s value in ms: an RFC 3339 time with its offset (2026-12-01T10:00:00Z, fractional
 * seconds optional), read by lib/formats.ts `parseRfc3339` as every time in the code base is (an
 * impossible date such as 2026-02-30 is refused, never rolled over into March), not after `now`,
 * not before 1970. Digits below the millisecond are dropped: `since` only moves earlier, never past
 * a record it was meant to cover. Refused before the data folder is opened (exit 2); the service
 * checks the future again against its own clock.
 */
function sinceFlag(value: string | boolean | undefined, now: number): number {
  if (typeof value !== "string") throw new UsageError("--since is required: the time from which the key is compromised, such as 2026-12-01T10:00:00Z");
  const ms = parseRfc3339(value)?.ms;
  if (ms === undefined || ms < 0) throw new UsageError(`--since ${JSON.stringify(value)}: give an RFC 3339 time with its offset, from 1970 on, such as 2026-12-01T10:00:00Z`);
  if (ms > now) throw new UsageError(`--since ${JSON.stringify(value)} is in the future (it is now ${time(now)}): a compromise is declared for what has been signed`);
  return ms;
}

/** `--key`'s value: a key fingerprint, 64 hex digits. */
function fingerprintFlag(value: string | boolean | undefined): Uint8Array | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[0-9a-fA-F]{64}$/.test(value)) throw new UsageError("--key needs a key fingerprint: 64 hex digits");
  return new Uint8Array(Buffer.from(value, "hex"));
}

/** A key as --json shows it: times in RFC 3339, and whether it has expired at `now`. */
function keyJson(k: ApiKeyInfo, now: number) {
  const at = (ms: number | null) => (ms === null ? null : time(ms));
  return { ...k, createdAt: time(k.createdAt), lastUsedAt: at(k.lastUsedAt), revokedAt: at(k.revokedAt), expiresAt: at(k.expiresAt), expired: isExpired(k, now) };
}

function keyLine(k: ApiKeyInfo, now: number): string {
  const expiry = k.expiresAt === null ? "never" : time(k.expiresAt);
  return `${keyPrefix(k)}  org=${k.orgId}  ${k.environment}  scopes=${k.scopes.join(",")}  created=${time(k.createdAt)}  last-used=${time(k.lastUsedAt)}  revoked=${time(k.revokedAt)}  expires=${expiry}  expired=${isExpired(k, now) ? "yes" : "no"}`;
}

/**
 * `--expires`' value in ms (null without the flag): a date YYYY-MM-DD or an RFC 3339 time, after
 * `now`. Anything else is a usage error, found before the data folder is opened.
 */
function expiresFlag(value: string | boolean | undefined, now: number): number | null {
  if (value === undefined) return null;
  try {
    return parseExpiry(String(value), now);
  } catch (e) {
    if (e instanceof DomainError && e.details?.expires !== undefined) throw new UsageError(`--expires ${JSON.stringify(value)}: ${e.details.expires}`);
    throw e;
  }
}

export async function runOrg(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "create": {
      const { values } = parse(rest, { name: { type: "string" }, "api-access": { type: "boolean" }, addon: { type: "boolean" }, validated: { type: "boolean" } });
      if (typeof values.name !== "string") throw new UsageError("--name is required");
      const name = values.name;
      const org = await withAdminCore(env, values.data, (c) =>
        c.organisations.create({ name, apiAccess: values["api-access"] === true, addon: values.addon === true, validated: values.validated === true }, osActor(env)),
      );
      out.write(values.json ? JSON.stringify({ id: org.id }) + "\n" : `${org.id}\n`);
      return 0;
    }
    case "set": {
      const { values, positionals } = parse(
        rest,
        { "api-access": { type: "string" }, addon: { type: "string" }, validated: { type: "string" }, suspended: { type: "string" }, domain: { type: "string" }, name: { type: "string" } },
        1,
      );
      if (values.name !== undefined && typeof values.name !== "string") throw new UsageError("--name needs a value: the organisation's new name");
      const changes: OrgChanges = Object.fromEntries(
        (
          [
            ["apiAccess", onOff(values["api-access"], "api-access")],
            ["addon", onOff(values.addon, "addon")],
            ["validated", onOff(values.validated, "validated")],
            ["suspended", onOff(values.suspended, "suspended")],
            ["domain", domainFlag(values.domain)],
            ["name", values.name],
          ] as const
        ).filter(([, v]) => v !== undefined),
      );
      if (Object.keys(changes).length === 0) throw new UsageError("nothing to change: give --api-access, --addon, --validated or --suspended with on|off, --domain DOMAIN|none, or --name NAME");
      const org = await withAdminCore(env, values.data, (c) => c.organisations.set(positionals[0]!, changes, osActor(env)));
      out.write(values.json ? JSON.stringify(org) + "\n" : orgLine(org) + "\n");
      return 0;
    }
    case "list": {
      const { values } = parse(rest, {});
      const orgs = await withExistingAdminCore(env, values.data, (c) => c.organisations.list());
      out.write(values.json ? JSON.stringify(orgs.map((o) => ({ ...o, createdAt: time(o.createdAt) }))) + "\n" : orgs.map((o) => orgLine(o) + "\n").join(""));
      return 0;
    }
    case "rotate-key": {
      const { values, positionals } = parse(rest, {}, 1);
      const r = await withExistingAdminCore(env, values.data, (c) => c.organisations.rotateKey(positionals[0]!, osActor(env)));
      out.write(values.json ? JSON.stringify(rotationJson(r)) + "\n" : rotationLine(r) + "\n");
      return 0;
    }
    case "key-compromised": {
      const { values, positionals } = parse(rest, { since: { type: "string" }, key: { type: "string" } }, 1);
      const sinceMs = sinceFlag(values.since, Date.now());
      const key = fingerprintFlag(values.key);
      const c = await withExistingAdminCore(env, values.data, (core) =>
        core.organisations.declareKeyCompromised(positionals[0]!, { sinceMs, ...(key === undefined ? {} : { keyFingerprint: key }) }, osActor(env)),
      );
      const json = { orgId: c.orgId, keyFingerprint: c.keyFingerprint, since: time(c.sinceMs), declaredAt: time(c.at), rotation: c.rotation === null ? null : rotationJson(c.rotation) };
      out.write(
        values.json
          ? JSON.stringify(json) + "\n"
          : `${c.orgId}  compromised=${c.keyFingerprint}  since=${json.since}  declared=${json.declaredAt}\n` + (c.rotation === null ? "" : rotationLine(c.rotation) + "\n"),
      );
      return 0;
    }
    default:
      throw new UsageError(
        sub === undefined ? "org needs a subcommand: create, set, list, rotate-key or key-compromised" : `unknown org subcommand "${sub}": use create, set, list, rotate-key or key-compromised`,
      );
  }
}

/** `docverify seal rotate-key`: a new service seal key (records/seal-rotation.ts). */
export async function runSeal(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "rotate-key") {
    throw new UsageError(sub === undefined || sub.startsWith("-") ? "seal needs a subcommand: rotate-key" : `unknown seal subcommand "${sub}": use rotate-key`);
  }
  const { values } = parse(rest, {});
  const actor = osActor(env);
  const r = await withAdminCore(env, values.data, (c) =>
    createSealRotation({
      store: c.store,
      signer: c.signer,
      clock: c.clock,
      audit: (tx, t, at, e) => audit(tx, t, at, { actor, action: "seal.key.rotate", subjectType: "seal_key", subjectId: (e.after as { keyFingerprint: string }).keyFingerprint, ...e }),
    }).rotate(),
  );
  const json = { keyFingerprint: r.keyFingerprint, replaces: r.replaces, at: time(r.at), organisations: r.organisations };
  out.write(values.json ? JSON.stringify(json) + "\n" : `seal  key=${r.keyFingerprint}  replaces=${r.replaces}  at=${json.at}  topics=${r.organisations}\n`);
  return 0;
}

export async function runKey(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "mint": {
      const { values } = parse(rest, { org: { type: "string" }, env: { type: "string" }, revoke: { type: "boolean" }, expires: { type: "string" } });
      if (typeof values.org !== "string") throw new UsageError("--org is required");
      if (values.env !== "live" && values.env !== "test") throw new UsageError("--env is required and must be live or test");
      const orgId = values.org;
      const environment = values.env;
      const expiresAt = expiresFlag(values.expires, Date.now());
      // The service checks the expiry again, against its clock a moment later (exit 1 if it passed meanwhile).
      const k = await withAdminCore(env, values.data, (c) => c.apiKeys.mint({ orgId, environment, revoke: values.revoke === true, expiresAt }, osActor(env)));
      const expires = k.expiresAt === null ? "never expires" : `expires ${time(k.expiresAt)}`;
      if (values.json) {
        out.write(JSON.stringify({ key: k.key, keyId: k.keyId, environment: k.environment, scopes: k.scopes, expiresAt: k.expiresAt === null ? null : time(k.expiresAt) }) + "\n");
      } else {
        out.write(`${k.key}\n`);
        process.stderr.write(`This key is shown once; copy it now. Key id ${k.keyId}, ${k.environment}, scopes: ${k.scopes.join(" ")}, ${expires}\n`);
      }
      return 0;
    }
    case "list": {
      const { values } = parse(rest, { org: { type: "string" } });
      const { keys, now } = await withExistingAdminCore(env, values.data, async (c) => {
        if (typeof values.org === "string") await c.organisations.get(values.org);
        return { keys: await c.apiKeys.list(typeof values.org === "string" ? { orgId: values.org } : {}), now: c.clock.now() };
      });
      out.write(values.json ? JSON.stringify(keys.map((k) => keyJson(k, now))) + "\n" : keys.map((k) => keyLine(k, now) + "\n").join(""));
      return 0;
    }
    case "revoke": {
      const { values, positionals } = parse(rest, {}, 1);
      const { k, now } = await withAdminCore(env, values.data, async (c) => ({ k: await c.apiKeys.revoke(positionals[0]!, osActor(env)), now: c.clock.now() }));
      out.write(values.json ? JSON.stringify(keyJson(k, now)) + "\n" : `revoked ${keyPrefix(k)}\n`);
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? "key needs a subcommand: mint, list or revoke" : `unknown key subcommand "${sub}": use mint, list or revoke`);
  }
}

/** `publicUrl`: the base of enrolment links (enrolment-url.ts); listing and suspending make none. */
const personsOf = (c: AdminCore, publicUrl = c.config.publicUrl): Persons => createPersons({ store: c.store, clock: c.clock, publicUrl });

function personJson(p: Person) {
  return { ...p, createdAt: time(p.createdAt), enrolledAt: p.enrolledAt === null ? null : time(p.enrolledAt) };
}

function personLine(p: Person): string {
  return `${p.id}  org=${p.orgId}  ${JSON.stringify(p.name)}  ${p.email}  enrolled=${time(p.enrolledAt)}  suspended=${yes(p.suspended)}  created=${time(p.createdAt)}  identity=${JSON.stringify(p.identityEvidence)}`;
}

/**
 * The link is a secret shown once: on stdout only, never in a log line. `notice` (stderr, with
 * --json too): what the administrator should know about its address when DOCVERIFY_PUBLIC_URL is
 * not set.
 */
function writeLink(out: Out, json: boolean, link: EnrolmentLink, name: string, notice: string | null): void {
  if (json) {
    out.write(JSON.stringify({ id: link.personId, enrolUrl: link.enrolUrl, expiresAt: time(link.expiresAt) }) + "\n");
  } else {
    out.write(`${link.enrolUrl}\n`);
    process.stderr.write(`This enrolment link is shown once; send it to ${JSON.stringify(name)} now. It works once, until ${time(link.expiresAt)}. Person id ${link.personId}.\n`);
  }
  if (notice !== null) process.stderr.write(`${notice}\n`);
}

export async function runPerson(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "add": {
      const { values } = parse(rest, { org: { type: "string" }, name: { type: "string" }, email: { type: "string" }, identity: { type: "string" } });
      for (const flag of ["org", "name", "email", "identity"] as const) {
        if (typeof values[flag] !== "string") throw new UsageError(`--${flag} is required`);
      }
      const input = { orgId: values.org as string, name: values.name as string, email: values.email as string, identity: values.identity as string };
      const { person, link, notice } = await withAdminCore(env, values.data, async (c) => {
        const base = enrolmentBase(c.config);
        return { ...(await personsOf(c, base.url).add(input, osActor(env))), notice: base.notice };
      });
      writeLink(out, values.json === true, link, person.name, notice);
      return 0;
    }
    case "list": {
      const { values } = parse(rest, { org: { type: "string" } });
      const list = await withExistingAdminCore(env, values.data, (c) => personsOf(c).list(typeof values.org === "string" ? { orgId: values.org } : {}));
      out.write(values.json ? JSON.stringify(list.map(personJson)) + "\n" : list.map((p) => personLine(p) + "\n").join(""));
      return 0;
    }
    case "suspend": {
      const { values, positionals } = parse(rest, {}, 1);
      const p = await withAdminCore(env, values.data, (c) => personsOf(c).suspend(positionals[0]!, osActor(env)));
      out.write(values.json ? JSON.stringify(personJson(p)) + "\n" : `suspended ${p.id} ${JSON.stringify(p.name)}\n`);
      return 0;
    }
    case "link": {
      const { values, positionals } = parse(rest, {}, 1);
      const { link, name, notice } = await withAdminCore(env, values.data, async (c) => {
        const base = enrolmentBase(c.config);
        const persons = personsOf(c, base.url);
        const issued = await persons.issueLink(positionals[0]!, osActor(env));
        return { link: issued, name: (await persons.get(issued.personId)).name, notice: base.notice };
      });
      writeLink(out, values.json === true, link, name, notice);
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? "person needs a subcommand: add, list, suspend or link" : `unknown person subcommand "${sub}": use add, list, suspend or link`);
  }
}
