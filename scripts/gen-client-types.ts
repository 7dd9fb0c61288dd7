/**
 * Generates packages/client/src/openapi.ts: the TypeScript types of the OpenAPI document the
 * service serves at GET /v1/openapi.json, so the client's types are the served contract and not a
 * hand-kept copy. The document comes from the app in-process (no port, no network); the types
 * come from openapi-typescript, run under node with TypeScript 5 (openapi-typescript 7 calls
 * TypeScript 5's compiler API and fails under the repository's TypeScript 7), given to it through
 * a resolve hook as docs/clients.md shows.
 *
 *   bun scripts/gen-client-types.ts          writes the file
 *   bun scripts/gen-client-types.ts --check  exits 1 if the committed file is stale
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanup, testApp } from "../test/support/env.ts";

const ROOT = resolve(import.meta.dir, "..");
export const OPENAPI_TS = join(ROOT, "packages", "client", "src", "openapi.ts");
export const REGENERATE = "bun scripts/gen-client-types.ts";

const HEADER = `/**
 * GENERATED FILE: do not edit. The types of the OpenAPI document docverify serves at
 * GET /v1/openapi.json, made by openapi-typescript. Regenerate from a checkout with:
 *
 *   ${REGENERATE}
 */
/* eslint-disable */
`;

/** The served document, as its text. The app stays open until the caller's cleanup(). */
async function servedDocument(): Promise<string> {
  const { request } = await testApp();
  const res = await request("/v1/openapi.json");
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  return await res.text();
}

/** openapi-typescript over `document`, under node with TypeScript 5 for `typescript`. */
function openapiTypescript(document: string): string {
  const dir = mkdtempSync(join(tmpdir(), "docverify-gen-client-"));
  try {
    const ts5 = pathToFileURL(join(ROOT, "node_modules", "typescript5", "lib", "typescript.js")).href;
    writeFileSync(
      join(dir, "typescript5.mjs"),
      `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`export async function resolve(s, c, next) { return next(s === "typescript" ? ${JSON.stringify(ts5)} : s, c); }\`));
`,
    );
    writeFileSync(join(dir, "openapi.json"), document);
    const cli = join(ROOT, "node_modules", "openapi-typescript", "bin", "cli.js");
    const run = Bun.spawnSync(["node", "--import", "./typescript5.mjs", cli, "openapi.json", "-o", "openapi.ts"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1" },
    });
    if (run.exitCode !== 0) throw new Error(`openapi-typescript failed (${run.exitCode}):\n${run.stderr.toString()}${run.stdout.toString()}`);
    return readFileSync(join(dir, "openapi.ts"), "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The file's whole text, as it would be written now. Call cleanup() (test/support/env.ts) after. */
export async function generateClientTypes(): Promise<string> {
  const generated = openapiTypescript(await servedDocument());
  // openapi-typescript opens with its own comment block; ours replaces it (it names the command).
  const body = generated.replace(/^\/\*\*[\s\S]*?\*\/\s*/, "");
  return HEADER + "\n" + body;
}

if (import.meta.main) {
  const text = await generateClientTypes();
  await cleanup();
  if (process.argv.includes("--check")) {
    const current = readFileSync(OPENAPI_TS, "utf8");
    if (current !== text) {
      console.error(`packages/client/src/openapi.ts is stale: run ${REGENERATE}`);
      process.exit(1);
    }
  } else {
    writeFileSync(OPENAPI_TS, text);
    console.log(`wrote packages/client/src/openapi.ts (${text.split("\n").length} lines)`);
  }
  process.exit(0);
}
