/**
 * Organisations: created and changed by administrators on the local machine only. Each gets
 * its own ML-DSA system key at creation, sealed under the master key. Every change writes its
 * audit row in the same transaction. A change of domain (decisions §13) also raises the
 * organisation's announcement generation in that transaction: the anchor loop then announces
 * its key again, with the new domain, exactly once (anchoring/queue.ts).
 */
import { asc, eq, sql } from "drizzle-orm";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { q, type Store, type Tables } from "../storage/store.ts";
import { insertSigningKey } from "../storage/signing-keys.ts";
import { audit } from "./audit.ts";

export interface OrgFlags {
  readonly apiAccess: boolean;
  readonly addon: boolean;
  readonly validated: boolean;
  readonly suspended: boolean;
}

export interface Organisation extends OrgFlags {
  readonly id: string;
  readonly name: string;
  /** The DNS name its key announcements carry (decisions §13), or null. */
  readonly domain: string | null;
  readonly createdAt: number;
  readonly topicId: string | null;
}

/** What `set` may change: the flags and the domain (null clears it). */
export interface OrgChanges extends Partial<OrgFlags> {
  readonly domain?: string | null;
}

const MAX_NAME = 200;
const MAX_DOMAIN = 253;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * `input` as an organisation's domain (lowercased), or why it cannot be one: a DNS host name of at
 * least two labels, each 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen,
 * the last starting with a letter, 253 characters at most, no trailing dot; an internationalised name in its `xn--` form (whose
 * labels must decode); never an IP address, a port, a scheme or a path. A verifier fetches
 * `https://DOMAIN/.well-known/docverify.json` and asks `_docverify.DOMAIN` (decisions §13): both
 * need a plain host name.
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

  return {
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

    async create(input: { name: string } & Partial<OrgFlags>, actor: string): Promise<Organisation> {
      const name = validateOrgName(input.name);
      const id = Bun.randomUUIDv7();
      // Key generation needs the master key; without it this throws 503 before anything is written.
      const key = signer.generateKey(`org:${id}`);
      const row = {
        id,
        name,
        apiAccess: input.apiAccess ?? false,
        addon: input.addon ?? false,
        validated: input.validated ?? false,
        suspended: input.suspended ?? false,
        createdAt: clock.now(),
        systemKeyFingerprint: Buffer.from(key.fingerprint),
        topicId: null,
        domain: null,
        announcementGeneration: 0,
      };
      await store.write(function* (tx, t) {
        yield* insertSigningKey(tx, t, key, row.createdAt);
        yield* q(tx.insert(t.organisations).values(row));
        yield* audit(tx, t, row.createdAt, { actor, action: "organisation.create", subjectType: "organisation", subjectId: id, before: null, after: view(row) });
      });
      return view(row);
    },

    /**
     * Changes flags and the domain (validated here too: null clears it). A domain that differs
     * from the stored one raises the announcement generation in the same transaction.
     */
    set(id: string, changes: OrgChanges, actor: string): Promise<Organisation> {
      const at = clock.now();
      const domain = changes.domain === undefined || changes.domain === null ? changes.domain : validateOrgDomain(changes.domain);
      return store.write(function* (tx, t) {
        const [row] = yield* q(tx.select().from(t.organisations).where(eq(t.organisations.id, id)));
        if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
        const before = view(row);
        const { domain: _asGiven, ...flags } = changes;
        const after: Organisation = { ...before, ...flags, ...(domain !== undefined ? { domain } : {}) };
        const reannounce = after.domain !== before.domain;
        yield* q(
          tx
            .update(t.organisations)
            .set({
              apiAccess: after.apiAccess,
              addon: after.addon,
              validated: after.validated,
              suspended: after.suspended,
              domain: after.domain,
              ...(reannounce ? { announcementGeneration: sql`${t.organisations.announcementGeneration} + 1` } : {}),
            })
            .where(eq(t.organisations.id, id)),
        );
        yield* audit(tx, t, at, { actor, action: "organisation.set", subjectType: "organisation", subjectId: id, before, after });
        return after;
      });
    },
  };
}

export type Organisations = ReturnType<typeof createOrganisations>;
