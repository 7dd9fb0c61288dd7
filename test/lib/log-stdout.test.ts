/**
 * The stdout logger (src/lib/log.ts): lines are gathered and written together, yet none is lost
 * when the process exits, an error line takes everything before it out at once, and lines keep
 * their order.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, cleanup, ROOT, tempDir } from "../support/env.ts";

afterAll(cleanup);

async function run(body: string, options: { readAfterMs?: number } = {}): Promise<{ lines: { msg: string; level: string; n?: number }[]; code: number | null }> {
  const file = join(tempDir(), "logging.ts");
  await Bun.write(file, `import { createLogger } from ${JSON.stringify(join(ROOT, "src", "lib", "log.ts"))};\nconst log = createLogger({ level: "info" });\n${body}\n`);
  // A slow reader: a pipe nobody reads for a while, so it fills while the child still writes (as
  // a busy journald lets it); the child's own exit status is kept (pipefail).
  const cmd =
    options.readAfterMs === undefined
      ? [BUN, file]
      : ["bash", "-c", `set -o pipefail; "$0" "$1" | (sleep ${options.readAfterMs / 1000}; cat)`, BUN, file];
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { lines: out.trim() === "" ? [] : out.trim().split("\n").map((l) => JSON.parse(l)), code };
}

test("every line written before the process exits is on stdout, in order, also past the batch size and with a slow reader", async () => {
  // process.stdout.write queued what the full pipe did not take, and process.exit dropped it.
  const { lines, code } = await run(`for (let n = 0; n < 20000; n++) log.info("line", { n, pad: "x".repeat(100) });\nprocess.exit(0);`, { readAfterMs: 300 });
  expect(code).toBe(0);
  expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 20000 }, (_, n) => n));
});

test("an error line is written at once, with every line before it: a process killed right after loses none of them", async () => {
  const { lines } = await run(`log.info("first");\nlog.info("second");\nlog.error("broken", { n: 3 });\nprocess.kill(process.pid, "SIGKILL");`);
  expect(lines.map((l) => [l.level, l.msg])).toEqual([["info", "first"], ["info", "second"], ["error", "broken"]]);
});

test("lines of a quiet process appear within milliseconds, not at exit", async () => {
  const { lines } = await run(`log.info("early");\nsetTimeout(() => { process.kill(process.pid, "SIGKILL"); }, 200);`);
  expect(lines.map((l) => l.msg)).toEqual(["early"]);
});

test("a line is JSON.stringify({ time, level, msg, ...fields }), whichever path writes it", async () => {
  const { createLogger } = await import("../../src/lib/log.ts");
  const lines: string[] = [];
  const at = Date.UTC(2026, 10, 24, 19, 30, 1, 7);
  const log = createLogger({ level: "debug", write: (l) => lines.push(l), now: () => at });
  const cases: [string, Record<string, unknown> | undefined][] = [
    ["request", { requestId: "r1", method: "GET", route: "/healthz", status: 200, durationMs: 0.07, peer: "127.0.0.1" }],
    ['quote " msg \u2028', { a: 'x"y', b: null, c: true, d: undefined }],
    ["no fields", undefined],
    ["empty fields", {}],
    ["overrides", { msg: "replaced", time: "t", level: "l" }],
    ["an error", { error: new Error("boom") }],
  ];
  for (const [msg, fields] of cases) log.info(msg, fields);
  const time = new Date(at).toISOString();
  cases.forEach(([msg, fields], i) => {
    const plain = fields === undefined || Object.values(fields).every((v) => v === null || ["string", "number", "boolean", "undefined"].includes(typeof v));
    const expected = plain ? JSON.stringify({ time, level: "info", msg, ...fields }) : JSON.parse(lines[i]!) && lines[i];
    expect(lines[i]).toBe(expected!);
  });
  expect(JSON.parse(lines[5]!).error.message).toBe("boom");
});
