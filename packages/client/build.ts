/**
 * Builds the package into dist/: index.js, one ES module bundled by Bun (the package has no
 * dependency, so the bundle is the source and nothing else), and the declarations, emitted by the
 * repository's TypeScript from the same source. TypeScript writes the declarations' relative
 * imports as the source has them (`./client.ts`); they are rewritten to `./client.js`, the form
 * every moduleResolution (node16, nodenext, bundler) resolves to the `.d.ts` beside it.
 *
 *   bun build.ts     (npm run build; npm pack runs it first)
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const HERE = import.meta.dir;
const DIST = join(HERE, "dist");

rmSync(DIST, { recursive: true, force: true });

const built = await Bun.build({ entrypoints: [join(HERE, "src", "index.ts")], outdir: DIST, target: "node", format: "esm", naming: "index.js" });
if (!built.success) {
  for (const log of built.logs) console.error(log);
  process.exit(1);
}

// The repository's tsc, found the way Node finds packages: upwards from here.
const tsc = join(dirname(Bun.resolveSync("typescript/package.json", HERE)), "bin", "tsc");
const declarations = Bun.spawnSync(["node", tsc, "-p", join(HERE, "tsconfig.json")], { stdout: "inherit", stderr: "inherit" });
if (declarations.exitCode !== 0) process.exit(declarations.exitCode ?? 1);

for (const file of readdirSync(DIST).filter((f) => f.endsWith(".d.ts"))) {
  const path = join(DIST, file);
  writeFileSync(path, readFileSync(path, "utf8").replace(/(from\s+["']\.{1,2}\/[^"']+)\.ts(["'])/g, "$1.js$2"));
}
console.log(`built ${readdirSync(DIST).sort().join(", ")} in packages/client/dist`);
