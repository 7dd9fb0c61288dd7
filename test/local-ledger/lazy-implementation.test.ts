/**
 * serve's thread imports the local ledger's index.ts, keys.ts, remembered.ts and thread.ts (through
 * anchoring/setup.ts) but runs the ledger on its worker thread: importing them must not evaluate
 * the ledger's implementation (open.ts and what it imports: gRPC, the mirror, the store) nor
 * @hashgraph/proto, which would sit in serve's idle memory for nothing (docs/benchmarks.md, "Idle
 * memory"). The first start loads them. Each case runs in a fresh process, whose module registry
 * (`require.cache`, which lists ES modules too) says what was evaluated.
 *
 * A started ledger holds no @hashgraph/proto either until it needs it (docs/local-ledger.md, "Idle
 * memory"): on serve's worker thread, neither a first start nor a start on an existing folder
 * evaluates it; the first gRPC call does, and is answered. The worker's own registry is read by a
 * wrapper entry point (thread.ts `entry`) that reports it with the `started` and `closed` answers.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { proto } from "@hashgraph/proto";
import Long from "long";
import { memoryLogger } from "../../src/lib/log.ts";
import { encodeEd25519Key } from "../../src/local-ledger/keys.ts";
import { startLedgerWorker } from "../../src/local-ledger/thread.ts";

const SRC = join(import.meta.dir, "..", "..", "src");
/** Modules that only a started ledger needs. */
const IMPLEMENTATION = [/\/src\/local-ledger\/open\.ts$/, /\/src\/local-ledger\/grpc\.ts$/, /\/src\/local-ledger\/mirror\.ts$/, /\/src\/local-ledger\/store\.ts$/, /\/src\/local-ledger\/key-codec\.ts$/, /@hashgraph\/proto\//];

/** Runs `body` after the light imports in a fresh process; returns the evaluated modules it prints. */
async function evaluatedIn(body: string): Promise<string[]> {
  const code = `
    await import(${JSON.stringify(join(SRC, "local-ledger", "index.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "keys.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "remembered.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "thread.ts"))});
    ${body}
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));
  `;
  const proc = Bun.spawn([process.execPath, "-e", code], { cwd: join(SRC, ".."), stdout: "pipe", stderr: "pipe" });
  const [out, err, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (exit !== 0) throw new Error(`the probe exited with ${exit}: ${err}`);
  return JSON.parse(out) as string[];
}

const implementationIn = (modules: string[]) => modules.filter((m) => IMPLEMENTATION.some((re) => re.test(m)));

test("importing the local ledger's entry points evaluates none of its implementation", async () => {
  const modules = await evaluatedIn("");
  // The probe sees what it imported: the check below is not vacuous.
  expect(modules.some((m) => m.endsWith("/src/local-ledger/index.ts"))).toBe(true);
  expect(modules.some((m) => m.endsWith("/src/local-ledger/remembered.ts"))).toBe(true);
  expect(implementationIn(modules)).toEqual([]);
}, 20_000);

const PROTO = /@hashgraph\/proto\//;
const protoIn = (modules: readonly string[]) => modules.filter((m) => PROTO.test(m));

test("the first start loads the implementation but not @hashgraph/proto; a mirror read of a row loads it, and the ledger works", async () => {
  const dir = mkdtempSync(join(tmpdir(), "docverify-lazy-ledger-"));
  try {
    const modules = await evaluatedIn(`
      const { startLedger } = await import(${JSON.stringify(join(SRC, "local-ledger", "index.ts"))});
      const ledger = await startLedger({ dataDir: ${JSON.stringify(dir)} });
      const res = await fetch(ledger.mirrorUrl + "/api/v1/network/nodes");
      if (res.status !== 200) throw new Error("the mirror answered " + res.status);
      await res.arrayBuffer();
      const before = Object.keys(require.cache).filter((m) => /@hashgraph\\/proto\\//.test(m));
      if (before.length) throw new Error("started, @hashgraph/proto was evaluated: " + before.join(", "));
      const account = await fetch(ledger.mirrorUrl + "/api/v1/accounts/0.0.2");
      const key = (await account.json()).key;
      if (account.status !== 200 || key._type !== "ED25519" || key.key !== ${JSON.stringify(DEV_PUBLIC_KEY_HEX)}) throw new Error("the mirror showed 0.0.2 as " + JSON.stringify(key));
      await ledger.close();
    `);
    const loaded = implementationIn(modules);
    expect(loaded.some((m) => m.endsWith("/src/local-ledger/open.ts"))).toBe(true);
    expect(loaded.some((m) => m.endsWith("/src/local-ledger/mirror.ts"))).toBe(true);
    // Loaded by the account read, after the check above.
    expect(protoIn(loaded).length).toBeGreaterThan(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20_000);

/** The development key's raw public key, hex: the tail of its SPKI DER. */
const DEV_PUBLIC_KEY_HEX = "0aa8e21064c61eab86e2a9c164565b4e7a9a4146106e0a6cd03a8c395a110e92";

test("genesis writes the key as proto.Key.encode would", () => {
  for (const publicKey of [Buffer.from(DEV_PUBLIC_KEY_HEX, "hex"), new Uint8Array(32).fill(0xff), new Uint8Array(0), new Uint8Array(200).fill(7)]) {
    expect(Buffer.from(encodeEd25519Key(publicKey)).toString("hex")).toBe(Buffer.from(proto.Key.encode({ ed25519: publicKey }).finish()).toString("hex"));
  }
});

/**
 * A wrapper entry point for the ledger's thread: worker.ts, with the thread's evaluated modules
 * sent as a log line just before its `started` and `closed` answers.
 */
function spyingEntry(dir: string): URL {
  writeFileSync(
    join(dir, "spy.ts"),
    `
    declare const self: Worker;
    const post = self.postMessage.bind(self);
    (self as unknown as { postMessage: (m: { type: string }) => void }).postMessage = (m) => {
      if (m.type === "started" || m.type === "closed") {
        post({ type: "log", line: JSON.stringify({ level: "info", msg: "evaluated modules", when: m.type, modules: Object.keys(require.cache) }) });
      }
      post(m);
    };
    `,
  );
  writeFileSync(join(dir, "entry.ts"), `import "./spy.ts";\nimport ${JSON.stringify(join(SRC, "local-ledger", "worker.ts"))};\n`);
  return new URL(`file://${join(dir, "entry.ts")}`);
}

/** One unary gRPC call on a fresh connection: the response message's bytes, or the grpc-status that failed it. */
function grpcCall(address: string, path: string, message: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${address}`);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers" });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    req.on("response", (h) => (status ??= h["grpc-status"] as string | undefined));
    req.on("trailers", (t) => (status ??= t["grpc-status"] as string | undefined));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", reject);
    req.on("close", () => {
      session.close();
      const body = Buffer.concat(chunks);
      if (status !== "0" || body.length < 5) reject(new Error(`grpc-status ${status}`));
      else resolve(new Uint8Array(body.subarray(5)));
    });
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    req.end(frame);
  });
}

test("on its thread, a ledger evaluates @hashgraph/proto at the first gRPC call, not when it starts on a new or an existing folder", async () => {
  const dir = mkdtempSync(join(tmpdir(), "docverify-lazy-proto-"));
  const ledgerDir = join(dir, "ledger");
  const entry = spyingEntry(dir);
  const run = async (body: (grpcAddress: string) => Promise<void>): Promise<{ started: string[]; closed: string[] }> => {
    const log = memoryLogger("debug");
    const ledger = await startLedgerWorker({ dir: ledgerDir, consensusMs: 50, log, entry });
    try {
      await body(ledger.grpcAddress);
    } finally {
      await ledger.close();
    }
    const at = (when: string) => (log.lines.find((l) => l.msg === "evaluated modules" && l.when === when)?.modules as string[] | undefined) ?? null;
    const started = at("started");
    const closed = at("closed");
    // The spy reported, and saw the ledger's modules: the checks below are not vacuous.
    expect(started?.some((m) => m.endsWith("/src/local-ledger/open.ts"))).toBe(true);
    expect(closed?.some((m) => m.endsWith("/src/local-ledger/grpc.ts"))).toBe(true);
    return { started: started!, closed: closed! };
  };
  try {
    // A new folder (genesis), which nothing calls.
    const first = await run(async () => undefined);
    expect(protoIn(first.started)).toEqual([]);
    expect(protoIn(first.closed)).toEqual([]);

    // The same folder again, and a balance query: answered, with @hashgraph/proto loaded for it.
    let balance = 0;
    const second = await run(async (grpcAddress) => {
      const query = proto.Query.encode({ cryptogetAccountBalance: { accountID: { accountNum: Long.fromNumber(2) } } }).finish();
      const response = proto.Response.decode(await grpcCall(grpcAddress, "/proto.CryptoService/cryptoGetBalance", query));
      balance = Number(response.cryptogetAccountBalance?.balance ?? 0);
    });
    expect(protoIn(second.started)).toEqual([]);
    expect(second.started.filter((m) => /\/src\/local-ledger\/(node|grpc-methods|mirror-views|key-codec|faults)\.ts$/.test(m))).toEqual([]);
    expect(protoIn(second.closed).length).toBeGreaterThan(0);
    expect(second.closed.some((m) => m.endsWith("/src/local-ledger/grpc-methods.ts"))).toBe(true);
    expect(balance).toBeGreaterThan(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
