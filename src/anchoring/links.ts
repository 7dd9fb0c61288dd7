/**
 * Ledger links (`hashscanUrl`, `mirrorNodeUrl`) and where they come from, without the ledger SDK:
 * `serve` answers verifications while the ledger is still starting, so the links it can know
 * from the settings alone (public networks, DOCVERIFY_LOCAL_LEDGER_URL, the embedded ledger's
 * remembered address) must not wait for the SDK to load.
 */
import type { Config, LedgerNetwork } from "../config/index.ts";
import type { LedgerLinks } from "./anchorer.ts";
import { mirrorFormTransactionId } from "./ledger.ts";
import { ledgerDir, readRememberedAddress, rememberedMirrorUrls } from "./paths.ts";
import { transactionPageUrl } from "../local-ledger/addresses.ts";

/** The public mirror nodes. */
export const PUBLIC_MIRRORS: Readonly<Record<Exclude<LedgerNetwork, "local">, string>> = {
  mainnet: "https://mainnet-public.mirrornode.hedera.com",
  testnet: "https://testnet.mirrornode.hedera.com",
  previewnet: "https://previewnet.mirrornode.hedera.com",
};

/**
 * Every link names a transaction in the mirror node's form (`0.0.2-1795507107-624000000`), the one
 * mirror nodes and HashScan accept; a Record's own `transactionId` keeps the SDK's `@` form.
 */
export function localLinks(mirrorUrl: string): LedgerLinks {
  const base = mirrorUrl.replace(/\/+$/, "");
  return {
    transactionUrl: (id) => transactionPageUrl(base, mirrorFormTransactionId(id)),
    topicMessageUrl: (topicId, sequenceNumber) => `${base}/api/v1/topics/${topicId}/messages/${sequenceNumber}`,
  };
}

export function publicLinks(network: "mainnet" | "testnet" | "previewnet", mirrorUrl: string = PUBLIC_MIRRORS[network]): LedgerLinks {
  const base = mirrorUrl.replace(/\/+$/, "");
  return {
    transactionUrl: (id) => `https://hashscan.io/${network}/transaction/${mirrorFormTransactionId(id)}`,
    topicMessageUrl: (topicId, sequenceNumber) => `${base}/api/v1/topics/${topicId}/messages/${sequenceNumber}`,
  };
}

/**
 * The links as far as the settings tell before the ledger is up: public networks and a local
 * ledger started elsewhere at once; the embedded ledger from its remembered address (the one its
 * links were handed out with), null when it has never started on this data folder.
 */
export function linksFromSettings(config: Config): LedgerLinks | null {
  const l = config.ledger;
  if (l.network !== "local") return publicLinks(l.network);
  if (l.localLedgerUrl !== null) return localLinks(l.localLedgerUrl);
  const remembered = readRememberedAddress(ledgerDir(config.dataDir));
  if (remembered === null) return null;
  const host = remembered.host.includes(":") ? `[${remembered.host}]` : remembered.host;
  return localLinks(`http://${host}:${remembered.mirrorPort}`);
}

/**
 * The mirror nodes a receipt suggests (docs/receipts.md §3): DOCVERIFY_MIRROR_NODES when set, else
 * the public network's mirror node, a separately started local ledger's mirror, or the embedded
 * ledger's remembered mirror addresses (both of its mirror listeners; only the first when the
 * address was remembered by a release without a second, until the ledger next starts). Empty when
 * the embedded ledger has never started here.
 */
export function suggestedMirrorNodes(config: Config): string[] {
  if (config.mirrorNodes !== null) return [...config.mirrorNodes];
  const l = config.ledger;
  if (l.network !== "local") return [PUBLIC_MIRRORS[l.network]];
  if (l.localLedgerUrl !== null) return [l.localLedgerUrl];
  const remembered = readRememberedAddress(ledgerDir(config.dataDir));
  return remembered === null ? [] : rememberedMirrorUrls(remembered);
}
