/**
 * The embedded local ledger on its worker thread (src/local-ledger/thread.ts): it
 * answers while the API thread is busy, its log lines come out through the caller's logger, a
 * start failure rejects with the ledger's own message (and `serve` exits with it), a crash of its
 * thread is logged and fails readiness without taking anything else down, and its entry point
 * does not load the SDK.
 */
import { encodeBatchMessage } from "../../src/records/messages.ts";
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore } from "../../src/app/core.ts";
import { startAnchoring } from "../../src/anchoring/index.ts";
import { anchoringDrivers, journalDrivers } from "../support/drivers.ts";
import { startLocalLedger, type LocalLedgerEndpoint } from "../../src/local-ledger/index.ts";
import { startLedgerWorker } from "../../src/local-ledger/thread.ts";
import { openLedger } from "../../src/anchoring/setup.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { BUN, ROOT, cleanup, onCleanup, tempDir, testConfig } from "../support/env.ts";
import { waitFor } from "../support/wait.ts";

afterEach(cleanup);

const MAIN = join(ROOT, "src", "main.ts");
const CRASHING_WORKER = new URL("../support/crashing-ledger-worker.ts", import.meta.url);

/**
 * Blocks this thread for `blockMs` while another process asks the ledger's mirror for the node
 * list every 10 ms; returns how many answers that process got while this thread was blocked
 * (timestamps from the same system clock). The fixed 10 ms pace and the busy span are the
 * measurement itself, not waits for an event.
 */
async function answersWhileBlocked(ledger: LocalLedgerEndpoint, blockMs: number): Promise<number> {
  const script = `
    const url = ${JSON.stringify(`${ledger.mirrorUrl}/api/v1/network/nodes`)};
    let until = Date.now() + 10000;
    let said = false;
    while (Date.now() < until) {
      const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) console.log(JSON.stringify({ at: Date.now() }));
      if (ok && !said) { said = true; until = Date.now() + ${blockMs + 700}; console.log("ready"); }
      await Bun.sleep(10);
    }`;
  const child = Bun.spawn([BUN, "-e", script], { stdout: "pipe", stderr: "inherit" });
  onCleanup(() => {
    child.kill("SIGKILL");
    return child.exited;
  });
  let text = "";
  const reader = child.stdout.getReader();
  while (!text.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fetching process ended before the ledger answered");
    text += new TextDecoder().decode(value);
  }
  const from = Date.now();
  while (Date.now() - from < blockMs) {
    /* busy: this thread's event loop does not turn */
  }
  const to = Date.now();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const times = text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => (JSON.parse(l) as { at: number }).at);
  // An answer counts when it arrived well inside the blocked span.
  return times.filter((t) => t > from + 20 && t < to - 20).length;
}

