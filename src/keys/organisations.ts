/**
 * Organisations: created and changed by administrators on the local machine only. Each gets
 * its own ML-DSA system key at creation, sealed under the master key. Every change writes its
 * audit row in the same transaction. A change of domain (docs/admin.md "The organisation's
 * domain") or of name also raises the organisation's announcement generation in that
 * transaction: the anchor loop then announces its key again, with the new domain and name,
 * exactly once (anchoring/queue.ts).
 *
 * Names are unique per appliance, compared by their key (lib/name-key.ts: NFKC, then lowercased):
 * a create or rename to a name another organisation holds is refused (`NameTakenError`) and
 * changes nothing. The check is made in the write's transaction and backed by the unique index on
 * `organisations.name_key`, so two processes or nodes creating one name at once cannot both win.
 */
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { nameKey } from "../lib/name-key.ts";
import { isUniqueViolation, q, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { insertSigningKey } from "../storage/signing-keys.ts";
import { audit } from "./audit.ts";
import { createOrgKeys } from "./org-keys.ts";

export interface OrgFlags {
  readonly apiAccess: boolean;
  readonly addon: boolean;
  readonly validated: boolean;
  readonly suspended: boolean;
}

export interface Organisation extends OrgFlags {
  readonly id: string;
  readonly name: string;
  /** The DNS name its key announcements carry, or null. */
  readonly domain: string | null;
  readonly createdAt: number;
  readonly topicId: string | null;
}

/** What `set` may change: the flags, the name and the domain (null clears it). */
export interface OrgChanges extends Partial<OrgFlags> {
  readonly name?: string;
  readonly domain?: string | null;
}

/**
 * A create or rename refused: another organisation holds the name (by its key, lib/name-key.ts).
 * `holder` is that organisation, as stored. VALIDATION_FAILED, naming `name`.
 */
export class NameTakenError extends DomainError {
  constructor(
    readonly asked: string,
    readonly holder: { readonly id: string; readonly name: string },
  ) {
    const same = asked === holder.name ? "" : `; ${JSON.stringify(asked)} is the same name (names are compared ignoring case, width and Unicode form)`;
    super("VALIDATION_FAILED", `an organisation named ${JSON.stringify(holder.name)} already exists (${holder.id})${same}`, {
      name: `an organisation named ${JSON.stringify(holder.name)} already exists (${holder.id})`,
    });
  }
}

/** Organisations that share one name (by its key): the first created, then the others. */
export interface SharedName {
  readonly name: string;
  readonly organisations: readonly { readonly id: string; readonly name: string; readonly createdAt: number }[];
}

const MAX_NAME = 200;
const MAX_DOMAIN = 253;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * `input` as an organisation's domain (lowercased), or why it cannot be one: a DNS host name of at
 * least two labels, each 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen,
 * the last starting with a letter, 253 characters at most, no trailing dot; an internationalised name in its `xn--` form (whose
 * labels must decode); never an IP address, a port, a scheme or a path. A verifier fetches
 * `https://DOMAIN/.well-known/docverify.json` and asks `_docverify.DOMAIN` (docs/receipts.md §6):
 * both need a plain host name.
 */
export function parseOrgDomain(input: string): { readonly domain: string } | { readonly problem: string } {
  const problem = (p: string) => ({ problem: p });
  if (input === "") return problem("must not be empty");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return problem("give the host name alone, without a scheme such as https://");
  if (/[/?#]/.test(input)) return problem("give the host name alone, without a path");
  if (input.startsWith("[") || (input.match(/:/g)?.length ?? 0) > 1) return problem("an IP address is not a domain: give the organisation's DNS name");
  if (input.includes(":")) return problem("give the host name alone, without a port");
  if (/\s/.test(input)) return problem("must not contain spaces");
  if (/[^\x21-\x7e]/.test(input)) {
    let ascii: string | null = null;
    try {
      ascii = new URL(`http://${input}/`).hostname;
    } catch {
      /* not a name URL parsing takes either */
    }
    return problem(`give an internationalised name in its xn-- form${ascii !== null && /^[a-z0-9.-]+$/.test(ascii) ? ` (${ascii})` : ""}`);
  }
  const domain = input.toLowerCase();
  if (domain.endsWith(".")) return problem("give it without the trailing dot");
  if (domain.length > MAX_DOMAIN) return problem(`must be at most ${MAX_DOMAIN} characters`);
  const labels = domain.split(".");
  if (labels.every((l) => /^(0x[0-9a-f]*|\d+)$/.test(l))) return problem("an IP address is not a domain: give the organisation's DNS name");
  if (!/^[a-z]/.test(labels.at(-1)!) && labels.at(-1) !== "") return problem("its last label (the top-level domain) must start with a letter");
  if (labels.length < 2) return problem("must have at least two labels (example.org), not a single name");
  for (const label of labels) {
    if (label === "") return problem("must not have an empty label (two dots in a row, or a leading dot)");
    if (label.length > 63) return problem(`label "${label.slice(0, 20)}…" is longer than 63 characters`);
    if (!LABEL_RE.test(label)) {
      return problem(
        /^-|-$/.test(label) ? `label "${label}" must not start or end with a hyphen` : `label "${label}" may hold only letters, digits and hyphens`,
      );
    }
    if (label.slice(2, 4) === "--" && !label.startsWith("xn--")) return problem(`label "${label}": only xn-- labels may have hyphens in the third and fourth places`);
  }
  // An xn-- label must be valid Punycode: URL parsing checks it (and gives back the same name).
  let parsed: string | null = null;
  try {
    parsed = new URL(`http://${domain}/`).hostname;
  } catch {
    /* refused below */
  }
  if (parsed !== domain) return problem("is not a valid internationalised name: an xn-- label does not decode");
  return { domain };
}

/** `input` as an organisation's domain, or VALIDATION_FAILED naming `domain`. */
export function validateOrgDomain(input: string): string {
  const parsed = parseOrgDomain(input);
  if ("problem" in parsed) throw invalid("domain", parsed.problem);
  return parsed.domain;
}

/** Names are shown to verifiers as `signerOrg`: printable text only. */
export function validateOrgName(name: string): string {
  const n = name.trim();
  if (n === "") throw invalid("name", "must not be empty");
  if ([...n].length > MAX_NAME) throw invalid("name", `must be at most ${MAX_NAME} characters`);
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(n.replace(/[\u200c\u200d]/g, ""))) {
    throw invalid("name", "must not contain control or invisible formatting characters");
  }
  return n;
}

/** Inside a write: the organisation other than `self` whose name has `key`, if any. */
function* holderOf(tx: StoreDb, t: Tables, key: string, self: string | null) {
  const o = t.organisations;
  const [holder] = yield* q(
    tx
      .select({ id: o.id, name: o.name })
      .from(o)
      .where(self === null ? eq(o.nameKey, key) : and(eq(o.nameKey, key), ne(o.id, self))),
  );
  return holder;
}

function view(row: Tables["organisations"]["$inferSelect"]): Organisation {
  return {
    id: row.id,
    name: row.name,
    apiAccess: row.apiAccess,
    addon: row.addon,
    validated: row.validated,
    suspended: row.suspended,
    domain: row.domain,
    createdAt: row.createdAt,
    topicId: row.topicId,
  };
}

export function createOrganisations(deps: { store: Store; signer: Signer; clock: Clock }) {
  const { store, signer, clock } = deps;

  /**
   * What a write that gave `name` refused with: a unique violation of the name key (another
   * process or node took the name between this write's check and its insert; the check itself
   * throws NameTakenError) becomes NameTakenError naming the holder; anything else is as it was.
   */
  async function explained(e: unknown, name: string, key: string, self: string | null): Promise<unknown> {
    if (!isUniqueViolation(e)) return e;
    const holder = await store.read(function* (db, t) {
      return yield* holderOf(db, t, key, self);
    });
    return holder === undefined ? e : new NameTakenError(name, holder);
  }

  return {
    /** Key rotation and compromise (org-keys.ts). */
    ...createOrgKeys({ store, signer, clock }),

    /** The organisation `id`; NOT_FOUND when there is none. */
    get(id: string): Promise<Organisation> {
      return store.read(function* (db, t) {
        const [row] = yield* q(db.select().from(t.organisations).where(eq(t.organisations.id, id)));
        if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
        return view(row);
      });
    },

    list(): Promise<Organisation[]> {
      return store.read(function* (db, t) {
        const rows = yield* q(db.select().from(t.organisations).orderBy(asc(t.organisations.createdAt), asc(t.organisations.id)));
        return rows.map(view);
      });
    },

    /** The organisation holding `name` (compared by its key, lib/name-key.ts), if any. */
    named(name: string): Promise<{ readonly id: string; readonly name: string } | undefined> {
      const key = nameKey(name.trim());
      return store.read(function* (db, t) {
        return yield* holderOf(db, t, key, null);
      });
    },

    /**
     * Organisations that share a name: a data folder an earlier release wrote may hold a name
     * twice (storage/org-name-keys.ts kept both). Empty once each has been renamed.
     */
    sharingNames(): Promise<SharedName[]> {
      return store.read(function* (db, t) {
        const o = t.organisations;
        const rows = yield* q(db.select({ id: o.id, name: o.name, createdAt: o.createdAt }).from(o).orderBy(asc(o.createdAt), asc(o.id)));
        const byKey = new Map<string, { id: string; name: string; createdAt: number }[]>();
        for (const row of rows) {
          const key = nameKey(row.name);
          byKey.set(key, [...(byKey.get(key) ?? []), row]);
        }
        return [...byKey.values()].filter((g) => g.length > 1).map((g) => ({ name: g[0]!.name, organisations: g }));
      });
    },

    /** A new organisation; NameTakenError when another holds the name. */
    async create(input: { name: string } & Partial<OrgFlags>, actor: string): Promise<Organisation> {
      const name = validateOrgName(input.name);
      const key = nameKey(name);
      // Refused before a key is generated when the name is taken already; checked again below,
      // in the write, against a create racing this one.
      const taken = await store.read(function* (db, t) {
        return yield* holderOf(db, t, key, null);
      });
      if (taken !== undefined) throw new NameTakenError(name, taken);
      const id = Bun.randomUUIDv7();
      // Key generation needs the master key; without it this throws 503 before anything is written.
      const systemKey = signer.generateKey(`org:${id}`);
      const row = {
        id,
        name,
        apiAccess: input.apiAccess ?? false,
        addon: input.addon ?? false,
        validated: input.validated ?? false,
        suspended: input.suspended ?? false,
        createdAt: clock.now(),
        systemKeyFingerprint: Buffer.from(systemKey.fingerprint),
        topicId: null,
        domain: null,
        announcementGeneration: 0,
        nameKey: key,
      };
      try {
        await store.write(function* (tx, t) {
          const holder = yield* holderOf(tx, t, row.nameKey, null);
          if (holder !== undefined) throw new NameTakenError(name, holder);
          yield* insertSigningKey(tx, t, systemKey, row.createdAt);
          yield* q(tx.insert(t.organisations).values(row));
          yield* audit(tx, t, row.createdAt, { actor, action: "organisation.create", subjectType: "organisation", subjectId: id, before: null, after: view(row) });
        });
      } catch (e) {
        throw await explained(e, name, row.nameKey, null);
      }
      return view(row);
    },

    /**
     * Changes flags, the name and the domain (each validated here too: a null domain clears it).
     * A name that another organisation holds is refused (NameTakenError). A domain or a name that
     * differs from the stored one raises the announcement generation in the same transaction: the
     * key is announced again, with both.
     */
    async set(id: string, changes: OrgChanges, actor: string): Promise<Organisation> {
      const at = clock.now();
      const domain = changes.domain === undefined || changes.domain === null ? changes.domain : validateOrgDomain(changes.domain);
      const name = changes.name === undefined ? undefined : validateOrgName(changes.name);
      const key = name === undefined ? undefined : nameKey(name);
      try {
        return await store.write(function* (tx, t) {
          const [row] = yield* q(tx.select().from(t.organisations).where(eq(t.organisations.id, id)));
          if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
          const before = view(row);
          const { domain: _domainAsGiven, name: _nameAsGiven, ...flags } = changes;
          const after: Organisation = { ...before, ...flags, ...(domain !== undefined ? { domain } : {}), ...(name !== undefined ? { name } : {}) };
          const renamed = after.name !== before.name;
          if (renamed) {
            const holder = yield* holderOf(tx, t, key!, id);
            if (holder !== undefined) throw new NameTakenError(after.name, holder);
          }
          const reannounce = after.domain !== before.domain || renamed;
          yield* q(
            tx
              .update(t.organisations)
              .set({
                apiAccess: after.apiAccess,
                addon: after.addon,
                validated: after.validated,
                suspended: after.suspended,
                domain: after.domain,
                ...(renamed ? { name: after.name, nameKey: key! } : {}),
                ...(reannounce ? { announcementGeneration: sql`${t.organisations.announcementGeneration} + 1` } : {}),
              })
              .where(eq(t.organisations.id, id)),
          );
          yield* audit(tx, t, at, { actor, action: "organisation.set", subjectType: "organisation", subjectId: id, before, after });
          return after;
        });
      } catch (e) {
        throw name === undefined ? e : await explained(e, name, key!, id);
      }
    },
  };
}

export type Organisations = ReturnType<typeof createOrganisations>;
