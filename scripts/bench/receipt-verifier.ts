/**
 * The standalone receipt verifier's time for one receipt (docs/benchmarks.md "The receipt
 * verifier"; the verifier: docs/receipts.md §4): the
 * compiled executable runs a `local-ledger` with two mirror ports and a `serve` anchoring on it;
 * one record is created and its receipt fetched; serve stops. Then `node docverify-verify.mjs
 * RECEIPT --hash H --mirror M1 --mirror M2 --min-mirrors 1` runs, pinned to one core, against the
 * two mirror nodes, as a verifier would run it: process start to exit, including Node.js's own
 * start-up.
 *
 * The floor, printed beside it: noble's two ML-DSA-65 verifications (the record's and the
 * seal's), in a fresh Node.js process on the same core, cold (the first call, as the verifier
 * makes it) and warm; and Node.js starting and exiting with nothing to do.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/lib/log.ts";
import { spawnLogged, startDocverify, stopProcess } from "./processes.ts";

/** Runs measured after one unmeasured run (which fills the page cache). */
const RUNS = 9;
export const VERIFIER_TARGET_MS = 150;

export interface VerifierBench {
  readonly runsMs: number[];
  readonly medianMs: number;
  readonly nodeStartMs: number;
  readonly nobleColdMs: number;
  readonly nobleWarmMs: number;
  readonly verdict: "PASS" | "MISS";
}

const ROOT = join(import.meta.dir, "..", "..");

