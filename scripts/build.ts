/**
 * `npm run build`: compiles the whole product into one executable, dist/docverify.
 * Migrations, the OpenAPI document's UI assets and page assets are imported into the bundle,
 * so the binary runs from any folder with nothing beside it. Stray .env or bunfig.toml files
 * where it runs must not change it, hence the two --no-compile-autoload flags.
 */
import { $ } from "bun";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const outfile = process.argv[2] ?? join(root, "dist", "docverify");
let commit = "unknown";
try {
  commit = (await $`git -C ${root} rev-parse --short=12 HEAD`.quiet().text()).trim();
  const dirty = (await $`git -C ${root} status --porcelain --untracked-files=no`.quiet().text()).trim();
  if (dirty !== "") commit += "-dirty";
} catch {
  /* not a git checkout: the binary says "unknown" */
}
const started = performance.now();
await $`${process.execPath} build ${join(root, "src", "main.ts")} --compile --minify --bytecode --format=esm --no-compile-autoload-dotenv --no-compile-autoload-bunfig --define ${"DOCVERIFY_COMMIT=" + JSON.stringify(commit)} --outfile ${outfile}`.cwd(root);
console.log(`built ${outfile} (commit ${commit}) in ${Math.round(performance.now() - started)} ms`);
