/**
 * The embedded local ledger's ports as settings (DOCVERIFY_LOCAL_LEDGER_GRPC_PORT, _MIRROR_PORT,
 * _SECOND_MIRROR_PORT), over `docverify serve` as a process: a new data folder's ledger listens
 * on them, they win over the ports a folder remembers (which are then remembered instead), and a
 * port that is taken stops the start with a message naming it, rather than moving elsewhere.
 */
import { afterAll, expect, test } from "bun:test";
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, startService, tempDir } from "../support/env.ts";

afterAll(cleanup);

/** Free ports, found by listening on port 0 and closing. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

const remembered = (data: string) => JSON.parse(readFileSync(join(data, "ledger", "ports.json"), "utf8")) as Record<string, unknown>;

test("a new folder's embedded ledger listens on the ports set, and they win over remembered ones", async () => {
  const data = tempDir();
  const first = await startService({ env: { DOCVERIFY_DATA_DIR: data } });
  const before = remembered(data);
  expect(await first.stop()).toBe(0);

  const ports = await freePorts(3);
  const [grpc, mirror, second] = [ports[0]!, ports[1]!, ports[2]!];
  const svc = await startService({
    env: {
      DOCVERIFY_DATA_DIR: data,
      DOCVERIFY_LOCAL_LEDGER_GRPC_PORT: String(grpc),
      DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: String(mirror),
      DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT: String(second),
    },
  });
  expect(before.grpcPort).not.toBe(grpc);
  expect(remembered(data)).toMatchObject({ grpcPort: grpc, mirrorPort: mirror, secondMirrorPort: second });
  const nodes = (await (await fetch(`http://127.0.0.1:${mirror}/api/v1/network/nodes`)).json()) as { nodes: { service_endpoints: { port: number }[] }[] };
  expect(nodes.nodes[0]!.service_endpoints.map((e) => e.port)).toContain(grpc);
  expect((await fetch(`http://127.0.0.1:${second}/api/v1/network/nodes`)).status).toBe(200);
  // The ledger's links name the port set: a record's mirror URL is on it.
  const status = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), "status", "--json"], { env: { ...process.env, DOCVERIFY_DATA_DIR: data } });
  expect(status.stdout.toString()).toContain(`127.0.0.1:${mirror}`);
  expect(await svc.stop()).toBe(0);
}, 60_000);

test("a port set that is taken stops the start, naming it", async () => {
  const data = tempDir();
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()));
  const taken = (holder.address() as { port: number }).port;
  try {
    const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "serve"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", DOCVERIFY_PORT: "0", DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: String(taken) },
      stdout: "pipe",
      stderr: "pipe",
    });
    const code = await proc.exited;
    const out = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
    expect(code).not.toBe(0);
    expect(out).toContain(String(taken));
  } finally {
    holder.close();
  }
}, 60_000);
