/**
 * The engines of the storage contract suites (test/storage/engines.test.ts and the others named
 * `engines.test.ts`): the same tests against the embedded SQLite and a real PostgreSQL server.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore } from "../../src/storage/pg-store.ts";
import { sqliteStore, type Store } from "../../src/storage/store.ts";
import { cleanup, tempDir } from "./env.ts";
import { sharedPostgres, type Postgres } from "./postgres.ts";

export interface StoreEngine {
  readonly name: "SQLite" | "PostgreSQL";
  /** A store on a new, migrated database. */
  open(): Promise<Store>;
  /** Two connections to one new database, as two processes or nodes have. */
  openPair(): Promise<[Store, Store]>;
}

/**
 * SQLite in a temporary folder, and PostgreSQL on the server `pg()` returns (the file starts it in
 * `beforeAll`). Every store they open is remembered in `opened`, for the file's `afterAll`.
 */
export function storeEngines(pg: () => Postgres, opened: Store[]): [StoreEngine, StoreEngine] {
  const sqlite = (path: string) => {
    const db = openDatabase({ path });
    opened.push({ ...sqliteStore(db), close: async () => db.$client.close() });
    return { db, store: sqliteStore(db) };
  };
  return [
    {
      name: "SQLite",
      async open() {
        const { db, store } = sqlite(join(tempDir(), "docverify.db"));
        migrate(db);
        return store;
      },
      async openPair() {
        const path = join(tempDir(), "docverify.db");
        const a = sqlite(path);
        const b = sqlite(path);
        migrate(a.db);
        return [a.store, b.store];
      },
    },
    {
      name: "PostgreSQL",
      async open() {
        const store = postgresStore(await pg().createDatabase());
        opened.push(store);
        await migratePostgres(store);
        return store;
      },
      async openPair() {
        const url = await pg().createDatabase();
        const [a, b] = [postgresStore(url), postgresStore(url)];
        opened.push(a, b);
        await migratePostgres(a);
        return [a, b];
      },
    },
  ];
}

/**
 * The engines for a test file, with its hooks: the run's shared PostgreSQL server started before
 * the file's tests, every store the file opened closed after them. `opened` takes the stores a
 * test opens itself; `pg()` is the server (for a database of the file's own). With `eachTest`,
 * the stores are closed and the file's databases dropped after every test instead (a file that
 * opens a database per test: a PostgreSQL server allows so many connections).
 */
export function useStoreEngines(options: { readonly eachTest?: boolean } = {}): { readonly engines: [StoreEngine, StoreEngine]; readonly opened: Store[]; pg(): Postgres } {
  let pg: Postgres | undefined;
  const opened: Store[] = [];
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);
  if (options.eachTest === true) {
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await pg?.destroy();
    });
  }
  afterAll(async () => {
    for (const s of opened) await s.close();
    await pg?.destroy();
    cleanup();
  });
  const server = () => {
    if (pg === undefined) throw new Error("the PostgreSQL server is started in beforeAll");
    return pg;
  };
  return { engines: storeEngines(server, opened), opened, pg: server };
}