describe("the embedded ledger's thread", () => {
  test("keeps answering while this thread is blocked for 300 ms (a ledger on this thread does not)", async () => {
    const log = memoryLogger();
    const onWorker = await startLedgerWorker({ dir: join(tempDir(), "ledger"), consensusMs: 100, log });
    onCleanup(() => onWorker.close());
    expect(await answersWhileBlocked(onWorker, 300)).toBeGreaterThan(3);

    // The control: the same check against a ledger on this thread sees nothing while blocked.
    const inThread = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 100 });
    onCleanup(() => inThread.close());
    expect(await answersWhileBlocked(inThread, 300)).toBe(0);
  }, 30_000);

  test("openLedger runs the ledger on a thread with the system clock, on this thread with an injected one; the SDK path works on both", async () => {
    for (const clock of [undefined, systemClock]) {
      const setup = await openLedger({ config: testConfig({ DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" }), log: memoryLogger(), ...(clock ? { clock } : {}) });
      onCleanup(() => setup.close());
      expect("failure" in setup.embedded!).toBe(true);
      expect("faults" in setup.embedded!).toBe(false);
      expect(await setup.ledger.ping()).toBe(true);
      expect(setup.failure()).toBeNull();
      await setup.close();
    }
    const manual = { now: () => Date.now() };
    const setup = await openLedger({ config: testConfig(), log: memoryLogger(), clock: manual });
    onCleanup(() => setup.close());
    expect("faults" in setup.embedded!).toBe(true);
    expect("failure" in setup.embedded!).toBe(false);
    expect(await setup.ledger.ping()).toBe(true);
  }, 30_000);

  test("its log lines are written by the caller's logger; close() frees the folder and ports", async () => {
    const dir = join(tempDir(), "ledger");
    const log = memoryLogger();
    const first = await startLedgerWorker({ dir, consensusMs: 100, log });
    const port = Number(new URL(first.mirrorUrl).port);
    await first.close();
    await first.close(); // idempotent
    // Its remembered mirror port taken: the ledger warns (on its thread) and moves.
    const squatter = Bun.serve({ hostname: "127.0.0.1", port, fetch: () => new Response("squatter") });
    onCleanup(() => squatter.stop(true));
    const second = await startLedgerWorker({ dir, consensusMs: 100, log });
    onCleanup(() => second.close());
    expect(Number(new URL(second.mirrorUrl).port)).not.toBe(port);
    const warning = log.lines.find((l) => String(l.msg).startsWith("local ledger: its remembered ports are taken"));
    expect(warning).toMatchObject({ level: "warn", host: "127.0.0.1", mirrorPort: port });
    expect(typeof warning!.time).toBe("string");
    await second.close();
    // Closed for real: the folder's lock is released.
    const again = await startLocalLedger({ dataDir: dir, consensusMs: 100 });
    await again.close();
  }, 30_000);

  test("a start failure rejects with the ledger's own message", async () => {
    const dir = join(tempDir(), "ledger");
    const holder = await startLocalLedger({ dataDir: dir, consensusMs: 100 });
    onCleanup(() => holder.close());
    const log = memoryLogger();
    await expect(startLedgerWorker({ dir, consensusMs: 100, log })).rejects.toThrow(/local ledger data folder is in use by process \d+/);
    expect(log.lines.filter((l) => l.level === "error")).toEqual([]);
  }, 30_000);

  test("serve exits 1 with the reason when the embedded ledger cannot start (its folder held by another ledger process)", async () => {
    const data = tempDir();
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", DOCVERIFY_PORT: "0" };
    const holder = Bun.spawn([BUN, MAIN, "local-ledger", "--data", data, "--json"], { env, stdout: "pipe", stderr: "pipe" });
    onCleanup(() => {
      holder.kill("SIGKILL");
      return holder.exited;
    });
    const reader = holder.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("mirrorUrl");

    const serve = Bun.spawn([BUN, MAIN, "serve", "--data", data], { env, stdout: "pipe", stderr: "pipe" });
    onCleanup(() => {
      serve.kill("SIGKILL");
      return serve.exited;
    });
    expect(await serve.exited).toBe(1);
    const stderr = await new Response(serve.stderr).text();
    expect(stderr).toMatch(new RegExp(`^docverify: local ledger data folder is in use by process ${holder.pid} \\(lock file .*ledger\\.lock\\)\\n$`));
    // serve listens before the ledger starts; it never reports the ledger ready, and says why it stops.
    const stdout = await new Response(serve.stdout).text();
    expect(stdout).not.toContain("ledger ready");
    expect(stdout).toContain("ledger failed to start");
  }, 30_000);

  test("a crash of the thread is logged and fails readiness; the caller's thread goes on; close() still resolves", async () => {
    const config = testConfig({ DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" });
    const log = memoryLogger();
    const core = openCore({ config, log });
    onCleanup(() => core.close());
    const anchoring = await startAnchoring({ config, journal: journalDrivers(core.store).journal, loop: anchoringDrivers(core.store).loop, clock: core.clock, log, masterKey: null, announcementFor: () => null, batchMessageFor: encodeBatchMessage, start: false, ledgerWorkerEntry: CRASHING_WORKER });
    onCleanup(() => anchoring.close());
    expect(await anchoring.readiness()).toBe(true);
    const mirrorUrl = anchoring.describe.ledgerMirrorUrl!;
    expect((await fetch(`${mirrorUrl}/api/v1/network/nodes`)).status).toBe(200);

    writeFileSync(join(config.dataDir, "ledger", "crash-now"), "");
    const line = await waitFor("the log line", () => log.lines.find((l) => l.msg === "local ledger: its thread stopped; nothing is anchored until serve is restarted"), 5000, 20);
    expect(line).toMatchObject({ level: "error", error: expect.stringContaining("ledger thread crash (test)") });
    // Readiness fails at once, though the health check's cached answer is still fresh.
    expect(await anchoring.readiness()).toMatch(/^the embedded local ledger's thread stopped: .*ledger thread crash \(test\)/);
    await expect(fetch(`${mirrorUrl}/api/v1/network/nodes`)).rejects.toThrow();
    // This thread is fine: storage answers, and closing does not wait for the dead thread.
    expect(core.db.$client.query("SELECT 1 AS one").get()).toEqual({ one: 1 });
    const started = Date.now();
    await anchoring.close();
    expect(Date.now() - started).toBeLessThan(5000);
  }, 30_000);

  test("its entry point loads the local ledger and nothing of the SDK", async () => {
    const built = await Bun.build({ entrypoints: [join(ROOT, "src", "local-ledger", "worker.ts")], target: "bun", metafile: true });
    expect(built.success).toBe(true);
    const inputs = Object.keys((built.metafile as { inputs: Record<string, unknown> }).inputs);
    expect(inputs.some((i) => i.includes("src/local-ledger/index.ts"))).toBe(true);
    expect(inputs.filter((i) => /@hashgraph[/\\]sdk|@hiero-ledger|hedera-ledger\.ts|anchoring[/\\]setup\.ts/.test(i))).toEqual([]);
  }, 30_000);
});

