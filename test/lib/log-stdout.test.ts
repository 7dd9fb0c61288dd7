/**
 * The stdout logger (src/lib/log.ts): lines are gathered and written together, yet none is lost
 * when the process exits, an error line takes everything before it out at once, and lines keep
 * their order.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, cleanup, ROOT, tempDir } from "../support/env.ts";

afterAll(cleanup);

async function run(body: string): Promise<{ lines: { msg: string; level: string; n?: number }[]; code: number | null }> {
  const file = join(tempDir(), "logging.ts");
  await Bun.write(file, `import { createLogger } from ${JSON.stringify(join(ROOT, "src", "lib", "log.ts"))};\nconst log = createLogger({ level: "info" });\n${body}\n`);
  const proc = Bun.spawn([BUN, file], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { lines: out.trim() === "" ? [] : out.trim().split("\n").map((l) => JSON.parse(l)), code };
}

test("every line written before the process exits is on stdout, in order, also past the batch size", async () => {
  const { lines, code } = await run(`for (let n = 0; n < 3000; n++) log.info("line", { n, pad: "x".repeat(100) });\nprocess.exit(0);`);
  expect(code).toBe(0);
  expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 3000 }, (_, n) => n));
});

test("an error line is written at once, with every line before it: a process killed right after loses none of them", async () => {
  const { lines } = await run(`log.info("first");\nlog.info("second");\nlog.error("broken", { n: 3 });\nprocess.kill(process.pid, "SIGKILL");`);
  expect(lines.map((l) => [l.level, l.msg])).toEqual([["info", "first"], ["info", "second"], ["error", "broken"]]);
});

test("lines of a quiet process appear within milliseconds, not at exit", async () => {
  const { lines } = await run(`log.info("early");\nsetTimeout(() => { process.kill(process.pid, "SIGKILL"); }, 200);`);
  expect(lines.map((l) => l.msg)).toEqual(["early"]);
});
