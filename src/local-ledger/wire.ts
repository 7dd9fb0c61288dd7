/**
 * HAPI values on the wire, for the node's three parts (precheck, consensus, queries): int64
 * fields and timestamps between protobufjs and plain numbers, and a received `Transaction` taken
 * apart into the bytes its signatures cover, its signatures and its body, with the precheck code
 * the nodes give when it does not come apart. Pure functions, no state.
 */
import { proto } from "@hashgraph/proto";
import type { Timestamp } from "./ids.ts";
import type { TxType } from "./rows.ts";

const R = proto.ResponseCodeEnum;

export type Int64 = NonNullable<proto.ITimestamp["seconds"]>;

/** protobufjs encodes plain numbers in int64 fields; its typings only name Long. */
export function int64(n: number): Int64 {
  return n as unknown as Int64;
}

export function toNumber(v: Int64 | number | null | undefined): number {
  if (v == null) return 0;
  return typeof v === "number" ? v : v.toNumber();
}

export function tsOf(t: proto.ITimestamp | null | undefined): Timestamp {
  return { seconds: toNumber(t?.seconds), nanos: t?.nanos ?? 0 };
}

export function protoTs(t: Timestamp): proto.ITimestamp {
  return { seconds: int64(t.seconds), nanos: t.nanos };
}

export function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** A transaction taken apart: the bytes the signatures cover, the signatures, the body. */
export interface Opened {
  readonly signedBytesForHash: Uint8Array;
  readonly bodyBytes: Uint8Array;
  readonly sigMap: proto.ISignatureMap | null | undefined;
  readonly body: proto.TransactionBody;
}

/** Decodes a Transaction down to its body, or gives the precheck code the nodes would give. */
export function openTransaction(tx: proto.Transaction): Opened | { code: number } {
  const hasSigned = tx.signedTransactionBytes != null && tx.signedTransactionBytes.length > 0;
  const hasLegacy = tx.bodyBytes != null && tx.bodyBytes.length > 0;
  if (hasSigned && hasLegacy) return { code: R.INVALID_TRANSACTION };
  let bodyBytes: Uint8Array;
  let sigMap: proto.ISignatureMap | null | undefined;
  let signedBytesForHash: Uint8Array;
  if (hasSigned) {
    let signed: proto.SignedTransaction;
    try {
      signed = proto.SignedTransaction.decode(tx.signedTransactionBytes);
    } catch {
      return { code: R.INVALID_TRANSACTION };
    }
    bodyBytes = signed.bodyBytes;
    sigMap = signed.sigMap;
    signedBytesForHash = tx.signedTransactionBytes;
  } else if (hasLegacy) {
    bodyBytes = tx.bodyBytes;
    sigMap = tx.sigMap;
    signedBytesForHash = proto.Transaction.encode(tx).finish();
  } else {
    return { code: R.INVALID_TRANSACTION_BODY };
  }
  if (bodyBytes.length === 0) return { code: R.INVALID_TRANSACTION_BODY };
  let body: proto.TransactionBody;
  try {
    body = proto.TransactionBody.decode(bodyBytes);
  } catch {
    return { code: R.INVALID_TRANSACTION_BODY };
  }
  return { signedBytesForHash, bodyBytes, sigMap, body };
}


export function txKind(body: proto.TransactionBody): TxType | null {
  if (body.data === "consensusCreateTopic") return "CONSENSUSCREATETOPIC";
  if (body.data === "consensusSubmitMessage") return "CONSENSUSSUBMITMESSAGE";
  return null;
}
