/**
 * Organisations: created and changed by administrators on the local machine only. Each gets
 * its own ML-DSA system key at creation, sealed under the master key. Every change writes its
 * audit row in the same transaction.
 */
import { asc, eq } from "drizzle-orm";
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
  readonly createdAt: number;
  readonly topicId: string | null;
}

const MAX_NAME = 200;

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
      };
      await store.write(function* (tx, t) {
        yield* insertSigningKey(tx, t, key, row.createdAt);
        yield* q(tx.insert(t.organisations).values(row));
        yield* audit(tx, t, row.createdAt, { actor, action: "organisation.create", subjectType: "organisation", subjectId: id, before: null, after: view(row) });
      });
      return view(row);
    },

    set(id: string, changes: Partial<OrgFlags>, actor: string): Promise<Organisation> {
      const at = clock.now();
      return store.write(function* (tx, t) {
        const [row] = yield* q(tx.select().from(t.organisations).where(eq(t.organisations.id, id)));
        if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
        const before = view(row);
        const after = { ...before, ...changes };
        yield* q(
          tx
            .update(t.organisations)
            .set({ apiAccess: after.apiAccess, addon: after.addon, validated: after.validated, suspended: after.suspended })
            .where(eq(t.organisations.id, id)),
        );
        yield* audit(tx, t, at, { actor, action: "organisation.set", subjectType: "organisation", subjectId: id, before, after });
        return after;
      });
    },
  };
}

export type Organisations = ReturnType<typeof createOrganisations>;
