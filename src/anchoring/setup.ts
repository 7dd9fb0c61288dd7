/**
 * From settings to a working `Ledger` and its links: the embedded local ledger (network
 * `local`, no DOCVERIFY_LOCAL_LEDGER_URL), a local ledger started elsewhere, or a public
 * network. docs/anchoring.md explains the choices; in short:
 *
 * - The embedded ledger lives in `<dataDir>/ledger/` on 127.0.0.1, on a worker thread of this
 *   process (local-ledger/thread.ts) so it does not take the API thread's time; in this thread
 *   only when the caller injects a clock (tests with a manual clock). It serves its mirror REST
 *   API on two ports (a receipt names two mirror nodes, docs/receipts.md §3). Its ports are
 *   chosen once (free ports) and remembered in `<dataDir>/ledger/ports.json`, so the
 *   `hashscanUrl` and `mirrorNodeUrl` links and the receipts already handed out keep working
 *   across restarts. When a remembered port is taken by something else, the ledger starts on
 *   fresh ports (logged as a warning) rather than not at all, and remembers those.
 * - A local ledger started elsewhere is found through its mirror URL: the consensus node's gRPC
 *   address comes from `/api/v1/network/nodes`, as from a public mirror node. The operator is
 *   DOCVERIFY_LEDGER_OPERATOR_ID (default 0.0.2, the local ledger's genesis account). Its key
 *   needs no setting (docs/local-ledger.md "The operator key: a public development key"): like
 *   Hedera's own local node, the local ledger gives 0.0.2 a fixed, public development key unless it
 *   was started with another. `localOperatorKey` says which key is used and checks it against the
 *   key the ledger's mirror shows.
 * - Public networks: operator id and key file from the settings (required), the SDK's address
 *   book, the public mirror node, HashScan links.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/index.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { LedgerLinks } from "./anchorer.ts";
import { deferredLedger } from "./deferred-ledger.ts";
import { foundLaterLedger } from "./found-later-ledger.ts";
import type { HederaLedgerOptions } from "./hedera-options.ts";
import type { Ledger } from "./ledger.ts";
import { loadHederaLedger } from "./load.ts";
import { DEVELOPMENT_OPERATOR_KEY, LOCAL_LEDGER_FILES, type LocalLedgerEndpoint } from "../local-ledger/index.ts";
import { ed25519KeyPairFromDer } from "../local-ledger/keys.ts";
import { localLinks, publicLinks, PUBLIC_MIRRORS } from "./links.ts";
import { startRememberedLedger } from "../local-ledger/remembered.ts";
import { startLedgerWorker } from "../local-ledger/thread.ts";

import { LEDGER_DIR, ledgerDir, PORTS_FILE } from "./paths.ts";
export { LEDGER_DIR, ledgerDir, PORTS_FILE };
export { readRememberedAddress, startRememberedLedger, type RememberedAddress } from "../local-ledger/remembered.ts";
export { linksFromSettings, localLinks, publicLinks } from "./links.ts";

/** The consensus nodes a mirror node lists: `{ "host:port": "0.0.3" }`. */
export async function discoverNodes(mirrorUrl: string, timeoutMs = 5000): Promise<Record<string, string>> {
  const res = await fetch(`${mirrorUrl.replace(/\/+$/, "")}/api/v1/network/nodes`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`${mirrorUrl}/api/v1/network/nodes answered ${res.status}`);
  const body = (await res.json()) as { nodes?: { node_account_id?: string; service_endpoints?: { ip_address_v4?: string; domain_name?: string; port?: number }[] }[] };
  const nodes: Record<string, string> = {};
  for (const n of body.nodes ?? []) {
    for (const e of n.service_endpoints ?? []) {
      const host = e.domain_name || e.ip_address_v4;
      if (host && e.port && n.node_account_id) nodes[`${host.includes(":") ? `[${host}]` : host}:${e.port}`] = n.node_account_id;
    }
  }
  if (Object.keys(nodes).length === 0) throw new Error(`${mirrorUrl}/api/v1/network/nodes lists no consensus node`);
  return nodes;
}

/** The SDK adapter over `options`, its modules loaded a library at a time (load.ts). */
async function sdkLedger(options: HederaLedgerOptions): Promise<Ledger> {
  return (await loadHederaLedger()).createHederaLedger(options);
}

/**
 * A local ledger's `Ledger`: its nodes are known, so the SDK is loaded only when the first
 * transaction needs it (deferred-ledger.ts). The operator key is checked now all the same (a key
 * that is not ED25519 hex DER is refused at start, as the SDK would refuse it later).
 */
async function localLedger(options: HederaLedgerOptions & { readonly nodes: Readonly<Record<string, string>>; readonly mirrorUrl: string }): Promise<Ledger> {
  if ((await publicKeyHexOf(options.operatorPrivateKey)) === null) return await sdkLedger(options); // ECDSA, or not a key: the SDK reads it or says why
  return deferredLedger({
    network: options.network,
    operatorAccountId: options.operatorAccountId,
    mirrorUrl: options.mirrorUrl,
    nodes: options.nodes,
    ...(options.grpcDeadlineMs !== undefined ? { grpcDeadlineMs: options.grpcDeadlineMs } : {}),
    load: () => sdkLedger(options),
  });
}

