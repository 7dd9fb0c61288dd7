/**
 * The local ledger: a single-node Hedera network on loopback for machines with no route to a
 * real one. It is a separate program, not part of docverify's anchoring: it speaks Hedera's wire
 * protocol (the gRPC API `@hashgraph/sdk` talks to, and the mirror node's REST API), and the
 * product reaches it only through that protocol, with the real SDK, as it would reach Hedera. It
 * runs on its own (`docverify local-ledger`), on a worker thread of `serve` (the embedded
 * default), or in a test's thread. It imports only src/lib/ and src/crypto/ of docverify, plus
 * its own vendor libraries (@hashgraph/proto, @grpc/grpc-js, protobufjs). See
 * docs/local-ledger.md for what it implements and how faithfully.
 *
 * Contract of `startLocalLedger`:
 * - Resolves once every listener is up; `grpcAddress`, `mirrorUrl` and `mirrorUrls` carry the
 *   real ports (ports 0 pick free ones).
 * - With `secondMirrorPort`, the mirror REST API listens on a second port as well: two mirror
 *   base URLs over the same store, so the same answers (a receipt is checked against two mirror
 *   nodes, docs/receipts.md §3). They are not independent witnesses; they let the verifier's
 *   two-mirror path run end to end on one machine.
 * - The data folder holds the ledger's SQLite file and a lock file; one ledger at a time may use
 *   a folder. Everything (accounts, topics, messages, seen transaction ids, pending
 *   transactions, the genesis key) survives a restart, and pending transactions reach consensus
 *   after it.
 * - `operator` is the genesis account 0.0.2. Its ED25519 key is fixed when the ledger is created:
 *   `operatorKey` if given, else the public development key (keys.ts, decisions §11). A ledger
 *   keeps the key it was created with; given a different `operatorKey` later, it refuses to start.
 * - `close()` stops listening, waits for work in flight and closes the database; a pending
 *   transaction stays pending for the next start.
 * - Nothing here reads process.env: the caller passes every setting.
 * - Test hooks (`faults`, faults.ts) exist only on a ledger started with `startLocalLedger`; one
 *   started with `startLedger` (what runs for real) has none.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEd25519Verifier } from "../crypto/ed25519.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import { LEDGER_LOCK_FILE, lockFileHolder } from "../lib/lock-file.ts";
import { createLogger, type Logger } from "../lib/log.ts";
import { transactionPageUrl } from "./addresses.ts";
import { createFaultInjector, type FaultInjector, type LocalLedgerFaults } from "./faults.ts";
import { hostPort, startGrpcEndpoint } from "./grpc.ts";
import { entityId, mirrorTransactionId } from "./ids.ts";
import { DEVELOPMENT_OPERATOR_KEY, ed25519KeyPairFromDer, encodeKey, type Ed25519KeyPair } from "./keys.ts";
import { CORS_HEADERS, createMirrorHandler } from "./mirror.ts";
import { createLedgerNode, type LedgerNode } from "./node.ts";
import { FEE_COLLECTION_ACCOUNT, GENESIS_ACCOUNT, NODE_ACCOUNT } from "./rules.ts";
import { FIRST_ENTITY_NUM, openLedgerStore, type LedgerStore } from "./store.ts";

export type { LocalLedgerFaults } from "./faults.ts";

export interface LocalLedgerOptions {
  /** Folder for the ledger's SQLite file (created if missing). */
  readonly dataDir: string;
  /** Listen address of both servers. Default 127.0.0.1. */
  readonly host?: string;
  /** gRPC port; 0 (default) picks a free one. */
  readonly grpcPort?: number;
  /** Mirror REST port; 0 (default) picks a free one. */
  readonly mirrorPort?: number;
  /** A second mirror REST port over the same store; 0 picks a free one. Absent: one mirror listener. */
  readonly secondMirrorPort?: number;
  /** Delay from acceptance to consensus. Default 3000. */
  readonly consensusMs?: number;
  /** How long receipts (and records) stay queryable after consensus, as on Hedera. Default 180000. */
  readonly receiptTtlMs?: number;
  /**
   * The genesis account's private key (hex DER PKCS#8, ED25519), used when the ledger is created.
   * Default: the public development key (`DEVELOPMENT_OPERATOR_KEY`). A ledger created with
   * another key refuses to start with this one.
   */
  readonly operatorKey?: string;
  /** Time source for validity windows, consensus timestamps and due times. Default the system clock. */
  readonly clock?: Clock;
  readonly log?: Logger;
}

