/**
 * The local ledger's implementation: options checked, the folder locked, genesis, the consensus
 * node, the gRPC endpoint and the mirror listeners. index.ts is the contract and the entry points;
 * they load this file on the first start (see there why).
 *
 * What needs @hashgraph/proto is loaded on first need, not at the start, so a running ledger that
 * no client has called holds no protobuf classes (docs/local-ledger.md, "Idle memory"): the node
 * and the gRPC methods (node.ts, grpc-methods.ts) at the first gRPC call or the first consensus
 * run (a transaction due, also one left pending by the last run), the mirror's views at the first
 * mirror request that shows a row (mirror.ts), the test hooks (faults.ts) by `startLocalLedger`.
 * Genesis writes its key without them (keys.ts `encodeEd25519Key`). Nothing answers differently
 * for it: a first call waits for the load, then is served as any other.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEd25519Verifier } from "../crypto/ed25519.ts";
import { systemClock } from "../lib/clock.ts";
import { lockFileHolder } from "../lib/lock-file.ts";
import { createLogger } from "../lib/log.ts";
import type { FaultInjector } from "./faults.ts";
import { hostPort, startGrpcEndpoint, type GrpcMethods } from "./grpc.ts";
import { LOCAL_LEDGER_FILES } from "./files.ts";
import { entityId } from "./ids.ts";
import type { LocalLedger, LocalLedgerOptions, RunningLedger } from "./index.ts";
import { DEVELOPMENT_OPERATOR_KEY, ed25519KeyPairFromDer, encodeEd25519Key, type Ed25519KeyPair } from "./keys.ts";
import { CORS_HEADERS, createMirrorHandler } from "./mirror.ts";
import type { LedgerNode } from "./node.ts";
import { FEE_COLLECTION_ACCOUNT, GENESIS_ACCOUNT, NODE_ACCOUNT } from "./rules.ts";
import { FIRST_ENTITY_NUM, openLedgerStore, type LedgerStore } from "./store.ts";

const OPTION_NAMES = ["dataDir", "host", "grpcPort", "mirrorPort", "secondMirrorPort", "consensusMs", "consensusIntervalMs", "receiptTtlMs", "operatorKey", "clock", "log"];
const GENESIS_BALANCE = 5_000_000_000_000_000; // 50,000,000 hbar in tinybars
/** How often the scheduler looks for due work besides its precise wake-ups (manual clocks, resumes). */
const POLL_MS = 250;

function checkOptions(options: LocalLedgerOptions): void {
  for (const key of Object.keys(options)) if (!OPTION_NAMES.includes(key)) throw new TypeError(`startLocalLedger: unknown option ${key}`);
  if (typeof options.dataDir !== "string" || options.dataDir === "") throw new TypeError("startLocalLedger: dataDir is required");
  const port = (name: string, v: number | undefined): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 65535)) throw new TypeError(`startLocalLedger: ${name} must be a port number, got ${v}`);
  };
  port("grpcPort", options.grpcPort);
  port("mirrorPort", options.mirrorPort);
  port("secondMirrorPort", options.secondMirrorPort);
  if (options.secondMirrorPort !== undefined && options.secondMirrorPort !== 0 && options.secondMirrorPort === options.mirrorPort) {
    throw new TypeError(`startLocalLedger: secondMirrorPort must differ from mirrorPort, got ${options.secondMirrorPort} for both`);
  }
  const ms = (name: string, v: number | undefined): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 86_400_000)) throw new TypeError(`startLocalLedger: ${name} must be 0 to 86400000 ms, got ${v}`);
  };
  ms("consensusMs", options.consensusMs);
  ms("consensusIntervalMs", options.consensusIntervalMs);
  ms("receiptTtlMs", options.receiptTtlMs);
  if (options.host !== undefined && (typeof options.host !== "string" || options.host === "")) throw new TypeError("startLocalLedger: host must be a non-empty string");
  if (options.operatorKey !== undefined && typeof options.operatorKey !== "string") throw new TypeError("startLocalLedger: operatorKey must be a hex DER string");
}

/**
 * One ledger per data folder: two would both run consensus on the same topics. The lock file
 * names the owning process; a lock left by a process that no longer exists (killed) is taken over.
 */
