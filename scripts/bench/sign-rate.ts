/**
 * The single-core rate of what creating a record costs in signatures (record creation's
 * yardstick, docs/benchmarks.md "What it measures"):
 * encode the record payload, sign it with the organisation's key, encode the seal payload,
 * sign that with the seal key, exactly as src/records/service.ts does (each `sign` also
 * verifies its fresh signature). Run as its own process, on one thread, with the servers idle:
 *
 *   bun scripts/bench/sign-rate.ts SECONDS   → {"perSecond": …, "iterations": …}
 */
import { randomBytes } from "node:crypto";
import { createSigner, encodeRecordPayload, encodeSealPayload } from "../../src/crypto/index.ts";

const seconds = Number(process.argv[2] ?? "3");
const signer = createSigner({ masterKey: new Uint8Array(randomBytes(32)) });
const orgKey = signer.generateKey("org:0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d");
const sealKey = signer.generateKey("service-seal");

function once(i: number): void {
  const payload = encodeRecordPayload({
    recordId: Bun.randomUUIDv7(),
    docHash: `sha256:${String(i).padStart(64, "0")}`,
    signedAtMs: Date.now(),
    signerKeyFingerprint: orgKey.fingerprint,
  });
  const signature = signer.sign(orgKey, payload);
  signer.sign(sealKey, encodeSealPayload(payload, signature, sealKey.fingerprint));
}

for (let i = 0; i < 200; i++) once(i); // warm-up: JIT, key objects cached
let iterations = 0;
const started = performance.now();
const until = started + seconds * 1000;
while (performance.now() < until) once(iterations++);
const elapsed = (performance.now() - started) / 1000;
process.stdout.write(JSON.stringify({ perSecond: iterations / elapsed, iterations }) + "\n");
