/**
 * The pages' scripts are generated (scripts/build-app-pages.ts) and committed, because the
 * executable embeds them: a change to src/sign-pages/, to the PDF stamp or to a browser
 * dependency must come with regenerated bundles, or the service would serve old code.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT } from "../support/env.ts";

test(
  "src/http/pages/app-enrol.js and app-sign.js are what npm run build:app-pages writes",
  () => {
    const p = Bun.spawnSync([BUN, join(ROOT, "scripts", "build-app-pages.ts"), "--check"], { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    const said = p.stderr.toString();
    // On failure the message says which file is stale and to run npm run build:app-pages.
    expect(said).toBe("");
    expect(p.exitCode).toBe(0);
  },
  60_000,
);