export interface LedgerSetup {
  readonly ledger: Ledger;
  readonly links: LedgerLinks;
  /** The embedded local ledger, when this process runs it (on a worker thread, or in this one with an injected clock). */
  readonly embedded: LocalLedgerEndpoint | null;
  /**
   * Why the ledger cannot be used, when that is known without asking it: the embedded ledger's
   * thread stopped. Null otherwise (an unreachable ledger is the anchor loop's health check).
   */
  failure(): string | null;
  /** For the startup line: where the ledger is. */
  readonly describe: Readonly<Record<string, string>>;
  /** Closes the SDK client, then the embedded ledger. */
  close(): Promise<void>;
}

export interface OpenLedgerOptions {
  readonly config: Config;
  readonly log: Logger;
  /**
   * The embedded ledger's clock. Absent or the system clock: the ledger runs on its own worker
   * thread. Any other clock (a test's manual one) cannot cross threads: the ledger then runs in
   * this thread, on that clock.
   */
  readonly clock?: Clock;
  /** gRPC deadline per request; default 5000. */
  readonly grpcDeadlineMs?: number;
  /** For tests only: another entry point for the embedded ledger's thread (thread.ts `entry`). */
  readonly ledgerWorkerEntry?: URL;
}

function readKeyFile(file: string, setting: string): string {
  if (!existsSync(file)) throw new Error(`${setting}: ledger operator key file ${file} does not exist`);
  return readFileSync(file, "utf8").trim();
}

