/**
 * The PostgreSQL store (store.ts says what a store is): every query of an operation awaited, a
 * write operation in one SERIALIZABLE transaction, run again from the start when PostgreSQL
 * reports a serialization failure or a deadlock. Loaded only when DOCVERIFY_DATABASE_URL is set.
 */
import { SQL as BunSQL } from "bun";
import { drizzle as drizzlePg } from "drizzle-orm/bun-sql";
import { DomainError } from "../lib/errors.ts";
import { isUnavailable, sqlState } from "../lib/storage-faults.ts";
import * as pgSchema from "./pg-schema.ts";
import { databaseError, StatementStep, type Body, type Op, type StepMode, type Store, type StoreDb } from "./store.ts";

/**
 * What a failed operation rejects with: the database's own error, or 503 when the database is not
 * there (lib/storage-faults.ts isUnavailable: refused, closed, timed out, shutting down or starting
 * up; Bun.SQL reconnects by itself once the server answers again, so a node recovers without a
 * restart) (the error kept as `cause`, so the HTTP layer logs the fault once: lib/storage-faults.ts).
 * A full disk or a read-only server reaches the HTTP layer as the database's error and is
 * classified there the same way.
 */
export function outward(e: unknown): unknown {
  const error = databaseError(e);
  if (!isUnavailable(error)) return error;
  return Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The database is not answering; retry shortly.", undefined, 2), { cause: error });
}

/** SQLSTATEs after which a transaction is run again from the start. */
const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
const MAX_ATTEMPTS = 20;

export { sqlState };

/**
 * The connection a drizzle transaction runs on (drizzle's bun-sql session keeps Bun's transaction
 * client as `session.client`): statements of the operation must run in the same transaction.
 */
function connectionOf(tx: unknown): BunSQL {
  const client = (tx as { session?: { client?: BunSQL } }).session?.client;
  if (client === undefined) throw new Error("storage: drizzle's transaction has no client (a drizzle upgrade changed its internals)");
  return client;
}

/** Runs a step: a statement through `sql` (the pool, or the transaction's connection), else awaited. */
async function runStep(step: unknown, sql: BunSQL): Promise<unknown> {
  if (!(step instanceof StatementStep)) return step;
  const result = (await sql.unsafe(step.statement.postgres, [...step.params])) as unknown[] & { count: number };
  switch (step.mode as StepMode) {
    case "rows":
      return result;
    case "first":
      return result[0];
    case "changes":
      return result.count;
  }
}

async function driveAsync<T>(op: Op<T>, sql: BunSQL): Promise<T> {
  let next = op.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = await runStep(next.value, sql);
    } catch (e) {
      next = op.throw(databaseError(e));
      continue;
    }
    next = op.next(result);
  }
  return next.value;
}

export interface PostgresStore extends Store {
  readonly engine: "postgres";
  /** The connection pool, for what only storage/ does with it (migrations, locks). */
  readonly client: BunSQL;
  readonly db: StoreDb;
  /**
   * `write` at another isolation level. `read committed` is for operations whose every change is
   * guarded by its own WHERE clause (a state change made only from the expected state, an insert
   * that a unique index refuses), which PostgreSQL re-checks against the newest row: they stay
   * correct with concurrent writers and take no part in SERIALIZABLE's conflict detection, so they
   * neither fail nor make other transactions fail on its false conflicts (the anchor journal).
   */
  writeAt<T>(isolationLevel: "serializable" | "read committed", body: Body<T>): Promise<T>;
  /**
   * Runs `body`'s statement steps in one `REPEATABLE READ READ ONLY` transaction: one snapshot,
   * which neither fails on a concurrent write nor makes a writer fail (verification's reads).
   */
  snapshot<T>(body: () => Op<T>): Promise<T>;
}

/** A store over a PostgreSQL connection pool opened from `url`. */
export function postgresStore(url: string, options: { readonly max?: number; readonly password?: string } = {}): PostgresStore {
  const client = new BunSQL(url, { max: options.max ?? 10, idleTimeout: 60, connectionTimeout: 10, ...(options.password !== undefined ? { password: options.password } : {}) });
  const db = drizzlePg({ client, schema: pgSchema });
  async function writeAt<T>(isolationLevel: "serializable" | "read committed", body: Body<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction((tx) => driveAsync(body(tx as unknown as StoreDb, pgSchema), connectionOf(tx)), { isolationLevel });
      } catch (e) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(e) ?? "")) throw outward(e);
        // Another transaction touched the same rows: wait a little (jittered, growing) and run
        // the whole operation again on what is now committed.
        await Bun.sleep(Math.random() * Math.min(100, 2 ** attempt));
      }
    }
  }
  return {
    engine: "postgres",
    client,
    db,
    read(body) {
      return driveAsync(body(db, pgSchema), client).catch((e: unknown) => Promise.reject(outward(e)));
    },
    write: (body) => writeAt("serializable", body),
    writeAt,
    snapshot(body) {
      return client
        .begin("isolation level repeatable read read only", async (tx) => {
          const op = body();
          let next = op.next();
          while (!next.done) {
            const step = next.value;
            if (!(step instanceof StatementStep)) throw new TypeError("storage: a snapshot runs statement steps only");
            let result: unknown;
            try {
              const found = (await tx.unsafe(step.statement.postgres, [...step.params])) as unknown[];
              result = step.mode === "rows" ? found : step.mode === "first" ? found[0] : (found as unknown as { count: number }).count;
            } catch (e) {
              next = op.throw(databaseError(e));
              continue;
            }
            next = op.next(result);
          }
          return next.value;
        })
        .catch((e: unknown) => Promise.reject(outward(e))) as never;
    },
    async close() {
      await client.close({ timeout: 5 });
    },
  };
}

