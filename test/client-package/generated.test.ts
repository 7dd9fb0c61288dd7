/**
 * The package's types are the served document's: packages/client/src/openapi.ts must equal what
 * scripts/gen-client-types.ts generates now, so a change to the API without regenerating fails
 * here with the command to run. And the package's version is the product's.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OPENAPI_TS, REGENERATE, generateClientTypes } from "../../scripts/gen-client-types.ts";
import { VERSION } from "../../packages/client/src/version.ts";
import { ROOT, cleanup } from "../support/env.ts";

afterAll(cleanup);

test("packages/client/src/openapi.ts is the generation from the served document", async () => {
  const fresh = await generateClientTypes();
  const committed = readFileSync(OPENAPI_TS, "utf8");
  if (committed !== fresh) throw new Error(`packages/client/src/openapi.ts differs from the served document's types: run ${REGENERATE} and commit the result`);
  expect(committed.startsWith("/**\n * GENERATED FILE")).toBe(true);
  expect(committed).toContain(REGENERATE);
  expect(committed).toContain('verdict: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record"');
}, 60_000);

test("the package's version, and the one it sends in User-Agent, are the product's", () => {
  const version = (path: string) => (JSON.parse(readFileSync(join(ROOT, path), "utf8")) as { version: string }).version;
  expect(version("packages/client/package.json")).toBe(version("package.json"));
  expect(VERSION).toBe(version("package.json"));
});