function acquireLock(path: string): () => void {
  const mine = String(process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, mine, { flag: "wx", mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = lockFileHolder(path);
      if (owner !== null) throw new Error(`local ledger data folder is in use by process ${owner} (lock file ${path})`);
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not take the local ledger lock ${path}`);
}

/**
 * Creates the genesis state on first start, with `requested` (an explicit key, or the development
 * key when `explicit` is false); returns the operator's keys. A ledger keeps the key it was created
 * with (ledgers created before the development key have a random one): an explicit key that
 * differs is refused rather than silently not used. The database is the authority; `operator.key`
 * beside it (hex DER, owner-only) is a copy for a process that uses this ledger without starting
 * it, rewritten if missing or different.
 */
async function ensureGenesis(store: LedgerStore, keyFile: string, requested: Ed25519KeyPair, explicit: boolean): Promise<{ privateKeyDer: string; publicKeyDer: string }> {
  const writeKeyFile = (privateKeyDer: string): void => {
    if (existsSync(keyFile) && readFileSync(keyFile, "utf8").trim() === privateKeyDer) return;
    const tmp = `${keyFile}.tmp`;
    writeFileSync(tmp, `${privateKeyDer}\n`, { mode: 0o600 });
    renameSync(tmp, keyFile);
  };
  const existing = store.getMeta("operator_private_key_der");
  const existingPublic = store.getMeta("operator_public_key_der");
  if (existing && existingPublic) {
    if (explicit && existingPublic !== requested.publicKeyDer) {
      throw new Error(
        `this local ledger was created with another operator key (public key ${existingPublic}) and keeps it: ` +
          "start it without an operator key of its own, or start a new ledger in an empty folder",
      );
    }
    writeKeyFile(existing);
    return { privateKeyDer: existing, publicKeyDer: existingPublic };
  }

  const { privateKeyDer, publicKeyDer } = requested;
  const key = encodeEd25519Key(requested.publicKey);
  store.atomically(() => {
    // Like a fresh local Hedera network, the system accounts share the genesis key.
    store.insertAccount({ num: GENESIS_ACCOUNT, key, balance: GENESIS_BALANCE });
    store.insertAccount({ num: NODE_ACCOUNT, key, balance: 0 });
    store.insertAccount({ num: FEE_COLLECTION_ACCOUNT, key, balance: 0 });
    store.setMeta("next_entity_num", String(FIRST_ENTITY_NUM));
    store.setMeta("operator_private_key_der", privateKeyDer);
    store.setMeta("operator_public_key_der", publicKeyDer);
  });
  writeKeyFile(privateKeyDer);
  return { privateKeyDer, publicKeyDer };
}

/** A ledger as openLedger returns it: with the socket switch the `unreachable` fault drives. */
type OpenedLedger = RunningLedger & { setUnreachable(on: boolean): Promise<void> };

/** Starts a ledger in this thread with test hooks (`faults`): for tests. */
export async function startLocalLedger(options: LocalLedgerOptions): Promise<LocalLedger> {
  const { createFaultInjector } = await import("./faults.ts");
  let ledger: OpenedLedger;
  const injector = createFaultInjector({
    setUnreachable: (on) => ledger.setUnreachable(on),
    wake: () => void ledger.runConsensus(),
  });
  ledger = await openLedger(options, injector);
  const { setUnreachable: _, ...running } = ledger;
  return { ...running, faults: injector.controls };
}

/** Starts a ledger in this thread without test hooks: what runs for real (remembered.ts). */
export async function startLedger(options: LocalLedgerOptions): Promise<RunningLedger> {
  const { setUnreachable: _, ...running } = await openLedger(options, null);
  return running;
}

async function openLedger(options: LocalLedgerOptions, injector: FaultInjector | null): Promise<OpenedLedger> {
  checkOptions(options);
  const host = options.host ?? "127.0.0.1";
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger({ level: "warn" });
  const consensusMs = options.consensusMs ?? 3000;
  // Checked before anything is opened: a malformed key is the caller's mistake, said plainly.
  const requestedKey = ed25519KeyPairFromDer(options.operatorKey ?? DEVELOPMENT_OPERATOR_KEY.privateKeyDer);

  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLock(join(options.dataDir, LOCAL_LEDGER_FILES.lock));
  let store: LedgerStore;
  try {
    store = openLedgerStore(join(options.dataDir, LOCAL_LEDGER_FILES.database));
  } catch (err) {
    releaseLock();
    throw err;
  }

  let closed = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerAt = Number.POSITIVE_INFINITY;
  const inFlight = new Set<Promise<unknown>>();
  /** The node, created on first need (see the file's comment); null until then. */
  let node: Promise<LedgerNode> | null = null;
  const loadNode = (): Promise<LedgerNode> =>
    (node ??= import("./node.ts").then(({ createLedgerNode }) =>
      createLedgerNode({
        store,
        clock,
        consensusMs,
        consensusIntervalMs: options.consensusIntervalMs ?? 0,
        receiptTtlMs: options.receiptTtlMs ?? 180_000,
        ...(injector ? { faults: injector.faults } : {}),
        verifyEd25519: createEd25519Verifier(),
        onAccepted: arm,
      }),
    ));

  // A consensus failure is a bug, and the poll would repeat it four times a second: log the
  // first, then at most one a minute with a count of those not logged.
  let lastErrorLogMs = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  const runConsensus = async (): Promise<number> => {
    if (closed) return 0;
    try {
      const loaded = await loadNode();
      // Closed while the node loaded: close() no longer waits for a run that starts now.
      if (closed) return 0;
      return await loaded.runConsensus();
    } catch (err) {
      const now = clock.now();
      if (now - lastErrorLogMs >= 60_000) {
        log.error("local ledger: consensus failed; pending transactions stay pending", { err, suppressed });
        lastErrorLogMs = now;
        suppressed = 0;
      } else {
        suppressed++;
      }
      return 0;
    }
  };

  /** Wakes the scheduler at `dueMs` (per the injected clock), unless it already wakes earlier. */
  const arm = (dueMs: number): void => {
    if (closed || (timer && timerAt <= dueMs)) return;
    if (timer) clearTimeout(timer);
    timerAt = dueMs;
    timer = setTimeout(
      () => {
        timer = null;
        timerAt = Number.POSITIVE_INFINITY;
        void runConsensus().then(() => {
          const next = closed ? null : store.nextDueMs();
          // Work already due but not done (consensus paused) is left to the poll.
          if (next != null && next > clock.now()) arm(next);
        });
      },
      Math.max(0, dueMs - clock.now()),
    );
    timer.unref?.();
  };

  let setUnreachable: (on: boolean) => Promise<void> = async () => undefined;

  try {
    const operatorKeys = await ensureGenesis(store, join(options.dataDir, LOCAL_LEDGER_FILES.operatorKey), requestedKey, options.operatorKey !== undefined);
    const track = <T>(p: Promise<T>): Promise<T> => {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p)).catch(() => undefined);
      return p;
    };
    let methods: Promise<GrpcMethods> | null = null;
    const loadMethods = (): Promise<GrpcMethods> =>
      (methods ??= Promise.all([import("./grpc-methods.ts"), loadNode()]).then(([{ buildMethods }, loaded]) =>
        buildMethods({
          // A swallowed transaction is never answered: its promise is not waited for at close.
          submit: (r) => (injector?.faults.swallowed() ? new Promise<never>(() => {}) : track(loaded.submit(r))),
          query: (r) => track(loaded.query(r)),
        }),
      ));

    const grpcEndpoint = await startGrpcEndpoint({ host, port: options.grpcPort ?? 0, methods: loadMethods, log });

    const fetch = createMirrorHandler({ store, grpcEndpoint: () => ({ host, port: grpcEndpoint.port }) });
    const serveMirror = (port: number) =>
      Bun.serve({
        hostname: host,
        port,
        fetch,
        error(err) {
          log.error("local ledger: mirror handler failed", { err });
          return new Response(JSON.stringify({ _status: { messages: [{ message: "Internal error" }] } }), {
            status: 500,
            headers: { "content-type": "application/json; charset=utf-8", ...CORS_HEADERS },
          });
        },
      });
    // One listener per requested mirror port, all over the same handler and store.
    const requestedPorts = [options.mirrorPort ?? 0, ...(options.secondMirrorPort !== undefined ? [options.secondMirrorPort] : [])];
    let mirrors: ReturnType<typeof Bun.serve>[] = [];
    try {
      for (const p of requestedPorts) mirrors.push(serveMirror(p));
    } catch (err) {
      await Promise.all(mirrors.map((m) => m.stop(true)));
      await grpcEndpoint.stop();
      throw err;
    }
    const mirrorPorts = mirrors.map((m) => m.port ?? 0);

    let unreachable = false;
    let reachability = Promise.resolve();
    // Serialised, so quick on/off/on calls from a test land in order.
    setUnreachable = (on) => {
      reachability = reachability.catch(() => undefined).then(async () => {
        if (closed || on === unreachable) return;
        unreachable = on;
        if (on) {
          await grpcEndpoint.stop();
          const stopping = mirrors;
          mirrors = [];
          await Promise.all(stopping.map((m) => m.stop(true)));
        } else {
          await grpcEndpoint.restart();
          for (const p of mirrorPorts) {
            for (let attempt = 0; ; attempt++) {
              try {
                mirrors.push(serveMirror(p));
                break;
              } catch (err) {
                if (attempt >= 50) throw err;
                await new Promise((r) => setTimeout(r, 20));
              }
            }
          }
        }
      });
      return reachability;
    };

    const poll = setInterval(() => {
      const next = store.nextDueMs();
      if (next != null && next <= clock.now()) void runConsensus();
    }, POLL_MS);
    poll.unref?.();
    // Transactions accepted before a restart.
    const pending = store.nextDueMs();
    if (pending != null) arm(pending);

    const mirrorHost = host.includes(":") ? `[${host}]` : host;
    const mirrorUrls = Object.freeze(mirrorPorts.map((p) => `http://${mirrorHost}:${p}`));
    return {
      grpcAddress: hostPort(host, grpcEndpoint.port),
      nodeAccountId: entityId(NODE_ACCOUNT) as "0.0.3",
      mirrorUrl: mirrorUrls[0]!,
      mirrorUrls,
      operator: { accountId: entityId(GENESIS_ACCOUNT), ...operatorKeys },
      runConsensus,
      setUnreachable: (on) => setUnreachable(on),
      async close() {
        if (closed) return;
        await reachability.catch(() => undefined);
        closed = true;
        clearInterval(poll);
        if (timer) clearTimeout(timer);
        await grpcEndpoint.stop();
        await Promise.all(mirrors.map((m) => m.stop(true)));
        mirrors = [];
        await Promise.allSettled([...inFlight]);
        // A node that was never needed has nothing running.
        if (node !== null) await node.then((n) => n.whenIdle(), () => undefined);
        store.close();
        releaseLock();
      },
    };
  } catch (err) {
    closed = true;
    store.close();
    releaseLock();
    throw err;
  }
}
