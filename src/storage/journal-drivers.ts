/**
 * The anchor journal's driver for the store's engine (the `Journal` port,
 * anchoring/journal/ports.ts): the embedded SQLite's, group-committed with record writes on its
 * connection, or PostgreSQL's, every change fenced by `epoch` (the anchor loop's leader's, null
 * while this node does not lead). The journal is built once the loop has its clock and
 * transaction ids: the composition root passes `rules` (anchoring/journal/rules.ts `journalRules`).
 * Neither driver loads the PostgreSQL client (storage/pg-store.ts).
 */
import type { Journal, JournalRules } from "../anchoring/journal/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresJournal } from "./postgres/journal.ts";
import { sqliteJournal } from "./sqlite/journal.ts";
import type { SqliteStore, Store } from "./store.ts";

export function journalDrivers(store: Store, options: { readonly epoch?: () => number | null } = {}): { journal(rules: JournalRules): Journal } {
  if (store.engine === "sqlite") {
    const sqlite = store as SqliteStore;
    return { journal: (rules) => sqliteJournal(sqlite, rules) };
  }
  const epoch = options.epoch;
  if (epoch === undefined) throw new TypeError("the PostgreSQL journal needs the leader's epoch");
  return { journal: (rules) => postgresJournal(store as PostgresStore, rules, epoch) };
}
