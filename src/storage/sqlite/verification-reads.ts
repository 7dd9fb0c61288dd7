/**
 * Verification's reads (verification/ports.ts `VerificationReads`) on the embedded SQLite:
 * synchronous, over statements prepared on the connection, the texts of verification-statements.ts.
 *
 * The hot path uses bun:sqlite prepared statements directly, rows as storage/record-row.ts names
 * them: measured, drizzle's row mapping and a LEFT JOIN each cost too much here. One indexed
 * lookup (records_doc_hash) per request when the record memo answers, two when it does not.
 *
 * A hash's record heads are kept as last read, under the data version they were read at
 * (storage/data-version.ts): answered again only while nothing was committed since, by any
 * connection of any process (the log's writer thread's commits, log rows only, leave
 * `others()` unchanged). The rows are only read from: every check and the verdict are still made
 * from them on every request.
 */
import type { CompromisedKeyRow, ContextFound, HashRow, HeadRow, KeyRow, LargeHashRead, OrgStanding, SyncVerificationReads, VerifyRow } from "../../verification/ports.ts";
import { approxBytes, Lru, namedCache, stringBytes } from "../../lib/lru.ts";
import { readKept, type KeptRead } from "../data-version.ts";
import type { SqliteStore } from "../store.ts";
import { onFirstUse } from "./first-use.ts";
import { selectLargeHash, VERDICT_CLASSES, type ClassHead } from "../verification-large-hash.ts";
import {
  CLASS_HEAD,
  COUNTER_VALUE,
  COMPROMISED_KEYS,
  KEY_BY_FINGERPRINT,
  NEWEST_ACCEPTED,
  ORG_STANDING,
  PERSON_SUSPENDED,
  RECORD_HEADS_BY_HASH,
  RECORDS_BY_HASH,
  SQLITE_RECORD_BY_ROWID,
} from "../verification-statements.ts";

/** The SQLite texts, as the tests of their query plans read them. */
export const RECORDS_BY_HASH_SQL = RECORDS_BY_HASH.sqlite;
export const RECORD_HEADS_BY_HASH_SQL = RECORD_HEADS_BY_HASH.sqlite;
export const CLASS_HEAD_SQL = CLASS_HEAD.sqlite;
export const RECORD_BY_ROWID_SQL = SQLITE_RECORD_BY_ROWID;
export const NEWEST_ACCEPTED_SQL = NEWEST_ACCEPTED.sqlite;

/** Hashes whose record heads are kept while the database is unchanged, at most (about 1 KB each). */
export const HEADS_KEPT = 4096;
/** The record heads' byte budget. */
export const HEADS_BYTES = 4 * 1024 * 1024;

const fromHex = (hex: string) => Buffer.from(hex, "hex");

export function sqliteVerificationReads(store: SqliteStore): SyncVerificationReads {
  const client = store.db.$client;
  const recordHeadsByHash = onFirstUse(() => client.prepare<HeadRow, [string]>(RECORD_HEADS_BY_HASH.sqlite));
  const recordsByHash = onFirstUse(() => client.prepare<HashRow, [string]>(RECORDS_BY_HASH.sqlite));
  const classHead = onFirstUse(() => client.prepare<ClassHead, [string, number]>(CLASS_HEAD.sqlite));
  const recordByRowid = onFirstUse(() => client.prepare<VerifyRow, [number]>(SQLITE_RECORD_BY_ROWID));
  const newestAcceptedOf = onFirstUse(() => client.prepare<{ newest: number | null }, [string]>(NEWEST_ACCEPTED.sqlite));
  const changeCounter = onFirstUse(() => client.prepare<{ value: number | null }, []>(COUNTER_VALUE.sqlite));
  const orgById = onFirstUse(() => client.prepare<OrgStanding, [string]>(ORG_STANDING.sqlite));
  const personSuspendedByKey = onFirstUse(() => client.prepare<{ suspended: number }, [Uint8Array]>(PERSON_SUSPENDED.sqlite));
  const keyByFingerprint = onFirstUse(() => client.prepare<KeyRow, [Uint8Array]>(KEY_BY_FINGERPRINT.sqlite));
  const compromisedKeys = onFirstUse(() => client.prepare<CompromisedKeyRow, []>(COMPROMISED_KEYS.sqlite));
  const headsKept = new Lru<string, KeptRead<readonly HeadRow[]>>({ maxEntries: HEADS_KEPT, maxBytes: HEADS_BYTES, bytesOf: (hash, kept) => stringBytes(hash) + approxBytes(kept) });

  /**
   * One read transaction, so the rows read whole are those the index placed (another connection,
   * the admin command line, may revoke a record meanwhile).
   */
  const largeHash = client.transaction((docHash: string): LargeHashRead => {
    const gen = changeCounter().get()?.value ?? null;
    const { page, beyond } = selectLargeHash(VERDICT_CLASSES.map((c) => classHead().all(docHash, c)));
    const whole = (head: ClassHead) => {
      const row = recordByRowid().get(head.rid as number);
      if (row === null) throw new Error(`record at rowid ${head.rid} vanished inside a read transaction`);
      return row;
    };
    const newest = page.length === 0 ? (newestAcceptedOf().get(docHash)?.newest ?? null) : null;
    return { gen, page: page.map(whole), beyond: beyond.map(whole), newest };
  });

  return {
    interleaves: false,
    recordHeads: (docHash) => readKept(headsKept, store.version.others(), docHash, () => recordHeadsByHash().all(docHash)),
    recordsByHash: (docHash) => recordsByHash().all(docHash),
    largeHash: (docHash) => largeHash(docHash),
    context(want): ContextFound {
      const keys = new Map<string, KeyRow>();
      const orgs = new Map<string, OrgStanding>();
      const persons = new Map<string, boolean>();
      for (const fp of want.keys) {
        const row = keyByFingerprint().get(fromHex(fp));
        if (row !== null) keys.set(fp, row);
      }
      for (const id of want.orgs) {
        const row = orgById().get(id);
        if (row !== null) orgs.set(id, row);
      }
      for (const fp of want.persons) {
        const row = personSuspendedByKey().get(fromHex(fp));
        if (row !== null) persons.set(fp, row.suspended !== 0);
      }
      return { keys, orgs, persons };
    },
    compromisedKeys: () => compromisedKeys().all(),
    caches: () => [namedCache("verification_record_heads", headsKept)],
  };
}