/**
 * What a user of a running local ledger needs: where it is, its operator, and how to close it.
 * Both a ledger started in this thread (`LocalLedger`) and the embedded one on its worker thread
 * (`thread.ts`) are this.
 */
export interface LocalLedgerEndpoint {
  /** `host:port` of the consensus node, for `Client.forNetwork({ [grpcAddress]: nodeAccountId })`. */
  readonly grpcAddress: string;
  readonly nodeAccountId: "0.0.3";
  /** `http://host:port`, the mirror node's base URL (REST under /api/v1). */
  readonly mirrorUrl: string;
  /** Every mirror base URL the ledger serves, `mirrorUrl` first (two with `secondMirrorPort`). */
  readonly mirrorUrls: readonly string[];
  /** The genesis account, funded with 50,000,000 hbar. Keys are hex DER (PKCS#8 / SPKI). */
  readonly operator: { readonly accountId: string; readonly privateKeyDer: string; readonly publicKeyDer: string };
  close(): Promise<void>;
}

/** A ledger running in this thread (`startLedger`). */
export interface RunningLedger extends LocalLedgerEndpoint {
  /**
   * Brings every transaction that is due (per the injected clock) to consensus now and returns how
   * many did. The ledger does this on its own timer; tests driving a manual clock call it.
   */
  runConsensus(): Promise<number>;
}

/**
 * A ledger started in this thread by `startLocalLedger`, for tests. The test hooks exist only
 * here: they act on the ledger's in-memory state and its injected clock, which a worker thread
 * does not share.
 */
export interface LocalLedger extends RunningLedger {
  /** Test hooks; all off until asked for. */
  readonly faults: LocalLedgerFaults;
}

/** The page a local record's explorer link points to. */
export { transactionPageUrl };

export { mirrorTransactionId };

export { DEVELOPMENT_OPERATOR_KEY };

/** What the ledger keeps in its data folder. */
export const LOCAL_LEDGER_FILES = {
  database: "ledger.sqlite",
  /** Names the owning process (src/lib/lock-file.ts; `restore` asks the same question). */
  lock: LEDGER_LOCK_FILE,
  /** A copy of the genesis operator's private key, hex DER (PKCS#8), owner-only. */
  operatorKey: "operator.key",
} as const;

const OPTION_NAMES = ["dataDir", "host", "grpcPort", "mirrorPort", "secondMirrorPort", "consensusMs", "receiptTtlMs", "operatorKey", "clock", "log"];
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
  const key = encodeKey({ ed25519: requested.publicKey });
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
  let node: LedgerNode;

  // A consensus failure is a bug, and the poll would repeat it four times a second: log the
  // first, then at most one a minute with a count of those not logged.
  let lastErrorLogMs = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  const runConsensus = async (): Promise<number> => {
    if (closed) return 0;
    try {
      return await node.runConsensus();
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
          const next = closed ? null : node.nextDueMs();
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
    node = createLedgerNode({
      store,
      clock,
      consensusMs,
      receiptTtlMs: options.receiptTtlMs ?? 180_000,
      ...(injector ? { faults: injector.faults } : {}),
      verifyEd25519: createEd25519Verifier(),
      onAccepted: arm,
    });
    const track = <T>(p: Promise<T>): Promise<T> => {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p)).catch(() => undefined);
      return p;
    };
    const tracked: LedgerNode = { ...node, submit: (r) => track(node.submit(r)), query: (r) => track(node.query(r)) };

    const grpcEndpoint = await startGrpcEndpoint({ host, port: options.grpcPort ?? 0, node: tracked, log });

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
      const next = node.nextDueMs();
      if (next != null && next <= clock.now()) void runConsensus();
    }, POLL_MS);
    poll.unref?.();
    // Transactions accepted before a restart.
    const pending = node.nextDueMs();
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
        await node.whenIdle();
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