/** The key the mirror node shows for `accountId` (`{_type, key}`), or null when it does not say. */
async function mirrorAccountKey(mirrorUrl: string, accountId: string, timeoutMs = 5000): Promise<{ type: string; key: string } | null> {
  try {
    const res = await fetch(`${mirrorUrl.replace(/\/+$/, "")}/api/v1/accounts/${accountId}`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    const body = (await res.json()) as { key?: { _type?: unknown; key?: unknown } | null };
    const k = body.key;
    return k != null && typeof k._type === "string" && typeof k.key === "string" ? { type: k._type, key: k.key.toLowerCase() } : null;
  } catch {
    return null;
  }
}

async function publicKeyHexOf(privateKeyDer: string): Promise<string | null> {
  try {
    return Buffer.from((await ed25519KeyPairFromDer(privateKeyDer)).publicKey).toString("hex");
  } catch {
    return null; // not ED25519 (an ECDSA key is for the SDK to read)
  }
}

/**
 * The operator key for a local ledger started elsewhere, and where it came from.
 *
 * - DOCVERIFY_LEDGER_OPERATOR_KEY_FILE (or the systemd credential) when that file exists: it is
 *   used, and refused if the ledger's mirror shows another key for the operator.
 * - Otherwise no setting is needed: the development key (local-ledger/keys.ts), or, for a ledger
 *   created before it had one, the copy of its key in `<dataDir>/ledger/operator.key` (where
 *   `docverify local-ledger --data <dataDir>` keeps it): whichever the mirror shows for the
 *   operator. When the mirror does not say (an older ledger), the development key.
 *
 * Throws, naming the setting, when no key at hand is the operator's.
 */
export async function localOperatorKey(config: Config, mirrorUrl: string, operatorAccountId: string): Promise<{ privateKeyDer: string; source: string }> {
  const configured = config.ledger.operatorKeyFile;
  const onLedger = await mirrorAccountKey(mirrorUrl, operatorAccountId);
  const matches = async (der: string) => onLedger === null || onLedger.type !== "ED25519" || (await publicKeyHexOf(der)) === onLedger.key;
  if (configured !== null && existsSync(configured)) {
    const der = readFileSync(configured, "utf8").trim();
    if (!(await matches(der))) {
      throw new Error(
        `DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: ${configured} does not hold the key the local ledger at ${mirrorUrl} shows for ${operatorAccountId} (public key ${onLedger!.key})`,
      );
    }
    return { privateKeyDer: der, source: configured };
  }
  const copy = join(ledgerDir(config.dataDir), LOCAL_LEDGER_FILES.operatorKey);
  const candidates: { privateKeyDer: string; source: string }[] = [{ privateKeyDer: DEVELOPMENT_OPERATOR_KEY.privateKeyDer, source: "development key" }];
  if (existsSync(copy)) candidates.push({ privateKeyDer: readFileSync(copy, "utf8").trim(), source: copy });
  for (const c of candidates) if (await matches(c.privateKeyDer)) return c;
  throw new Error(
    `DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: the local ledger at ${mirrorUrl} gives ${operatorAccountId} the public key ${onLedger!.key}, ` +
      `which is not the development key${existsSync(copy) ? ` nor the key in ${copy}` : ""}` +
      `${configured !== null ? ` (${configured} does not exist)` : ""}: it was created with a key of its own. ` +
      "Set DOCVERIFY_LEDGER_OPERATOR_KEY_FILE to that key (docverify local-ledger keeps a copy in its folder's operator.key)",
  );
}

export async function openLedger(options: OpenLedgerOptions): Promise<LedgerSetup> {
  const { config, log } = options;
  const l = config.ledger;
  const grpcDeadlineMs = options.grpcDeadlineMs ?? 5000;
  if (l.network === "local" && l.localLedgerUrl === null) {
    const dir = ledgerDir(config.dataDir);
    const ownThread = options.clock === undefined || options.clock === systemClock;
    // Ports set in the settings; the others remembered in the ledger's folder, else free ones.
    const ports = {
      ...(l.localPorts.grpc !== undefined ? { grpcPort: l.localPorts.grpc } : {}),
      ...(l.localPorts.mirror !== undefined ? { mirrorPort: l.localPorts.mirror } : {}),
      ...(l.localPorts.secondMirror !== undefined ? { secondMirrorPort: l.localPorts.secondMirror } : {}),
    };
    const thread = ownThread ? await startLedgerWorker({ dir, consensusMs: l.localConsensusMs, log, ...ports, ...(options.ledgerWorkerEntry ? { entry: options.ledgerWorkerEntry } : {}) }) : null;
    const embedded: LocalLedgerEndpoint = thread ?? (await startRememberedLedger({ dir, consensusMs: l.localConsensusMs, log, clock: options.clock!, secondMirror: true, ...ports }));
    let ledger: Ledger;
    try {
      ledger = await localLedger({
        network: "local",
        operatorAccountId: embedded.operator.accountId,
        operatorPrivateKey: embedded.operator.privateKeyDer,
        nodes: { [embedded.grpcAddress]: embedded.nodeAccountId },
        mirrorUrl: embedded.mirrorUrl,
        grpcDeadlineMs,
        log,
      });
    } catch (e) {
      await embedded.close();
      throw e;
    }
    return {
      ledger,
      links: localLinks(embedded.mirrorUrl),
      embedded,
      describe: {
        ledgerMirrorUrl: embedded.mirrorUrl,
        ...(embedded.mirrorUrls[1] !== undefined ? { ledgerSecondMirrorUrl: embedded.mirrorUrls[1] } : {}),
        ledgerGrpcAddress: embedded.grpcAddress,
        ledgerOperator: embedded.operator.accountId,
      },
      failure: () => thread?.failure() ?? null,
      async close() {
        await ledger.close();
        await embedded.close();
      },
    };
  }
  if (l.network === "local") {
    const mirrorUrl = l.localLedgerUrl!;
    const operatorAccountId = l.operatorId ?? "0.0.2";
    const reach = async () => {
      try {
        return await discoverNodes(mirrorUrl);
      } catch (e) {
        throw new Error(`DOCVERIFY_LOCAL_LEDGER_URL: cannot reach the local ledger's mirror at ${mirrorUrl}: ${(e as Error).message}`);
      }
    };
    const open = async (nodes: Record<string, string>) => {
      // A key the ledger does not give the operator is a setting to fix: it stops the start.
      const operatorKey = await localOperatorKey(config, mirrorUrl, operatorAccountId);
      const ledger = await localLedger({ network: "local", operatorAccountId, operatorPrivateKey: operatorKey.privateKeyDer, nodes, mirrorUrl, grpcDeadlineMs, log });
      return { ledger, operatorKey };
    };
    const links = localLinks(mirrorUrl);
    let nodes: Record<string, string>;
    try {
      nodes = await reach();
    } catch (e) {
      // Not answering at start (a power cut, its egress not back yet): serve all the same, and
      // find it when it answers (found-later-ledger.ts).
      const ledger = foundLaterLedger({
        network: "local",
        operatorAccountId,
        mirrorUrl,
        firstError: (e as Error).message,
        find: async () => (await open(await reach())).ledger,
        log,
      });
      return {
        ledger,
        links,
        embedded: null,
        describe: { ledgerMirrorUrl: mirrorUrl, ledgerGrpcAddress: "not known yet: the ledger has not answered", ledgerOperator: operatorAccountId },
        failure: () => null,
        close: () => ledger.close(),
      };
    }
    const { ledger, operatorKey } = await open(nodes);
    return {
      ledger,
      links,
      embedded: null,
      describe: {
        ledgerMirrorUrl: mirrorUrl,
        ledgerGrpcAddress: Object.keys(nodes).join(","),
        ledgerOperator: operatorAccountId,
        ledgerOperatorKey: operatorKey.source,
      },
      failure: () => null,
      close: () => ledger.close(),
    };
  }
  const network = l.network;
  const ledger = await sdkLedger({
    network,
    operatorAccountId: l.operatorId!,
    operatorPrivateKey: readKeyFile(l.operatorKeyFile!, "DOCVERIFY_LEDGER_OPERATOR_KEY_FILE"),
    grpcDeadlineMs,
    log,
  });
  return {
    ledger,
    links: publicLinks(network),
    embedded: null,
    describe: { ledgerMirrorUrl: PUBLIC_MIRRORS[network], ledgerOperator: l.operatorId! },
    failure: () => null,
    close: () => ledger.close(),
  };
}