/** Milliseconds of `cmd` from spawn to exit, pinned to CPU 0; throws on an unexpected exit code. */
async function timed(cmd: string[], cwd: string, expectCode = 0): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  const proc = Bun.spawn(["taskset", "-c", "0", ...cmd], { cwd, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - started;
  if (code !== expectCode) throw new Error(`${cmd.join(" ")} exited ${code}:\n${stdout}${stderr}`);
  return { ms, stdout };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Waits for the local ledger's JSON line (its addresses) in its stdout file. */
async function ledgerAddresses(stdoutFile: string, isRunning: () => boolean): Promise<{ mirrorUrl: string; mirrorUrls: string[] }> {
  const deadline = performance.now() + 15_000;
  for (;;) {
    const line = readFileSync(stdoutFile, "utf8").split("\n").find((l) => l.startsWith("{") && l.includes('"mirrorUrls"'));
    if (line !== undefined) return JSON.parse(line) as { mirrorUrl: string; mirrorUrls: string[] };
    if (!isRunning()) throw new Error(`local-ledger exited before listening: ${readFileSync(stdoutFile, "utf8")}`);
    if (performance.now() > deadline) throw new Error("local-ledger did not start within 15 s");
    await Bun.sleep(10);
  }
}

/** `binary` is the compiled executable; the standalone verifier is beside it (npm run build). */
export async function runVerifierBench(binary: string, work: string, say: (line: string) => void): Promise<VerifierBench> {
  const standalone = join(binary, "..", "docverify-verify.mjs");
  const ledgerDir = join(work, "verifier-ledger");
  const ledger = spawnLogged([binary, "local-ledger", "--data", join(ledgerDir, "data"), "--consensus-ms", "100", "--second-mirror-port", "0", "--json"], {}, ledgerDir);
  try {
    const { mirrorUrl, mirrorUrls } = await ledgerAddresses(ledger.stdoutFile, () => ledger.proc.exitCode === null && ledger.proc.signalCode === null);
    if (mirrorUrls.length !== 2) throw new Error(`local-ledger --second-mirror-port gave ${JSON.stringify(mirrorUrls)}`);

    // An organisation with the add-on and a key, made by the administrator's core as `docverify org create` would.
    const serveDir = join(work, "verifier-serve");
    const dataDir = join(serveDir, "data");
    const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: dataDir }), log: createLogger({ level: "error" }) });
    let key: string;
    try {
      const org = await admin.organisations.create({ name: "Bench receipts", apiAccess: true, addon: true, validated: true }, "bench");
      key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "bench")).key;
    } finally {
      await admin.close();
    }
    const serve = await startDocverify(binary, serveDir, {
      dataDir,
      env: { DOCVERIFY_LOCAL_LEDGER_URL: mirrorUrl, DOCVERIFY_MIRROR_NODES: mirrorUrls.join(",") },
    });
    const hash = `sha256:${new Bun.CryptoHasher("sha256").update(`docverify bench receipt ${Date.now()}`).digest("hex")}`;
    let receipt: string;
    try {
      const deadline = performance.now() + 60_000;
      let recordId: string | null = null;
      receipt = "";
      while (receipt === "") {
        if (performance.now() > deadline) throw new Error("no receipt within 60 s");
        if (recordId === null) {
          const res = await fetch(`${serve.url}/v1/records`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ originalDocHash: hash }),
          });
          // 503 while the organisation's topic is being created.
          if (res.status === 200 || res.status === 201) recordId = ((await res.json()) as { recordId: string }).recordId;
          else if (res.status !== 503) throw new Error(`POST /v1/records answered ${res.status}: ${await res.text()}`);
        } else {
          const res = await fetch(`${serve.url}/verify/${recordId}/receipt`);
          if (res.status === 200) receipt = await res.text();
          else if (res.status !== 409) throw new Error(`GET /verify/${recordId}/receipt answered ${res.status}: ${await res.text()}`);
        }
        if (receipt === "") await Bun.sleep(100);
      }
    } finally {
      await serve.stop();
    }
    const receiptFile = join(work, "bench-receipt.json");
    writeFileSync(receiptFile, receipt);

    // The floor: node alone, and noble's two verifications of this receipt's signatures.
    const r = JSON.parse(receipt) as { signer: { publicKey: string; payload: string; signature: string }; seal: { publicKey: string; payload: string; signature: string } };
    const floorScript = join(work, "noble-floor.mjs");
    writeFileSync(
      floorScript,
      [
        `import { ml_dsa65 } from ${JSON.stringify(join(ROOT, "node_modules", "@noble", "post-quantum", "ml-dsa.js"))};`,
        `const r = ${JSON.stringify({ signer: r.signer, seal: r.seal })};`,
        `const b = (s) => new Uint8Array(Buffer.from(s, "base64"));`,
        `const both = () => ml_dsa65.verify(b(r.signer.signature), b(r.signer.payload), b(r.signer.publicKey)) && ml_dsa65.verify(b(r.seal.signature), b(r.seal.payload), b(r.seal.publicKey));`,
        `let t = performance.now(); if (!both()) throw new Error("a signature does not verify"); const cold = performance.now() - t;`,
        `const warm = []; for (let i = 0; i < 20; i++) { t = performance.now(); both(); warm.push(performance.now() - t); }`,
        `warm.sort((x, y) => x - y);`,
        `console.log(JSON.stringify({ cold, warm: warm[10] }));`,
      ].join("\n"),
    );
    const noble = JSON.parse((await timed(["node", floorScript], work)).stdout) as { cold: number; warm: number };
    const nodeRuns: number[] = [];
    for (let i = 0; i < RUNS; i++) nodeRuns.push((await timed(["node", "-e", ""], work)).ms);

    // The local ledger's two mirror ports, named as a verifier must name them (a receipt does not
    // choose its witnesses): one process is one host, hence --min-mirrors 1; both are still asked.
    const args = ["node", standalone, receiptFile, "--hash", hash, ...mirrorUrls.flatMap((u) => ["--mirror", u]), "--min-mirrors", "1", "--json"];
    const first = await timed(args, work);
    const verdict = (JSON.parse(first.stdout) as { verdict: string }).verdict;
    if (verdict !== "verified_org") throw new Error(`the standalone verifier said ${verdict}, not verified_org:\n${first.stdout}`);
    const runsMs: number[] = [];
    for (let i = 0; i < RUNS; i++) runsMs.push((await timed(args, work)).ms);
    const result: VerifierBench = {
      runsMs,
      medianMs: median(runsMs),
      nodeStartMs: median(nodeRuns),
      nobleColdMs: noble.cold,
      nobleWarmMs: noble.warm,
      verdict: median(runsMs) <= VERIFIER_TARGET_MS ? "PASS" : "MISS",
    };
    say(
      `standalone verifier (node docverify-verify.mjs), one receipt against 2 local mirror nodes, pinned to one core, ${RUNS} runs: ` +
        `median ${result.medianMs.toFixed(1)} ms (min ${Math.min(...runsMs).toFixed(1)}, max ${Math.max(...runsMs).toFixed(1)})  target ≤ ${VERIFIER_TARGET_MS} ms  ${result.verdict}`,
    );
    say(
      `  floor: noble's two ML-DSA-65 verifications ${result.nobleColdMs.toFixed(1)} ms cold (as the verifier makes them), ${result.nobleWarmMs.toFixed(1)} ms warm; ` +
        `node starting and exiting with nothing to do ${result.nodeStartMs.toFixed(1)} ms`,
    );
    return result;
  } finally {
    await stopProcess(ledger.proc, 10_000).catch(() => undefined);
  }
}
