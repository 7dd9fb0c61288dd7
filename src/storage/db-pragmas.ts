/**
 * The pragmas every connection to the service's database runs first, in this order: the main
 * connection (src/storage/db.ts) and the writer thread's (src/storage/writer-worker.ts), which
 * must not load drizzle to get them.
 */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * SQLite's page cache per connection, in KiB: a ceiling it fills with use, not an allocation (a
 * fresh folder at idle holds a few pages). SQLite's default of 2 MB holds less than the covering
 * indexes' leaf pages a busy appliance reads again and again: every verification then read its
 * record's index pages from the file, a system call each. Measured on the 1 M-record dataset, 64 MB
 * took the least CPU per public verification (the figures: docs/benchmarks.md, "Page cache").
 */
export const PAGE_CACHE_KIB = 65_536;

/**
 * `temp_store = MEMORY`: savepoints' journals (the sub-journal, the original of each page an item
 * of a group commit changes, so that item alone can be undone) stay in memory. By default SQLite
 * spills a sub-journal past 64 KiB into a temporary file under /var/tmp, and a batch of record
 * writes passes that: under `records-create` 10 of every record's ~15 writes on the API's thread
 * were 4 KiB writes of that file, a system call each (docs/benchmarks.md, "Record creation").
 * Nothing of it is ever synced or read after a commit. Temporary tables and indexes of queries go
 * to memory too; none of the service's queries builds a large one (the few GROUP BYs hold a row per
 * state or topic), and sorts larger than the cache (an index built by a migration) still spill to a
 * file: SQLite's sorter does not follow this setting.
 */
export const PRAGMAS = [
  `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`,
  "PRAGMA journal_mode = WAL",
  "PRAGMA foreign_keys = ON",
  "PRAGMA synchronous = FULL",
  `PRAGMA cache_size = -${PAGE_CACHE_KIB}`,
  "PRAGMA temp_store = MEMORY",
] as const;
