/**
 * One schema for both engines (docs/storage.md "One schema, kept in step"): the `pg-core` tables of
 * src/storage/pg-schema.ts must be the `sqlite-core` tables of src/storage/schema.ts, table for
 * table, column for column (name, order, type by the one rule pg-schema.ts states, nullability,
 * default, primary key, enumerated values, references) and index for index (name, uniqueness,
 * terms, partial clause). The only textual difference allowed in an index is listed in
 * DIALECT_SPELLINGS, with its reason.
 */
import { describe, expect, test } from "bun:test";
import { SQL, is } from "drizzle-orm";
import { PgDialect, getTableConfig as pgConfig, type PgTable } from "drizzle-orm/pg-core";
import { SQLiteSyncDialect, getTableConfig as sqliteConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pgSchema from "../../src/storage/pg-schema.ts";
import * as sqliteSchema from "../../src/storage/schema.ts";

/** The same term written for each engine: SQLite's empty blob literal is PostgreSQL's empty bytea. */
const DIALECT_SPELLINGS: readonly [sqlite: string, pg: string][] = [["x''", "''::bytea"]];

const sqliteDialect = new SQLiteSyncDialect();
const pgDialect = new PgDialect();

function tablesOf(schema: Record<string, unknown>, isTable: (v: unknown) => boolean): Map<string, unknown> {
  return new Map(Object.entries(schema).filter(([, v]) => isTable(v)));
}
const sqliteTables = tablesOf(sqliteSchema, (v) => v !== null && typeof v === "object" && "getSQL" in (v as object) && sqliteConfigSafe(v) !== null);
const pgTables = tablesOf(pgSchema, (v) => v !== null && typeof v === "object" && "getSQL" in (v as object) && pgConfigSafe(v) !== null);

function sqliteConfigSafe(v: unknown) {
  try {
    return sqliteConfig(v as SQLiteTable);
  } catch {
    return null;
  }
}
function pgConfigSafe(v: unknown) {
  try {
    return pgConfig(v as PgTable);
  } catch {
    return null;
  }
}

/** The engine-neutral type a column must have on the other engine. */
function sqliteType(c: { getSQLType(): string; columnType: string; config?: { mode?: string } }): string {
  const t = c.getSQLType();
  if (c.columnType === "SQLiteBoolean") return "boolean";
  if (t === "integer") return "integer";
  if (t === "blob") return "bytes";
  if (t === "text") return "text";
  return `unmapped:${t}`;
}
function pgType(c: { getSQLType(): string }): string {
  const t = c.getSQLType();
  // bigint for times in ms and most counts; integer for the small ones (a batch's leaves, a leaf's index).
  if (t === "bigint" || t === "bigserial" || t === "integer") return "integer";
  if (t === "boolean") return "boolean";
  if (t === "bytea") return "bytes";
  if (t === "text") return "text";
  return `unmapped:${t}`;
}

type Neutral = {
  columns: unknown[];
  indexes: unknown[];
  foreignKeys: unknown[];
};

function term(t: unknown, render: (s: SQL) => string): string {
  if (is(t, SQL)) return render(t);
  return (t as { name: string }).name;
}

/** The parts of a table's config that read the same on both dialects. */
interface Shared {
  readonly indexes: readonly { config: { name?: string; unique: boolean; columns: readonly unknown[]; where?: SQL } }[];
  readonly foreignKeys: readonly { reference(): { columns: readonly { name: string }[]; foreignTable: unknown; foreignColumns: readonly { name: string }[] } }[];
}

function indexesAndReferences(c: Shared, render: (s: SQL) => string, tableName: (t: unknown) => string): Pick<Neutral, "indexes" | "foreignKeys"> {
  return {
    indexes: c.indexes
      .map((i) => ({
        name: i.config.name!,
        unique: i.config.unique,
        on: i.config.columns.map((t) => term(t, render)),
        where: i.config.where === undefined ? null : render(i.config.where),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: c.foreignKeys
      .map((fk) => {
        const r = fk.reference();
        return { columns: r.columns.map((x) => x.name), table: tableName(r.foreignTable), foreignColumns: r.foreignColumns.map((x) => x.name) };
      })
      .sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
  };
}

function neutralSqlite(table: SQLiteTable): Neutral {
  const c = sqliteConfig(table);
  const render = (s: SQL) => {
    let text = sqliteDialect.sqlToQuery(s).sql;
    for (const [from, to] of DIALECT_SPELLINGS) text = text.split(from).join(to);
    return text;
  };
  return {
    columns: c.columns.map((col) => ({
      name: col.name,
      type: sqliteType(col as never),
      notNull: col.notNull,
      primary: col.primary,
      // An integer primary key is SQLite's rowid, which drizzle counts as a default; whether it
      // counts up by itself is `serial` (AUTOINCREMENT here, bigserial there).
      hasDefault: col.primary && col.getSQLType() === "integer" ? null : col.hasDefault,
      serial: (col as { autoIncrement?: boolean }).autoIncrement === true,
      default: col.default === undefined ? undefined : String(col.default),
      enumValues: col.enumValues ?? null,
    })),
    ...indexesAndReferences(c as unknown as Shared, render, (t) => sqliteConfig(t as SQLiteTable).name),
  };
}

function neutralPg(table: PgTable): Neutral {
  const c = pgConfig(table);
  const render = (s: SQL) => pgDialect.sqlToQuery(s).sql;
  return {
    columns: c.columns.map((col) => ({
      name: col.name,
      type: pgType(col as never),
      notNull: col.notNull,
      primary: col.primary,
      hasDefault: col.primary && pgType(col as never) === "integer" ? null : col.hasDefault,
      serial: col.getSQLType() === "bigserial",
      default: col.default === undefined ? undefined : col.default === false ? "false" : col.default === true ? "true" : String(col.default),
      enumValues: col.enumValues ?? null,
    })),
    ...indexesAndReferences(c as unknown as Shared, render, (t) => pgConfig(t as PgTable).name),
  };
}

describe("the PostgreSQL schema is the SQLite schema", () => {
  test("the same tables, exported under the same names", () => {
    expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys()].sort());
    for (const [name, t] of sqliteTables) expect(pgConfig(pgTables.get(name) as PgTable).name).toBe(sqliteConfig(t as SQLiteTable).name);
    expect(sqliteTables.size).toBeGreaterThan(10);
  });

  for (const [name, table] of sqliteTables) {
    test(`${name}: columns, indexes and references`, () => {
      const pg = pgTables.get(name) as PgTable | undefined;
      expect(pg).toBeDefined();
      const want = neutralSqlite(table as SQLiteTable);
      const got = neutralPg(pg!);
      expect(got.columns).toEqual(want.columns);
      expect(got.indexes).toEqual(want.indexes);
      expect(got.foreignKeys).toEqual(want.foreignKeys);
      for (const c of want.columns as { type: string }[]) expect(c.type.startsWith("unmapped")).toBe(false);
    });
  }

  test("the comparison sees a difference (a column of another type fails it)", () => {
    const want = neutralSqlite(sqliteSchema.records);
    const tampered = structuredClone(neutralPg(pgSchema.records));
    (tampered.columns[7] as { type: string }).type = "text";
    expect(tampered.columns).not.toEqual(want.columns);
    const indexes = structuredClone(neutralPg(pgSchema.records).indexes) as { where: string | null }[];
    indexes[0]!.where = "x";
    expect(indexes).not.toEqual(want.indexes);
  });
});
