/**
 * The product's tables, as drizzle schema. `drizzle-kit generate` turns changes here into SQL
 * migrations under `migrations/`; `npm run db:generate` also refreshes `migrations/index.ts`,
 * the module that embeds them in the binary. A test fails when the two are out of step.
 */
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Facts about this installation that must survive restarts: its instance id and the
 * server-side secrets derived at first start (for example the key that authenticates
 * verification-log cursors). One row per key.
 */
export const serviceMeta = sqliteTable("service_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
