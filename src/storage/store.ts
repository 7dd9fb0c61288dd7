/**
 * Storage written once for both engines (docs/storage.md "Two engines"): embedded SQLite (the
 * default) and PostgreSQL (`DOCVERIFY_DATABASE_URL`).
 *
 * The two engines do not run code the same way: bun:sqlite answers synchronously, and a SQLite
 * transaction must never wait on anything (an async callback commits at its first `await`, and
 * anything else the event loop runs meanwhile would land inside it); PostgreSQL answers only
 * asynchronously. So an operation over storage is written as a generator that yields each query
 * it needs and receives its result:
 *
 *     const org = yield* q(db.select().from(t.organisations).where(eq(t.organisations.id, id)));
 *
 * and the store drives it: on SQLite every query runs synchronously, so a write transaction is
 * one synchronous `BEGIN IMMEDIATE … COMMIT` that nothing can interleave with, exactly as before;
 * on PostgreSQL each query is awaited inside a SERIALIZABLE transaction, which the store runs
 * again from the start when the database reports a serialization failure or deadlock. Both give
 * a write operation the same meaning: it happened alone, all or nothing.
 *
 * What an operation body MUST do:
 * - build its queries from the `db` and tables `t` it is given (they are the engine's own), and
 *   run each through `q()`; never `.get()`, `.all()`, `.run()` or `await`;
 * - do nothing but compute between queries: no I/O, no clock read that must be unique, no key
 *   generation. On PostgreSQL a write body may run more than once; do such work before `write`.
 * - learn how many rows a change touched with `.returning()`, which both engines answer alike.
 *
 * The query builders are typed as drizzle's `pg-core` ones (`StoreDb`): their tables are the same
 * (test/storage/schema-lockstep.test.ts), they have no synchronous methods to misuse, and the
 * contract tests run every operation on both engines, which is what shows the SQLite builders
 * behind the types accept the same calls.
 *
 * The PostgreSQL half is pg-store.ts, loaded only when DOCVERIFY_DATABASE_URL is set: an embedded
 * appliance does not pay for a client it never opens.
 */
import { DrizzleQueryError, is } from "drizzle-orm";
import type { BunSQLDatabase } from "drizzle-orm/bun-sql";
import { SQLiteDeleteBase, SQLiteInsertBase, SQLiteSelectBase, SQLiteUpdateBase } from "drizzle-orm/sqlite-core";
import type { Db } from "./db.ts";
import { connectionDataVersion, type DataVersion } from "./data-version.ts";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";
import type * as pgSchema from "./pg-schema.ts";
import * as sqliteSchema from "./schema.ts";

export type Tables = typeof pgSchema;
/** The query-building surface an operation is given: drizzle's PostgreSQL builders, by type. */
export type StoreDb = BunSQLDatabase<Tables>;
/** A query an operation yields for the store to run. */
export type Step = PromiseLike<unknown>;
/** An operation over storage: yields queries, returns its result. */
export type Op<T> = Generator<Step, T, unknown>;
export type Body<T> = (db: StoreDb, t: Tables) => Op<T>;

/** Runs one query inside an operation and gives back its result, typed. */
export function* q<T>(query: PromiseLike<T>): Op<T> {
  return (yield query) as T;
}

/**
 * A statement written for each engine, for the paths where drizzle's query building costs more
 * than the query (authentication, verification: microseconds per request). Defined only in
 * storage/statements.ts and the capabilities' statement files beside it (verification-, receipt-
 * and admin-statements.ts): the places dialect-specific SQL lives. Both texts must return the
 * same columns with the same JavaScript types (cast on PostgreSQL: `::float8` for a bigint read as
 * a number, `::int` for a boolean read as 0/1, as SQLite answers); the contract suite checks it.
 */
export interface Statement<Row, Params extends readonly unknown[]> {
  readonly name: string;
  /** With `?` (or `?1`, `?2`) parameters; run as a statement prepared once per store (per connection). */
  readonly sqlite: string;
  /** With `$1`, `$2` parameters. */
  readonly postgres: string;
  /** Only for the type of the rows and parameters. */
  readonly _types?: { row: Row; params: Params };
}

