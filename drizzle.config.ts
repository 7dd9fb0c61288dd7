import { defineConfig } from "drizzle-kit";

// `npm run db:generate` runs drizzle-kit with this file, then refreshes migrations/index.ts.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/storage/schema.ts",
  out: "./migrations",
});
