/**
 * The verification log's ids (docs/verification.md, "The log"): UUIDv7, strictly increasing in the
 * order they are handed out within a process and, seeded from the newest stored id, across
 * restarts, even if the clock steps back. A row's `verifiedAt` is its id's timestamp.
 */
import type { Clock } from "../../lib/clock.ts";
import { UUID_RE } from "../../lib/formats.ts";

// ---------------------------------------------------------------------------------------------
// Ids: UUIDv7 (RFC 9562 §6.2 method 3, "monotonic random"). Bun.randomUUIDv7 happens to be
// monotonic in a tight loop (a counter in rand_a), but that is not documented, it reads the real
// clock rather than the injected one, and it knows nothing of ids stored before a restart. Here
// the 74 bits after the timestamp are one counter: a new millisecond starts it at a random value
// below 2^73, the same (or an earlier) millisecond adds a random 1..2^32 to the last one, and an
// overflow moves to the next millisecond. So ids strictly increase whatever the clock does.
// ---------------------------------------------------------------------------------------------

const COUNTER_BITS = 74n;
const COUNTER_MAX = (1n << COUNTER_BITS) - 1n;

function randomBigInt(bytes: number): bigint {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
}

function formatUuidV7(ms: number, counter: bigint): string {
  const randA = (counter >> 62n) & 0xfffn;
  const randB = counter & ((1n << 62n) - 1n);
  const hi = (BigInt(ms) << 16n) | (0x7n << 12n) | randA; // 64 bits
  const lo = (0b10n << 62n) | randB; // 64 bits
  const hex = hi.toString(16).padStart(16, "0") + lo.toString(16).padStart(16, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function parseUuidV7(id: string): { ms: number; counter: bigint } | null {
  if (!UUID_RE.test(id) || id[14] !== "7" || !"89ab".includes(id[19]!)) return null;
  const hex = id.replaceAll("-", "");
  const ms = parseInt(hex.slice(0, 12), 16);
  const randA = BigInt(`0x${hex.slice(13, 16)}`);
  const randB = BigInt(`0x${hex.slice(16, 32)}`) & ((1n << 62n) - 1n);
  return { ms, counter: (randA << 62n) | randB };
}

/** A strictly increasing UUIDv7 source, starting above `after` when given. */
export function createIdGenerator(clock: Clock, after?: string | null): () => { id: string; ms: number } {
  let lastMs = -1;
  let last = 0n;
  const seed = after ? parseUuidV7(after) : null;
  if (seed !== null) {
    lastMs = seed.ms;
    last = seed.counter;
  }
  return () => {
    const now = clock.now();
    if (now > lastMs) {
      lastMs = now;
      last = randomBigInt(10) & ((1n << (COUNTER_BITS - 1n)) - 1n);
    } else {
      const next = last + 1n + (randomBigInt(4) & 0xffffffffn);
      if (next > COUNTER_MAX) {
        lastMs += 1;
        last = randomBigInt(10) & ((1n << (COUNTER_BITS - 1n)) - 1n);
      } else {
        last = next;
      }
    }
    return { id: formatUuidV7(lastMs, last), ms: lastMs };
  };
}

/** The smallest and largest id text any UUIDv7 of millisecond `ms` can have. */
export function idFloor(ms: number): string {
  const h = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8)}-0000-0000-000000000000`;
}
export function idCeiling(ms: number): string {
  const h = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8)}-ffff-ffff-ffffffffffff`;
}
