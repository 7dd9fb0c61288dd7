/**
 * A signing worker that fails, for the pool's tests: the real worker (src/crypto/sign-worker.ts),
 * except that a job whose record payload names one of crash-marker.ts's digests (a verification
 * job: any of its messages) fails before anything is signed or verified: an uncaught error
 * (0xee…), or the thread ending (0xdd…), as a fault in native code would.
 */
import "../../../src/crypto/sign-worker.ts";
import { EXIT_DIGEST_BYTE, THROW_DIGEST_BYTE } from "./crash-marker.ts";

declare const self: Worker;

const real = self.onmessage!;
const digestIs = (payload: Uint8Array, byte: number) => payload.subarray(44, 76).every((b) => b === byte); // payload.ts: the digest at bytes 44..75
self.onmessage = (event: MessageEvent) => {
  const m = event.data as { type: string; recordPayload?: Uint8Array; calls?: { message: Uint8Array }[] };
  const payloads = m.type === "job" ? [m.recordPayload!] : m.type === "verify" ? m.calls!.map((c) => c.message).filter((p) => p.length >= 76) : [];
  if (payloads.some((p) => digestIs(p, THROW_DIGEST_BYTE))) throw new Error("simulated signing worker fault");
  if (payloads.some((p) => digestIs(p, EXIT_DIGEST_BYTE))) process.exit(3);
  real.call(self, event);
};
