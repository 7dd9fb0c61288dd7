/**
 * ECDSA secp256k1 signature verification, as Hedera applies it to `ECDSASecp256k1` keys.
 *
 * What the SDK does (mirrored here): the signed message is keccak256(bodyBytes); the signature is
 * the 64-byte compact form r ‖ s; the key is the 33-byte compressed point. Hedera's nodes verify
 * with libsecp256k1, which accepts only low-S signatures (s ≤ n/2), so a high-S signature is
 * refused here too; the SDK always produces low-S ones.
 *
 * Why here: Bun's node:crypto (BoringSSL) has no secp256k1 curve, and `@noble/*` belongs to
 * src/crypto/. This is verification only, over public data, so constant time does not matter;
 * Jacobian coordinates keep one verification in the low milliseconds.
 */
import { keccak256 } from "./keccak.ts";

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;

/** A point in Jacobian coordinates; z = 0 is the point at infinity. */
interface Jacobian {
  x: bigint;
  y: bigint;
  z: bigint;
}

const INFINITY: Jacobian = { x: 0n, y: 1n, z: 0n };

function mod(a: bigint, m: bigint = P): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function powMod(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

/** Modular inverse by the extended Euclidean algorithm; `a` must be non-zero mod m. */
function invert(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return mod(oldS, m);
}

function double(p: Jacobian): Jacobian {
  if (p.z === 0n || p.y === 0n) return INFINITY;
  const a = mod(p.x * p.x);
  const b = mod(p.y * p.y);
  const c = mod(b * b);
  const d = mod(2n * (mod((p.x + b) * (p.x + b)) - a - c));
  const e = mod(3n * a);
  const f = mod(e * e);
  const x3 = mod(f - 2n * d);
  const y3 = mod(e * (d - x3) - 8n * c);
  const z3 = mod(2n * p.y * p.z);
  return { x: x3, y: y3, z: z3 };
}

function add(p: Jacobian, q: Jacobian): Jacobian {
  if (p.z === 0n) return q;
  if (q.z === 0n) return p;
  const z1z1 = mod(p.z * p.z);
  const z2z2 = mod(q.z * q.z);
  const u1 = mod(p.x * z2z2);
  const u2 = mod(q.x * z1z1);
  const s1 = mod(p.y * q.z * z2z2);
  const s2 = mod(q.y * p.z * z1z1);
  if (u1 === u2) return s1 === s2 ? double(p) : INFINITY;
  const h = mod(u2 - u1);
  const i = mod(4n * h * h);
  const j = mod(h * i);
  const r = mod(2n * (s2 - s1));
  const v = mod(u1 * i);
  const x3 = mod(r * r - j - 2n * v);
  const y3 = mod(r * (v - x3) - 2n * s1 * j);
  const z3 = mod((mod((p.z + q.z) * (p.z + q.z)) - z1z1 - z2z2) * h);
  return { x: x3, y: y3, z: z3 };
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** The curve point of a 33-byte compressed public key, or null when it is not on the curve. */
export function decompressPoint(key: Uint8Array): { x: bigint; y: bigint } | null {
  if (key.length !== 33 || (key[0] !== 0x02 && key[0] !== 0x03)) return null;
  const x = bytesToBigInt(key.subarray(1));
  if (x >= P) return null;
  const y2 = mod(x * x * x + 7n);
  // P ≡ 3 (mod 4), so a square root is y2^((P+1)/4).
  let y = powMod(y2, (P + 1n) / 4n, P);
  if (mod(y * y) !== y2) return null;
  if ((y & 1n) !== BigInt(key[0]! & 1)) y = P - y;
  return { x, y };
}

/**
 * Whether `signature` (64 bytes, r ‖ s, low-S) is a valid ECDSA secp256k1 signature by the
 * compressed public key `publicKey` over keccak256(`message`).
 */
export function verifySecp256k1(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const q = decompressPoint(publicKey);
  if (!q) return false;
  const r = bytesToBigInt(signature.subarray(0, 32));
  const s = bytesToBigInt(signature.subarray(32));
  if (r <= 0n || r >= N || s <= 0n || s > N >> 1n) return false;

  const e = mod(bytesToBigInt(keccak256(message)), N);
  const w = invert(s, N);
  const u1 = mod(e * w, N);
  const u2 = mod(r * w, N);

  // Shamir's trick: u1·G + u2·Q in one pass over the bits.
  const g: Jacobian = { x: GX, y: GY, z: 1n };
  const qj: Jacobian = { x: q.x, y: q.y, z: 1n };
  const gq = add(g, qj);
  let acc = INFINITY;
  for (let bit = 255n; bit >= 0n; bit--) {
    acc = double(acc);
    const b1 = (u1 >> bit) & 1n;
    const b2 = (u2 >> bit) & 1n;
    if (b1 && b2) acc = add(acc, gq);
    else if (b1) acc = add(acc, g);
    else if (b2) acc = add(acc, qj);
  }
  if (acc.z === 0n) return false;
  const zInv = invert(acc.z, P);
  const x = mod(acc.x * zInv * zInv);
  return mod(x, N) === r;
}
