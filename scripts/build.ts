/**
 * `npm run build`: compiles the whole product into one executable, dist/docverify.
 * Migrations, the OpenAPI document's UI assets and page assets are imported into the bundle,
 * so the binary runs from any folder with nothing beside it. The embedded local ledger's worker
 * thread is a second entry point, inside the same executable. Stray .env or bunfig.toml files
 * where it runs must not change it, hence the two --no-compile-autoload flags. --splitting puts
 * what is imported on demand (the ledger SDK, admin commands) in chunks of their own inside the
 * executable: without it every entry point is one module, whose pages are all read at start, and a
 * lazy import() saves only the evaluation (docs/benchmarks.md, "Idle memory").
 * Beside it, docverify-verify.mjs: the standalone receipt verifier (scripts/build-verifier.ts),
 * docverify-client.mjs: the bulk commands for Node.js 20 (scripts/build-client.ts),
 * and verify-receipt.html: the receipt page, the same bytes the executable serves at
 * GET /verify-receipt (src/http/pages/bundle.ts builds both).
 */
import { $ } from "bun";
import { writeFileSync } from "node:fs";
import { receiptPageHtml } from "../src/http/pages/bundle.ts";
import { dirname, join, relative, sep } from "node:path";
import { buildClient } from "./build-client.ts";
import { buildVerifier } from "./build-verifier.ts";

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
// The embedded local ledger runs on a worker thread (src/local-ledger/thread.ts): its
// entry point is a second entry point of the executable, embedded under the bundle root (src/)
// at the same relative path, which DOCVERIFY_LEDGER_WORKER tells the code. Not embedded, Bun
// would load a relative worker path from the working folder instead.
const src = join(root, "src");
const worker = join(src, "local-ledger", "worker.ts");
const workerPath = "./" + relative(src, worker).split(sep).join("/");
// The signing workers (src/crypto/sign-pool.ts) the same way: DOCVERIFY_SIGN_WORKER.
const signWorker = join(src, "crypto", "sign-worker.ts");
const signWorkerPath = "./" + relative(src, signWorker).split(sep).join("/");
// The writer thread of group commits (src/storage/writer-thread.ts) the same way: DOCVERIFY_WRITER_WORKER.
const writerWorker = join(src, "storage", "writer-worker.ts");
const writerWorkerPath = "./" + relative(src, writerWorker).split(sep).join("/");
await $`${process.execPath} build ${join(src, "main.ts")} ${worker} ${signWorker} ${writerWorker} --root ${src} --compile --splitting --minify --bytecode --format=esm --no-compile-autoload-dotenv --no-compile-autoload-bunfig --define ${"DOCVERIFY_COMMIT=" + JSON.stringify(commit)} --define ${"DOCVERIFY_LEDGER_WORKER=" + JSON.stringify(workerPath)} --define ${"DOCVERIFY_SIGN_WORKER=" + JSON.stringify(signWorkerPath)} --define ${"DOCVERIFY_WRITER_WORKER=" + JSON.stringify(writerWorkerPath)} --outfile ${outfile}`.cwd(root);
console.log(`built ${outfile} (commit ${commit}) in ${Math.round(performance.now() - started)} ms`);

const verifier = join(dirname(outfile), "docverify-verify.mjs");
await buildVerifier(verifier);
console.log(`built ${verifier}`);

const client = join(dirname(outfile), "docverify-client.mjs");
await buildClient(client);
console.log(`built ${client}`);

const page = join(dirname(outfile), "verify-receipt.html");
writeFileSync(page, receiptPageHtml());
console.log(`built ${page}`);
