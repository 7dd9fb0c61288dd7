/**
 * Verification's reads (verification/ports.ts `VerificationReads`) on PostgreSQL: the statements
 * of verification-statements.ts in PostgreSQL's dialect, awaited; the keys, organisations and
 * persons a verification needs in one statement; a large hash in one REPEATABLE READ snapshot.
 * Nothing is kept in memory here. Loaded only by the PostgreSQL path (postgres/drivers.ts); even so it
 * imports pg-store.ts for its types only.
 */
import type { ContextFound, KeyRow, LargeHashRead, OrgStanding, VerificationReads } from "../../verification/ports.ts";
import type { PostgresStore } from "../pg-store.ts";
import { firstRow, q, rows, type Op } from "../store.ts";
import { selectLargeHash, VERDICT_CLASSES, type ClassHead } from "../verification-large-hash.ts";
import { CLASS_HEAD, COMPROMISED_KEYS, COUNTER_VALUE, NEWEST_ACCEPTED, RECORD_HEADS_BY_HASH, RECORDS_BY_HASH, RECORDS_BY_IDS, VERIFY_CONTEXT } from "../verification-statements.ts";

/**
 * A hash with more than `MAX_MATCHES` records, in one snapshot: the counter, the three class
 * heads, the rows the merge chose read whole (one statement), and when no anchored record decides,
 * the newest awaiting consensus.
 */
function* readLargeHash(docHash: string): Op<LargeHashRead> {
  const gen = (yield* q(firstRow(COUNTER_VALUE)))?.value ?? null;
  const heads: ClassHead[][] = [];
  for (const c of VERDICT_CLASSES) heads.push(yield* q(rows(CLASS_HEAD, docHash, c)));
  const { page, beyond } = selectLargeHash(heads);
  const chosen = [...page, ...beyond];
  const found = chosen.length === 0 ? [] : yield* q(rows(RECORDS_BY_IDS, JSON.stringify(chosen.map((h) => h.rid))));
  const byId = new Map(found.map((r) => [r.id, r]));
  const whole = (head: ClassHead) => {
    const row = byId.get(head.rid as string);
    if (row === undefined) throw new Error(`record ${String(head.rid)} vanished inside a read transaction`);
    return row;
  };
  const newest = page.length === 0 ? ((yield* q(firstRow(NEWEST_ACCEPTED, docHash)))?.newest ?? null) : null;
  return { gen, page: page.map(whole), beyond: beyond.map(whole), newest };
}

export function postgresVerificationReads(store: PostgresStore): VerificationReads {
  return {
    interleaves: true,
    recordHeads: (docHash) => store.read(() => q(rows(RECORD_HEADS_BY_HASH, docHash))),
    recordsByHash: (docHash) => store.read(() => q(rows(RECORDS_BY_HASH, docHash))),
    largeHash: (docHash) => store.snapshot(() => readLargeHash(docHash)),
    async context(want): Promise<ContextFound> {
      const keys = new Map<string, KeyRow>();
      const orgs = new Map<string, OrgStanding>();
      const persons = new Map<string, boolean>();
      if (want.keys.length + want.orgs.length + want.persons.length === 0) return { keys, orgs, persons };
      const found = await store.read(() => q(rows(VERIFY_CONTEXT, JSON.stringify(want.keys), JSON.stringify(want.orgs), JSON.stringify(want.persons))));
      for (const row of found) {
        if (row.kind === "k") keys.set(row.ref, { algorithm: row.text!, public_key: row.bytes! });
        else if (row.kind === "o") orgs.set(row.ref, { name: row.text!, suspended: row.suspended! });
        // The first of a key's persons, as SQLite's `.get()` takes.
        else if (!persons.has(row.ref)) persons.set(row.ref, row.suspended !== 0);
      }
      return { keys, orgs, persons };
    },
    compromisedKeys: () =>
      store.read(() => q(rows(COMPROMISED_KEYS))).then((found) => found.map((r) => ({ fingerprint: r.fingerprint, since: Number(r.since), declared_at: Number(r.declared_at), consensus_at: r.consensus_at }))),
    caches: () => [],
  };
}
