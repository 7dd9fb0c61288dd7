/**
 * From settings to a working `Ledger` and its links: the embedded local ledger (network
 * `local`, no DOCVERIFY_LOCAL_LEDGER_URL), a local ledger started elsewhere, or a public
 * network. docs/anchoring.md explains the choices; in short:
 *
 * - The embedded ledger lives in `<dataDir>/ledger/` on 127.0.0.1, on a worker thread of this
 *   process (local-ledger/thread.ts) so it does not take the API thread's time; in this thread
 *   only when the caller injects a clock (tests with a manual clock). Its ports are chosen once
 *   (free ports) and remembered in `<dataDir>/ledger/ports.json`, so the `hashscanUrl` and
 *   `mirrorNodeUrl` links already handed out keep working across restarts. When a remembered
 *   port is taken by something else, the ledger starts on fresh ports (logged as a warning)
 *   rather than not at all, and remembers those.
 * - A local ledger started elsewhere is found through its mirror URL: the consensus node's gRPC
 *   address comes from `/api/v1/network/nodes`, as from a public mirror node. The operator is
 *   DOCVERIFY_LEDGER_OPERATOR_ID (default 0.0.2, the local ledger's genesis account) with the key
 *   in DOCVERIFY_LEDGER_OPERATOR_KEY_FILE (default `<dataDir>/ledger/operator.key`, where
 *   `docverify local-ledger --data <dataDir>` writes it).
 * - Public networks: operator id and key file from the settings (required), the SDK's address
 *   book, the public mirror node, HashScan links.
 */
import "./protobuf-long.ts"; // first: see the file
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/index.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { LedgerLinks } from "./anchorer.ts";
import { createHederaLedger, PUBLIC_MIRRORS } from "./hedera-ledger.ts";
import type { Ledger } from "./ledger.ts";
import { LOCAL_LEDGER_FILES, type LocalLedgerEndpoint } from "./local-ledger/index.ts";
import { localLinks, publicLinks } from "./links.ts";
import { startRememberedLedger } from "./local-ledger/remembered.ts";
import { startLedgerWorker } from "./local-ledger/thread.ts";

import { LEDGER_DIR, ledgerDir, PORTS_FILE } from "./paths.ts";
export { LEDGER_DIR, ledgerDir, PORTS_FILE };
export { readRememberedAddress, startRememberedLedger, type RememberedAddress } from "./local-ledger/remembered.ts";
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

export async function openLedger(options: OpenLedgerOptions): Promise<LedgerSetup> {
  const { config, log } = options;
  const l = config.ledger;
  const grpcDeadlineMs = options.grpcDeadlineMs ?? 5000;
  if (l.network === "local" && l.localLedgerUrl === null) {
    const dir = ledgerDir(config.dataDir);
    const ownThread = options.clock === undefined || options.clock === systemClock;
    const thread = ownThread ? await startLedgerWorker({ dir, consensusMs: l.localConsensusMs, log, ...(options.ledgerWorkerEntry ? { entry: options.ledgerWorkerEntry } : {}) }) : null;
    const embedded: LocalLedgerEndpoint = thread ?? (await startRememberedLedger({ dir, consensusMs: l.localConsensusMs, log, clock: options.clock! }));
    let ledger: Ledger;
    try {
      ledger = createHederaLedger({
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
      describe: { ledgerMirrorUrl: embedded.mirrorUrl, ledgerGrpcAddress: embedded.grpcAddress, ledgerOperator: embedded.operator.accountId },
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
    const keyFile = l.operatorKeyFile ?? join(ledgerDir(config.dataDir), LOCAL_LEDGER_FILES.operatorKey);
    const operatorPrivateKey = readKeyFile(keyFile, "DOCVERIFY_LEDGER_OPERATOR_KEY_FILE");
    let nodes: Record<string, string>;
    try {
      nodes = await discoverNodes(mirrorUrl);
    } catch (e) {
      throw new Error(`DOCVERIFY_LOCAL_LEDGER_URL: cannot reach the local ledger's mirror at ${mirrorUrl}: ${(e as Error).message}`);
    }
    const ledger = createHederaLedger({ network: "local", operatorAccountId, operatorPrivateKey, nodes, mirrorUrl, grpcDeadlineMs, log });
    return {
      ledger,
      links: localLinks(mirrorUrl),
      embedded: null,
      describe: { ledgerMirrorUrl: mirrorUrl, ledgerGrpcAddress: Object.keys(nodes).join(","), ledgerOperator: operatorAccountId },
      failure: () => null,
      close: () => ledger.close(),
    };
  }
  const network = l.network;
  const ledger = createHederaLedger({
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
