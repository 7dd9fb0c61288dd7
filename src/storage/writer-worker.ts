/**
 * The writer thread's worker (src/storage/writer-thread.ts): its own connection to the service's
 * database file, opened with the service's pragmas (WAL, synchronous FULL, busy timeout), and one
 * IMMEDIATE transaction per batch it is sent, committed (and so synced) before it answers. Batches
 * are taken one at a time, in the order they were posted. It knows no table: a batch names its
 * statement, one of those the main thread registered when it opened the thread.
 */
import { Database } from "bun:sqlite";
import { isBusy } from "../lib/storage-faults.ts";
import { commitClaimer } from "./data-version.ts";
import { PRAGMAS } from "./db-pragmas.ts";
import type { WorkerReply, WorkerRequest } from "./writer-thread.ts";

declare const self: Worker;

/** SQLite's default automatic checkpoint threshold (`wal_autocheckpoint`), in WAL frames. */
const CHECKPOINT_FRAMES = 1000;

let db: Database | null = null;
const statements = new Map<string, { run(...values: unknown[]): unknown }>();
let writeBatch: ((input: { sql: string; rows: readonly (readonly unknown[])[] }) => void) | null = null;

function reply(message: WorkerReply): void {
  self.postMessage(message);
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const m = event.data;
  switch (m.type) {
    case "open": {
      try {
        const opened = new Database(m.path, { readwrite: true, create: false, strict: true });
        for (const pragma of PRAGMAS) opened.run(pragma);
        for (const sql of m.statements) statements.set(sql, opened.prepare(sql));
        // Each commit claimed (storage/data-version.ts, "Claimed commits"): the main connection's
        // reads of other tables stay kept across this thread's log batches.
        const claimer = m.claims === undefined ? null : commitClaimer(m.path, m.claims);
        // This connection checkpoints after settling its claim, not inside COMMIT (where SQLite's
        // automatic checkpoint would run, and the claim would stay unsettled while it copies
        // pages): the same threshold, 1,000 frames, checked on the header the claim read.
        if (claimer !== null) opened.run("PRAGMA wal_autocheckpoint = 0");
        const batch = opened.transaction(({ sql, rows }: { sql: string; rows: readonly (readonly unknown[])[] }) => {
          claimer?.begin(); // after BEGIN IMMEDIATE: the write lock is held
          const statement = statements.get(sql);
          if (statement === undefined) throw new Error("statement not registered with the writer thread");
          for (const row of rows) statement.run(...row);
        }).immediate;
        writeBatch = (input) => {
          try {
            batch(input);
          } catch (e) {
            claimer?.failed();
            throw e;
          }
          const frames = claimer?.committed() ?? null;
          if (frames !== null && frames >= CHECKPOINT_FRAMES) {
            // After the commit: its rows are durable whatever happens here, and, as with SQLite's
            // own automatic checkpoint, a checkpoint that cannot run now is simply tried again later.
            try {
              opened.run("PRAGMA wal_checkpoint(PASSIVE)");
            } catch {
              // a later batch checkpoints
            }
          }
        };
        db = opened;
        reply({ type: "opened" });
      } catch (e) {
        reply({ type: "open-failed", message: e instanceof Error ? e.message : String(e) });
      }
      return;
    }
    case "batch": {
      if (db === null || writeBatch === null) {
        reply({ type: "failed", id: m.id, busy: false, message: "the writer thread's database is not open" });
        return;
      }
      try {
        writeBatch({ sql: m.sql, rows: m.json !== undefined ? (JSON.parse(m.json) as unknown[][]) : (m.rows ?? []) });
        reply({ type: "committed", id: m.id });
      } catch (e) {
        reply({ type: "failed", id: m.id, busy: isBusy(e), message: e instanceof Error ? e.message : String(e) });
      }
      return;
    }
    case "release": {
      // The service went quiet (lib/idle-release.ts): the pages this connection cached (the log's
      // index pages it wrote, up to the page cache's budget) and this thread's garbage go back to
      // the allocator, which returns them to the system. The next batch reads its pages again.
      try {
        db?.run("PRAGMA shrink_memory");
      } catch {
        // a connection that cannot shrink now keeps its cache; the next quiet period tries again
      }
      Bun.gc(true);
      return;
    }
    case "close": {
      statements.clear();
      db?.close();
      db = null;
      writeBatch = null;
      reply({ type: "closed" });
      return;
    }
  }
};
