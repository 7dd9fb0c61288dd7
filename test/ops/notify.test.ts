/**
 * Type=notify readiness: `serve` sends READY=1 on $NOTIFY_SOCKET once it listens, and
 * STOPPING=1 when it drains, from the source and from the compiled executable (where bun:ffi
 * must work too). The listening end is Python's socket module, an implementation independent
 * of ours, bound as systemd binds it: a unix datagram socket, by path or in the abstract namespace.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { notifyAddress } from "../../src/lib/sd-notify.ts";
import { productBuild } from "../support/build.ts";
import { requireProgram } from "../support/programs.ts";
import { cleanup, onCleanup, startService, tempDir } from "../support/env.ts";

afterAll(cleanup);

const LISTENER = `
import json, socket, sys
addr = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\\0" + addr[1:] if addr.startswith("@") else addr)
print("bound", flush=True)
s.settimeout(30)
while True:
    msg = s.recv(4096).decode()
    print(json.dumps(msg), flush=True)
    if "STOPPING=1" in msg.split("\\n"):
        break
`;

/** A datagram listener at `address`; resolves with the messages it got once STOPPING=1 arrives. */
async function listen(address: string): Promise<{ messages: Promise<string[]> }> {
  const python = requireProgram("python3");
  const proc = Bun.spawn([python, "-c", LISTENER, address], { stdout: "pipe", stderr: "pipe" });
  onCleanup(() => {
    proc.kill("SIGKILL");
    return proc.exited;
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("bound\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`listener failed: ${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
  }
  const messages = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (value !== undefined) text += new TextDecoder().decode(value);
      if (done) break;
    }
    await proc.exited;
    return text
      .split("\n")
      .slice(1)
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as string);
  })();
  return { messages };
}

async function readinessOf(cmd: string[] | undefined, address: string) {
  const { messages } = await listen(address);
  const svc = await startService({ cmd, env: { NOTIFY_SOCKET: address, DOCVERIFY_DATA_DIR: tempDir() } });
  // READY=1 went out after the "started" line; the service answers by then.
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  expect(await svc.stop()).toBe(0);
  const got = await messages;
  expect(got).toEqual([`READY=1\nSTATUS=serving on ${svc.url}\nMAINPID=${svc.proc.pid}`, "STOPPING=1\nSTATUS=draining"]);
  expect(svc.logLines().filter((l) => l.level === "error")).toEqual([]);
}

describe("sd_notify", () => {
  test("serve notifies readiness and stopping on a socket path", async () => {
    await readinessOf(undefined, join(tempDir(), "notify.sock"));
  }, 30_000);

  test("and on an abstract socket", async () => {
    await readinessOf(undefined, `@docverify-test-${process.pid}-${Date.now()}`);
  }, 30_000);

  test("the compiled executable notifies too", async () => {
    // The run's build (support/build.ts), made by the first file that needs it.
    const build = productBuild();
    expect(build.exitCode, build.stderr).toBe(0);
    await readinessOf([build.binary], join(tempDir(), "notify.sock"));
  }, 120_000);

  test("without NOTIFY_SOCKET nothing is attempted; a bad one is logged, not fatal", async () => {
    const quiet = await startService({ env: { DOCVERIFY_DATA_DIR: tempDir() } });
    expect(await quiet.stop()).toBe(0);
    expect(quiet.logLines().filter((l) => l.msg === "systemd notification failed")).toEqual([]);

    const nobody = await startService({ env: { DOCVERIFY_DATA_DIR: tempDir(), NOTIFY_SOCKET: join(tempDir(), "nobody-listens.sock") } });
    expect((await fetch(`${nobody.url}/healthz`)).status).toBe(200);
    expect(await nobody.stop()).toBe(0);
    expect(nobody.logLines().filter((l) => l.msg === "systemd notification failed").map((l) => l.state)).toEqual(["READY=1", "STOPPING=1"]);
  }, 30_000);

  test("socket addresses are laid out as sd_notify(3) does", () => {
    const path = notifyAddress("/run/systemd/notify");
    expect(path.length).toBe(2 + "/run/systemd/notify".length + 1);
    expect(Buffer.from(path.addr.subarray(0, path.length)).toString("latin1")).toBe("\x01\x00/run/systemd/notify\x00");
    const abstract = notifyAddress("@abc");
    expect(abstract.length).toBe(2 + 1 + 3);
    expect(Buffer.from(abstract.addr.subarray(0, abstract.length)).toString("latin1")).toBe("\x01\x00\x00abc");
    expect(() => notifyAddress(`/${"x".repeat(120)}`)).toThrow("longer than a unix socket address allows");
  });
});
