/**
 * ML-DSA-65 sign and verify throughput, native (Bun node:crypto) against @noble/post-quantum.
 * Run: node_modules/.bin/bun scripts/bench-crypto.ts [seconds per case, default 2]
 * Signs a 124-byte record payload, as the product does. "signer.sign" is the product path:
 * cached native key, plus its verify-after-sign self-check.
 */
import { randomBytes } from "node:crypto";
// Imported directly only here, to time noble's sign without the key expansion signWithNoble does.
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { algorithmSpec, createSigner, encodeRecordPayload, signWithNoble, verifyWithNoble } from "../src/crypto/index.ts";

const seconds = Number(process.argv[2] ?? 2);
if (!(seconds > 0)) throw new Error("usage: bench-crypto.ts [seconds > 0]");

function bench(name: string, fn: () => unknown): void {
  for (let i = 0; i < 5; i++) fn(); // warm up the JIT and any caches
  let ops = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  while (performance.now() < deadline) {
    fn();
    ops++;
  }
  const ms = performance.now() - start;
  console.log(`${name.padEnd(40)} ${((ops * 1000) / ms).toFixed(1).padStart(9)} ops/s   ${((ms * 1000) / ops).toFixed(0).padStart(7)} µs/op`);
}

const spec = algorithmSpec("ML-DSA-65");
const seed = new Uint8Array(randomBytes(32));
const { privateKey, publicKey } = spec.importSeed(seed);
const nativePublicKey = spec.importPublicKey(publicKey);
const signer = createSigner({ masterKey: new Uint8Array(randomBytes(32)) });
const key = signer.generateKey("bench");
const message = encodeRecordPayload({
  recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
  docHash: `sha256:${"ab".repeat(32)}`,
  signedAtMs: Date.now(),
  signerKeyFingerprint: key.fingerprint,
});
const signature = spec.sign(privateKey, message);
const productSignature = signer.sign(key, message);

console.log(`ML-DSA-65, ${message.length}-byte message, Bun ${Bun.version}, ${seconds}s per case`);
bench("native sign (KeyObject)", () => spec.sign(privateKey, message));
bench("native verify (KeyObject)", () => spec.verify(nativePublicKey, message, signature));
bench("signer.sign (cached key + self-check)", () => signer.sign(key, message));
bench("signer.verify (imports raw key)", () => signer.verify("ML-DSA-65", key.publicKey, message, productSignature));
bench("native key import from seed", () => spec.importSeed(seed));
const nobleSecretKey = ml_dsa65.keygen(seed).secretKey;
bench("noble sign (hedged)", () => ml_dsa65.sign(message, nobleSecretKey));
bench("noble sign from seed (signWithNoble)", () => signWithNoble("ML-DSA-65", seed, message, { deterministic: false }));
bench("noble verify", () => verifyWithNoble("ML-DSA-65", publicKey, message, signature));
