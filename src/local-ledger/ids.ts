/**
 * Entity ids, transaction ids and timestamps in the textual forms Hedera uses.
 *
 * The local ledger is a single shard and realm, `0.0`, like a fresh local network: an id with any
 * other shard or realm is well formed but names nothing here.
 */

/** A consensus or valid-start instant: whole seconds since the epoch and nanoseconds within it. */
export interface Timestamp {
  readonly seconds: number;
  readonly nanos: number;
}

/** A transaction id as the ledger keys it: payer account number and valid start. */
export interface TxId {
  readonly payer: number;
  readonly validStart: Timestamp;
  readonly nonce: number;
  readonly scheduled: boolean;
}

const NS_PER_S = 1_000_000_000n;

export function entityId(num: number): string {
  return `0.0.${num}`;
}

/**
 * `shard.realm.num`, `realm.num` or plain `num` (all accepted by the public mirror node; shard and
 * realm default to 0) → `{shard, realm, num}`, or null when malformed.
 */
export function parseEntityId(text: string): { shard: number; realm: number; num: number } | null {
  const m = /^(?:(?:(\d{1,4})\.)?(\d{1,5})\.)?(\d{1,12})$/.exec(text);
  if (!m) return null;
  return { shard: Number(m[1] ?? 0), realm: Number(m[2] ?? 0), num: Number(m[3]) };
}

/** `seconds.nnnnnnnnn`, the mirror node's timestamp form. */
export function formatTimestamp(ts: Timestamp): string {
  return `${ts.seconds}.${String(ts.nanos).padStart(9, "0")}`;
}

export function timestampToNs(ts: Timestamp): bigint {
  return BigInt(ts.seconds) * NS_PER_S + BigInt(ts.nanos);
}

export function nsToTimestamp(ns: bigint): Timestamp {
  return { seconds: Number(ns / NS_PER_S), nanos: Number(ns % NS_PER_S) };
}

export function msToNs(ms: number): bigint {
  return BigInt(Math.floor(ms)) * 1_000_000n;
}

/**
 * A mirror-node timestamp parameter: `seconds` (at most 10 digits, as the mirror node allows) or
 * `seconds.nanos` with 1 to 9 digits of nanos (`1.5` means 1.500000000), or null when malformed.
 */
export function parseTimestampParam(text: string): Timestamp | null {
  const m = /^(\d{1,10})(?:\.(\d{1,9}))?$/.exec(text);
  if (!m) return null;
  return { seconds: Number(m[1]), nanos: Number((m[2] ?? "0").padEnd(9, "0")) };
}

/** The mirror node's transaction id form: `0.0.2-1700000000-000000000`. */
export function mirrorTransactionId(payer: number, validStart: Timestamp): string {
  return `${entityId(payer)}-${validStart.seconds}-${String(validStart.nanos).padStart(9, "0")}`;
}

/**
 * Parses a transaction id in the mirror form (`0.0.2-1700000000-000000000`) or, when allowed, the
 * SDK form (`0.0.2@1700000000.000000000`). Null when malformed.
 */
export function parseTransactionId(
  text: string,
  options: { allowSdkForm: boolean },
): { shard: number; realm: number; payer: number; validStart: Timestamp } | null {
  const m =
    /^(\d{1,4})\.(\d{1,5})\.(\d{1,12})-(\d{1,19})-(\d{1,9})$/.exec(text) ??
    (options.allowSdkForm ? /^(\d{1,4})\.(\d{1,5})\.(\d{1,12})@(\d{1,19})\.(\d{9})$/.exec(text) : null);
  if (!m) return null;
  const seconds = Number(m[4]);
  if (!Number.isSafeInteger(seconds)) return null;
  // The mirror node reads the nanos field of the dash form as a number: `-5` is 5 ns.
  return { shard: Number(m[1]), realm: Number(m[2]), payer: Number(m[3]), validStart: { seconds, nanos: Number(m[5]) } };
}

/** Lowercase hex. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}