/**
 * A statement, its text for each engine; or `sql` alone when the two differ only in how they
 * number parameters: written with `?` (numbered in order) or `?1`, `?2` (never both), the
 * PostgreSQL text is the same with `$1`, `$2`.
 */
export function statement<Row, Params extends readonly unknown[]>(s: { name: string; sqlite: string; postgres: string } | { name: string; sql: string }): Statement<Row, Params> {
  if (!("sql" in s)) return s;
  return { name: s.name, sqlite: s.sql, postgres: postgresParameters(s.sql) };
}

/** `?` in order, or `?N`, as `$N`. */
function postgresParameters(sql: string): string {
  const numbered = /\?\d/.test(sql);
  if (numbered && /\?(?!\d)/.test(sql)) throw new TypeError("statement: `?` and `?N` parameters mixed in one text");
  if (numbered) return sql.replace(/\?(\d+)/g, "$$$1");
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** What a statement step gives back: every row, the first row, or how many rows it changed. */
export type StepMode = "rows" | "first" | "changes";

/** A statement with its parameters, yielded by an operation. */
export class StatementStep<Result> implements PromiseLike<Result> {
  constructor(
    readonly statement: Statement<unknown, readonly unknown[]>,
    readonly params: readonly unknown[],
    readonly mode: StepMode,
  ) {}
  then<A = Result, B = never>(_fulfilled?: ((value: Result) => A | PromiseLike<A>) | null, _rejected?: ((reason: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {
    // Never awaited directly: the store runs it (a body must not await, store.ts says why).
    throw new TypeError(`storage: statement ${this.statement.name} was awaited outside a store operation`);
  }
}

/** Every row of `s` run with `params`, as a step of an operation: `yield* q(rows(S, a, b))`. */
export function rows<Row, Params extends readonly unknown[]>(s: Statement<Row, Params>, ...params: Params): StatementStep<Row[]> {
  return new StatementStep(s, params, "rows");
}

/** The first row of `s`, or undefined (SQLite stops at it: `.get()`). */
export function firstRow<Row, Params extends readonly unknown[]>(s: Statement<Row, Params>, ...params: Params): StatementStep<Row | undefined> {
  return new StatementStep(s, params, "first");
}

/** How many rows `s` inserted, updated or deleted (a statement without RETURNING). */
export function changes<Params extends readonly unknown[]>(s: Statement<unknown, Params>, ...params: Params): StatementStep<number> {
  return new StatementStep(s, params, "changes");
}

export type Engine = "sqlite" | "postgres";

export interface Store {
  readonly engine: Engine;
  /** Runs a read-only operation (each query sees what is committed when it runs). */
  read<T>(body: Body<T>): Promise<T>;
  /** Runs an operation as one write transaction: all of it or nothing, as if alone. */
  write<T>(body: Body<T>): Promise<T>;
  /** Closes what the store opened (a store over a SQLite connection it was given closes nothing). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SQLite: every query synchronous.

interface Prepared {
  all(...p: unknown[]): unknown[];
  get(...p: unknown[]): unknown;
  run(...p: unknown[]): { changes: number };
}

/** Prepares a statement on the connection, once per SQL text: the store's own cache (`sqliteStore`). */
type PrepareOnce = (text: string) => Prepared;

function runSqliteStatement(step: StatementStep<unknown>, prepare: PrepareOnce): unknown {
  const st = prepare(step.statement.sqlite);
  switch (step.mode) {
    case "rows":
      return st.all(...step.params);
    case "first":
      return st.get(...step.params) ?? undefined;
    case "changes":
      return st.run(...step.params).changes;
  }
}

/** Runs a drizzle SQLite builder or a statement now, the way awaiting it would. */
function runSqliteStep(step: Step, prepare: PrepareOnce): unknown {
  if (step instanceof StatementStep) return runSqliteStatement(step, prepare);
  if (is(step, SQLiteSelectBase)) return step.all();
  if (is(step, SQLiteInsertBase) || is(step, SQLiteUpdateBase) || is(step, SQLiteDeleteBase)) {
    const b = step as unknown as { config: { returning?: unknown }; all(): unknown; run(): unknown };
    return b.config.returning ? b.all() : b.run();
  }
  // A relational query (`db.query.*`) or raw SQL has no single synchronous form here: refused,
  // so that a body cannot work on one engine and not the other.
  throw new TypeError("storage: an operation yielded something other than a select, insert, update or delete builder");
}

/**
 * The database's own error, not drizzle's wrapper around it: the wrapper's message carries the
 * query's parameters (a secret's digest, a person's email), which must never reach a log line,
 * and each engine's error keeps its own code (SQLite's `code`, PostgreSQL's SQLSTATE in `errno`).
 */
export function databaseError(e: unknown): unknown {
  return e instanceof DrizzleQueryError && e.cause !== undefined ? e.cause : e;
}

/**
 * Whether `e` (a database's own error, see `databaseError`) is a unique index refusing a row:
 * SQLite's `SQLITE_CONSTRAINT_UNIQUE` (or `…_PRIMARYKEY`), PostgreSQL's SQLSTATE 23505.
 */
export function isUniqueViolation(e: unknown): boolean {
  if (e === null || typeof e !== "object") return false;
  const { code, errno } = e as { code?: unknown; errno?: unknown };
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || errno === "23505";
}

function driveSync<T>(op: Op<T>, prepare: PrepareOnce): T {
  let next = op.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = runSqliteStep(next.value, prepare);
    } catch (e) {
      next = op.throw(databaseError(e));
      continue;
    }
    next = op.next(result);
  }
  return next.value;
}

/**
 * The SQLite store also runs an operation synchronously, for the code that is still synchronous
 * over bun:sqlite (opening the core): the same operation, the same transaction.
 */
export interface SqliteStore extends Store {
  readonly engine: "sqlite";
  /** The connection, for the code still synchronous over bun:sqlite. */
  readonly db: Db;
  readSync<T>(body: Body<T>): T;
  writeSync<T>(body: Body<T>): T;
  /**
   * Runs `body` inside a SQLite transaction (or savepoint) someone else opened on this store's
   * connection (`tx`, that transaction's handle): the group commit runs each record write and
   * journal change in its own savepoint.
   */
  runIn<T>(tx: unknown, body: Body<T>): T;
  /**
   * Whether anything was committed since (storage/data-version.ts): what hot reads are kept under.
   * Made on first use, one per store, released when the connection closes.
   */
  readonly version: DataVersion;
  /**
   * The group commit every writer through this store shares (storage/group-commit.ts): record
   * writes and the anchor journal commit together in one IMMEDIATE transaction.
   */
  readonly group: GroupCommit;
}

/**
 * A store over an open SQLite connection, which stays the caller's to close. Everything on one
 * connection goes through its one store: the composition root makes it once and hands it to every
 * service (its prepared statements, data version and group commit are its own). A short-lived
 * store for a one-off synchronous read or write (migrations, opening the core) shares nothing
 * and needs nothing shared.
 */
export function sqliteStore(db: Db): SqliteStore {
  const asStoreDb = db as unknown as StoreDb;
  const t = sqliteSchema as unknown as Tables;
  /** This store's prepared statements, by SQL text. */
  const prepared = new Map<string, Prepared>();
  const prepare: PrepareOnce = (text) => {
    let st = prepared.get(text);
    if (st === undefined) prepared.set(text, (st = db.$client.prepare(text) as unknown as Prepared));
    return st;
  };
  const readSync = <T>(body: Body<T>): T => driveSync(body(asStoreDb, t), prepare);
  // IMMEDIATE: the write lock is taken before the first read, so a read-then-write cannot fail on
  // upgrade when another process writes (SQLITE_BUSY).
  const writeSync = <T>(body: Body<T>): T => db.transaction((tx) => driveSync(body(tx as unknown as StoreDb, t), prepare), { behavior: "immediate" });
  let version: DataVersion | null = null;
  let group: GroupCommit | null = null;
  const settle = <T>(run: () => T): Promise<T> => {
    try {
      return Promise.resolve(run());
    } catch (e) {
      return Promise.reject(e);
    }
  };
  return {
    engine: "sqlite",
    db,
    get version() {
      return (version ??= connectionDataVersion(db.$client));
    },
    get group() {
      return (group ??= createGroupCommit(db.$client));
    },
    readSync,
    writeSync,
    runIn: (tx, body) => driveSync(body(tx as StoreDb, t), prepare),
    read: (body) => settle(() => readSync(body)),
    write: (body) => settle(() => writeSync(body)),
    async close() {},
  };
}
