/**
 * Organisations: created and changed by administrators on the local machine only. Each gets
 * its own ML-DSA system key at creation, sealed under the master key. Every change writes its
 * audit row in the same transaction.
 */
import { asc, eq } from "drizzle-orm";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import type { Db } from "../storage/db.ts";
import { organisations, signingKeys } from "../storage/schema.ts";
import { writeAudit } from "./audit.ts";

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

function view(row: typeof organisations.$inferSelect): Organisation {
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

export function createOrganisations(deps: { db: Db; signer: Signer; clock: Clock }) {
  const { db, signer, clock } = deps;

  function get(id: string): Organisation {
    const row = db.select().from(organisations).where(eq(organisations.id, id)).get();
    if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
    return view(row);
  }

  return {
    get,
    list(): Organisation[] {
      return db.select().from(organisations).orderBy(asc(organisations.createdAt), asc(organisations.id)).all().map(view);
    },

    create(input: { name: string } & Partial<OrgFlags>, actor: string): Organisation {
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
      db.transaction((tx) => {
        tx.insert(signingKeys)
          .values({
            fingerprint: row.systemKeyFingerprint,
            algorithm: key.algorithm,
            publicKey: Buffer.from(key.publicKey),
            purpose: key.purpose,
            sealedSeed: Buffer.from(key.sealedSeed),
            createdAt: row.createdAt,
          })
          .run();
        tx.insert(organisations).values(row).run();
        writeAudit(tx, row.createdAt, { actor, action: "organisation.create", subjectType: "organisation", subjectId: id, before: null, after: view(row) });
      }, { behavior: "immediate" });
      return view(row);
    },

    set(id: string, changes: Partial<OrgFlags>, actor: string): Organisation {
      // IMMEDIATE: take the write lock before reading, so a concurrent writer cannot make the
      // read-then-write upgrade fail with SQLITE_BUSY.
      return db.transaction((tx) => {
        const row = tx.select().from(organisations).where(eq(organisations.id, id)).get();
        if (row === undefined) throw new DomainError("NOT_FOUND", `No organisation ${id}.`);
        const before = view(row);
        const after = { ...before, ...changes };
        tx.update(organisations)
          .set({ apiAccess: after.apiAccess, addon: after.addon, validated: after.validated, suspended: after.suspended })
          .where(eq(organisations.id, id))
          .run();
        writeAudit(tx, clock.now(), { actor, action: "organisation.set", subjectType: "organisation", subjectId: id, before, after });
        return after;
      }, { behavior: "immediate" });
    },
  };
}

export type Organisations = ReturnType<typeof createOrganisations>;
