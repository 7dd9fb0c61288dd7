/**
 * `docverify local-ledger --second-mirror-port P`: both mirror addresses printed (text and
 * JSON), both answering, remembered for the next start without the flag; usage errors exit 2;
 * --help names the flag.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, cleanup, onCleanup, tempDir } from "../support/env.ts";

afterEach(cleanup);

const MAIN = join(ROOT, "src", "main.ts");
const baseEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", USER: "tester" });

function cli(args: string[]) {
  const p = Bun.spawnSync([BUN, MAIN, ...args], { env: baseEnv() });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** Starts `docverify local-ledger` and resolves with its standard output once `lines` lines are out. */
function start(args: string[], lines: number) {
  const proc = Bun.spawn([BUN, MAIN, "local-ledger", "--consensus-ms", "100", ...args], { env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  onCleanup(() => {
    proc.kill("SIGKILL");
    return proc.exited;
  });
  const reader = proc.stdout.getReader();
  const out = (async () => {
    let text = "";
    while (text.split("\n").length <= lines) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`local-ledger exited: ${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(value);
    }
    return text;
  })();
  return { proc, out };
}

const status = async (url: string) => {
  const res = await fetch(`${url}/api/v1/network/nodes`);
  await res.body?.cancel();
  return res.status;
};

describe("docverify local-ledger --second-mirror-port", () => {
  test("--json gives mirrorUrls (mirrorUrl first); both answer; restarted without the flag, the same two", async () => {
    const data = tempDir();
    const first = start(["--data", data, "--json", "--second-mirror-port", "0"], 1);
    const info = JSON.parse((await first.out).split("\n")[0]!) as { mirrorUrl: string; mirrorUrls: string[] };
    expect(info.mirrorUrls).toHaveLength(2);
    expect(info.mirrorUrls[0]).toBe(info.mirrorUrl);
    expect(info.mirrorUrls[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await Promise.all(info.mirrorUrls.map(status))).toEqual([200, 200]);
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);

    const again = start(["--data", data], 3);
    const text = await again.out;
    expect(text).toMatch(/^grpc {4}127\.0\.0\.1:\d+\n/);
    expect(text.split("\n").filter((l) => l.startsWith("mirror  "))).toEqual(info.mirrorUrls.map((u) => `mirror  ${u}`));
    again.proc.kill("SIGINT");
    expect(await again.proc.exited).toBe(0);
    expect(await new Response(again.proc.stderr).text()).toContain(`DOCVERIFY_MIRROR_NODES=${info.mirrorUrls.join(",")}`);
  }, 30_000);

  test("without the flag on a new folder: one mirror address, in text and in JSON", async () => {
    const data = tempDir();
    const { proc, out } = start(["--data", data, "--json"], 1);
    const info = JSON.parse((await out).split("\n")[0]!) as { mirrorUrl: string; mirrorUrls: string[] };
    expect(info.mirrorUrls).toEqual([info.mirrorUrl]);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 30_000);

  test("usage errors exit 2 with one line", () => {
    for (const args of [
      ["--second-mirror-port", "x"],
      ["--second-mirror-port", "70000"],
      ["--second-mirror-port"],
      ["--mirror-port", "40123", "--second-mirror-port", "40123"],
    ]) {
      const r = cli(["local-ledger", "--data", tempDir(), ...args]);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(/second-mirror-port/);
    }
  });

  test("--help names the flag", () => {
    const r = cli(["local-ledger", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--second-mirror-port P");
  });
});
