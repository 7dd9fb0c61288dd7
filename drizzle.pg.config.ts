import { defineConfig } from "drizzle-kit";

// The PostgreSQL engine's migrations (decisions §12): `npm run db:generate` runs drizzle-kit with
// this file after drizzle.config.ts, then refreshes migrations/index.ts and migrations/pg/index.ts.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/storage/pg-schema.ts",
  out: "./migrations/pg",
});
