/**
 * Hedera's rules as the local ledger applies them: the system accounts every fresh ledger has,
 * the limits the nodes enforce (hedera-services defaults), and the fixed fee schedule with how a
 * fee is split. Plain values: precheck, the consensus handlers, the queries and the mirror all
 * read them from here, so each limit and price is written once.
 */
import type { TxRow, TxType } from "./rows.ts";

/** Accounts every fresh local ledger has. */
export const GENESIS_ACCOUNT = 2;
export const NODE_ACCOUNT = 3;
export const FEE_COLLECTION_ACCOUNT = 98;

/** Hedera's limits (hedera-services defaults). */
export const MAX_TRANSACTION_BYTES = 6144;
export const MIN_VALID_DURATION_S = 15;
export const MAX_VALID_DURATION_S = 180;
/** At ingest a transaction must still have this long to live, so it can reach consensus in time. */
export const VALIDITY_BUFFER_S = 10;
export const MAX_MEMO_BYTES = 100;
export const MAX_MESSAGE_BYTES = 1024;
export const MIN_AUTO_RENEW_S = 6_999_999;
export const MAX_AUTO_RENEW_S = 8_000_001;

/**
 * A fixed fee schedule in tinybars at a fixed rate of 12 US cents per hbar: about $0.01 to create
 * a topic and $0.0001 per message, Hedera's published prices. A tenth goes to the node, the rest
 * to the fee collection account, as the mirror node shows in `transfers`.
 */
export const FEES: Readonly<Record<TxType, number>> = { CONSENSUSCREATETOPIC: 8_333_333, CONSENSUSSUBMITMESSAGE: 83_333 };
export const QUERY_COST = 8_333;
export const EXCHANGE_RATE = { hbarEquiv: 1, centEquiv: 12 } as const;

export function nodeShareOf(fee: number): number {
  return Math.floor(fee / 10);
}

/** The crypto transfers a final transaction caused, as the mirror node lists them. */
export function transfersOf(tx: TxRow): { account: number; amount: number }[] {
  const fee = tx.chargedFee ?? 0;
  if (fee === 0) return [];
  const nodeShare = nodeShareOf(fee);
  return [
    { account: tx.payer, amount: -fee },
    { account: NODE_ACCOUNT, amount: nodeShare },
    { account: FEE_COLLECTION_ACCOUNT, amount: fee - nodeShare },
  ];
}
