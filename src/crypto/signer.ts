/**
 * The signer: creates algorithm-tagged key pairs whose seeds are sealed under the master key,
 * signs with them, and verifies. A factory, so each composition root (and each test) owns its
 * own instance and cache; nothing here is module-level state.
 *
 * Guarantees:
 * - A seed is in memory only while a key is generated or opened; the long-lived form is the
 *   native private key object, cached per sealed key (fingerprint + purpose + exact envelope
 *   bytes) in a bounded LRU, so signing does not pay AES-GCM plus key expansion every time.
 *   `clearCache()` drops them.
 * - An opened seed must derive the stored public key, and a stored fingerprint must be the key's
 *   own, or `KeyDecryptionError("key_mismatch")`: a row can't sign under another key's name.
 * - Every signature is verified natively before it is returned (about a fifth of the cost of signing),
 *   so a faulty signing computation is an error, not a bad record on a permanent ledger.
 * - Without a master key, `generateKey` and `sign` throw `MasterKeyMissingError` (503);
 *   `verify` still works: verification needs public keys only.
 * - `verify` returns false, never throws, for bytes of the wrong length or content; it throws
 *   only for an algorithm name this build does not know, or arguments that are not bytes.
 * - `verify` keeps the native public-key objects it imported in a bounded LRU keyed on the
 *   algorithm and the exact public-key bytes (importing one measured as costly as the
 *   verification itself). An entry is used only after its stored bytes compare equal to the
 *   key passed in; a key that fails to import is never cached.
 * - `verifyMany` answers each call exactly as `verify` does (null where `verify` throws), on the
 *   calling thread while verification is quiet, on the signing workers while it is busy.
 */
import { randomBytes, type KeyObject } from "node:crypto";
import { algorithmSpec, DEFAULT_ALGORITHM, isAlgorithm, type Algorithm } from "./algorithms.ts";
import { assertBytes, bytesEqual, checkOptions, toHex } from "./bytes.ts";
import { KeyDecryptionError, MasterKeyMissingError, UnsupportedAlgorithmError } from "./errors.ts";
import { keyFingerprint } from "./keys.ts";
import { Lru, namedCache, stringBytes, type CacheSize, type NamedCache } from "../lib/lru.ts";
import { encodeSealPayload } from "./payload.ts";
import { assertPurpose, deriveSeedEncryptionKey, openSeed, sealSeed } from "./sealed-seed.ts";
import { masterKeyCheckValue } from "./master-key.ts";
import { createSignPool } from "./sign-pool.ts";

/** A private key as stored: everything needed to open and use it, nothing secret in clear. */
export interface SealedKey {
  readonly algorithm: Algorithm;
  readonly publicKey: Uint8Array;
  /** What the key is for, bound into the sealed seed, e.g. `org:<orgId>` or `service-seal`. */
  readonly purpose: string;
  /** The seed envelope (sealed-seed.ts). */
  readonly sealedSeed: Uint8Array;
  /** Optional: when present it must equal the fingerprint of `{ algorithm, publicKey }`. */
  readonly fingerprint?: Uint8Array;
}

export interface GeneratedKey extends SealedKey {
  readonly fingerprint: Uint8Array;
  /**
   * The check value (master-key.ts) of the master key the seed is sealed under: storage refuses
   * the key when the database has meanwhile moved to another master key (a rotation).
   */
  readonly sealedUnder: string;
}

export interface Signer {
  /** True when a master key is configured, i.e. `generateKey` and `sign` can work. */
  readonly canSign: boolean;
  generateKey(purpose: string, algorithm?: Algorithm): GeneratedKey;
  sign(key: SealedKey, message: Uint8Array): Uint8Array;
  /**
   * A record's signature by `signerKey` over `recordPayload` (payload.ts) and the seal's over the
   * seal payload binding it, each verified before it is returned: on a signing worker when the
   * signer has any (started on first use), else on this thread. Rejects with what `sign` throws,
   * or, when a worker stops while it holds the job, with `SignWorkerError`; nothing is returned
   * then, so a caller that writes only after it resolves writes nothing.
   */
  signAndSeal(signerKey: SealedKey, sealKey: SealedKey & { readonly fingerprint: Uint8Array }, recordPayload: Uint8Array): Promise<RecordSignatures>;
  /** Signing workers running now (0 before the first signAndSeal and after an idle stop). */
  workersRunning(): number;
  verify(algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  /**
   * Each call's verification, in order: what `verify` answers for it, or null where `verify`
   * throws. On this thread, returning the array, unless verification is busy (more than
   * `verifyOffThreadAbove` calls in the current and the previous second) and the signer has
   * workers: then on the workers, returning a promise, which never rejects: calls a stopped
   * worker held are verified on this thread instead.
   */
  verifyMany(calls: readonly VerifyCall[]): (boolean | null)[] | Promise<(boolean | null)[]>;
  /** `verifyMany`'s calls so far, by where they were verified (the metric docverify_signature_verifications_total). */
  verifiedBy(): { readonly thread: number; readonly workers: number };
  /**
   * Forgets cached private keys (for example after the master key is rotated) and imported public
   * keys; stops the signing workers, whose caches go with them (they start again when needed).
   */
  clearCache(): void;
  /**
   * This thread's caches (the imported public keys, the opened private keys), each with its size
   * and budget (/metrics), emptied when the service goes quiet. Each signing worker keeps its own,
   * with the same budgets, and stops with them after `idleMs` without a job (sign-pool.ts).
   */
  caches(): readonly NamedCache[];
}

export interface SignerOptions {
  /** The 32-byte master key, or null when none is configured (signing then answers 503). */
  readonly masterKey: Uint8Array | null;
  /** Opened private keys kept in memory, at most; default 1024 (and at most `PRIVATE_KEY_CACHE_BYTES`). */
  readonly cacheSize?: number;
  /** Imported public keys `verify` keeps in memory, at most; default 1024 (and at most `PUBLIC_KEY_CACHE_BYTES`). */
  readonly publicKeyCacheSize?: number;
  /**
   * Signing workers for `signAndSeal` and a busy `verifyMany`: default one per core
   * (`navigator.hardwareConcurrency`, at least 1); 0 signs and verifies on the calling thread.
   * None runs before the first job.
   */
  readonly workers?: number;
  /**
   * `verifyMany` goes to the workers once more than this many calls were made in the current and
   * the previous second (`VERIFY_OFF_THREAD_ABOVE`); 0: always, when there are workers. Below
   * it a verification does not wait for a worker, nor start one.
   */
  readonly verifyOffThreadAbove?: number;
  /** For tests only: another worker entry point (one that wraps sign-worker.ts). */
  readonly workerEntry?: URL;
}

/**
 * About a fiftieth of a core in ML-DSA-65 verifications (the cost of a pair: docs/benchmarks.md,
 * "Single operations"): above it a worker's round trip is cheaper for this thread than verifying
 * here, and the verifications run beside this thread instead of stalling it (docs/benchmarks.md,
 * "How the figures moved": memo off).
 */
export const VERIFY_OFF_THREAD_ABOVE = 200;

/** One signature verification, as `verify`'s arguments. */
export interface VerifyCall {
  readonly algorithm: Algorithm;
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

/**
 * What the native key objects hold outside the JavaScript heap, measured for ML-DSA-65 on Bun 1.4.5
 * (`createPublicKey` 11.0 KB; `importSeed`'s private key and public key bytes 29.5 KB), rounded up.
 */
const PUBLIC_KEY_OBJECT_BYTES = 12 * 1024;
const PRIVATE_KEY_OBJECT_BYTES = 30 * 1024;
/** Imported public keys' byte budget, per thread: a key object, a copy of the key and its id, about 14.5 KB each (some 280 keys). */
export const PUBLIC_KEY_CACHE_BYTES = 4 * 1024 * 1024;
/** Opened private keys' byte budget, per thread: both key objects and their id, about 42.5 KB each (some 190 keys). */
export const PRIVATE_KEY_CACHE_BYTES = 8 * 1024 * 1024;

/** `Signer.verify`: false for bytes of the wrong length or content; throws for an unknown algorithm or non-bytes. */
export type PublicKeyVerifier = ((algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean) & {
  /** Forgets the imported public keys. */
  readonly clear: () => void;
  /** The imported public keys' entries, bytes and budget. */
  readonly stats: () => CacheSize;
};

/**
 * Verification with the native public keys imported kept in a bounded LRU (the header): the
 * signer's `verify`, and each signing worker's (sign-worker.ts).
 */
export function createPublicKeyVerifier(publicKeyCacheSize: number): PublicKeyVerifier {
  const imported = new Lru<string, { readonly bytes: Buffer; readonly key: KeyObject }>({
    maxEntries: publicKeyCacheSize,
    maxBytes: PUBLIC_KEY_CACHE_BYTES,
    bytesOf: (id, entry) => stringBytes(id) + 64 + entry.bytes.byteLength + PUBLIC_KEY_OBJECT_BYTES,
  });

  /**
   * The native key for raw public-key bytes, from the LRU when these exact bytes were imported
   * before. The LRU is looked up by algorithm and a 64-byte prefix (cheap to build; for ML-DSA it
   * is the key's random seed rho), then the whole key is compared, so a prefix shared by two keys
   * costs an import, never a wrong key. Throws what the import throws.
   */
  function publicKeyObject(spec: ReturnType<typeof algorithmSpec>, publicKey: Uint8Array): KeyObject {
    const bytes = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength);
    const id = `${spec.name}|${bytes.toString("hex", 0, 64)}`;
    const hit = imported.get(id);
    if (hit !== undefined && hit.bytes.equals(bytes)) return hit.key;
    const key = spec.importPublicKey(publicKey);
    imported.set(id, { bytes: Buffer.from(bytes), key }); // our own copy: the caller's array may change
    return key;
  }

  function verify(algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (!isAlgorithm(algorithm)) throw new UnsupportedAlgorithmError(String(algorithm));
    const spec = algorithmSpec(algorithm);
    assertBytes(publicKey, "publicKey");
    assertBytes(message, "message");
    assertBytes(signature, "signature");
    if (publicKey.length !== spec.publicKeyLength || signature.length !== spec.signatureLength) return false;
    let nativeKey: KeyObject;
    try {
      nativeKey = publicKeyObject(spec, publicKey);
    } catch {
      return false;
    }
    return spec.verify(nativeKey, message, signature);
  }
  return Object.assign(verify, { clear: () => imported.clear(), stats: () => imported.stats() });
}

/** `verifyMany`'s answer on one thread: each call as `verify` answers it, null where it throws. */
export function verifyEach(verify: PublicKeyVerifier, calls: readonly VerifyCall[]): (boolean | null)[] {
  return calls.map((c) => {
    try {
      return verify(c.algorithm, c.publicKey, c.message, c.signature);
    } catch {
      return null;
    }
  });
}

/** The two signatures of a record. */
export interface RecordSignatures {
  readonly signature: Uint8Array;
  readonly sealSignature: Uint8Array;
}

/**
 * Most signing workers by default: the API's one thread prepares, commits and answers every
 * record, and cannot keep more busy than this (each holds about 6 MB while it runs).
 */
export const MAX_DEFAULT_SIGN_WORKERS = 4;

/** One signing worker per core, at least one, at most `MAX_DEFAULT_SIGN_WORKERS`. */
export function defaultSignWorkers(): number {
  const cores = typeof navigator === "object" ? navigator.hardwareConcurrency : 1;
  return Math.min(MAX_DEFAULT_SIGN_WORKERS, Number.isSafeInteger(cores) && cores > 0 ? cores : 1);
}

export interface OpenedKey {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

// `sealedUnder`: a GeneratedKey passed as it is (storage reads it; signing does not need it).
const SEALED_KEY_FIELDS = ["algorithm", "publicKey", "purpose", "sealedSeed", "fingerprint", "sealedUnder"] as const;

/** Opened private keys, and signing with them: the half of the signer the worker pool shares. */
export interface KeyRing {
  /** Signs `message` with the sealed `key` (opened once, then cached), verified before it is returned. */
  sign(key: SealedKey, message: Uint8Array): Uint8Array;
  /** Caches a key just generated, so its first use does not open the seed again. */
  remember(key: { fingerprint: Uint8Array; purpose: string; sealedSeed: Uint8Array }, opened: OpenedKey): void;
  clear(): void;
  /** The opened keys' entries, bytes and budget. */
  stats(): CacheSize;
}

/**
 * The private-key side of a signer over the seed-encryption key (derived from the master key):
 * used by `createSigner` on the calling thread and by each signing worker (sign-worker.ts) on its
 * own, so both sign with exactly the same checks.
 */
export function createKeyRing(encryptionKey: Uint8Array, cacheSize: number): KeyRing {
  assertBytes(encryptionKey, "encryptionKey", 32);
  const opened = new Lru<string, OpenedKey>({ maxEntries: cacheSize, maxBytes: PRIVATE_KEY_CACHE_BYTES, bytesOf: (id) => stringBytes(id) + PRIVATE_KEY_OBJECT_BYTES + PUBLIC_KEY_OBJECT_BYTES });
  const cacheKey = (fingerprint: Uint8Array, purpose: string, sealedSeed: Uint8Array) => `${toHex(fingerprint)}|${purpose}|${toHex(sealedSeed)}`;
  return {
    sign(key, message) {
      checkOptions(key, "sealed key", SEALED_KEY_FIELDS);
      const spec = algorithmSpec(key.algorithm);
      assertBytes(key.publicKey, "publicKey", spec.publicKeyLength);
      assertBytes(key.sealedSeed, "sealedSeed");
      assertPurpose(key.purpose);
      assertBytes(message, "message");
      const fingerprint = keyFingerprint({ algorithm: spec.name, publicKey: key.publicKey });
      if (key.fingerprint !== undefined) {
        assertBytes(key.fingerprint, "fingerprint");
        if (!bytesEqual(key.fingerprint, fingerprint)) throw new KeyDecryptionError("key_mismatch", toHex(key.fingerprint));
      }
      const id = cacheKey(fingerprint, key.purpose, key.sealedSeed);
      let entry = opened.get(id);
      if (entry === undefined) {
        const seed = openSeed(encryptionKey, key.sealedSeed, { algorithm: spec.name, fingerprint, purpose: key.purpose });
        try {
          const { privateKey, publicKey } = spec.importSeed(seed);
          if (!bytesEqual(publicKey, key.publicKey)) throw new KeyDecryptionError("key_mismatch", toHex(fingerprint));
          entry = { privateKey, publicKey: spec.importPublicKey(publicKey) };
          opened.set(id, entry);
        } finally {
          seed.fill(0);
        }
      }
      const signature = spec.sign(entry.privateKey, message);
      if (!spec.verify(entry.publicKey, message, signature)) {
        throw new Error(`${spec.name}: a fresh signature did not verify (key ${toHex(fingerprint)})`);
      }
      return signature;
    },
    remember(key, entry) {
      opened.set(cacheKey(key.fingerprint, key.purpose, key.sealedSeed), entry);
    },
    clear() {
      opened.clear();
    },
    stats: () => opened.stats(),
  };
}

/**
 * A record's two signatures (docs/signing.md §3): the signer's over the record payload, then the
 * seal's over the seal payload, which binds that signature. The same on the calling thread and in
 * a signing worker.
 */
export function signAndSealWith(ring: KeyRing, signerKey: SealedKey, sealKey: SealedKey & { readonly fingerprint: Uint8Array }, recordPayload: Uint8Array): RecordSignatures {
  const signature = ring.sign(signerKey, recordPayload);
  const sealSignature = ring.sign(sealKey, encodeSealPayload(recordPayload, signature, sealKey.fingerprint));
  return { signature, sealSignature };
}

export function createSigner(options: SignerOptions): Signer {
  checkOptions(options, "createSigner options", ["masterKey", "cacheSize", "publicKeyCacheSize", "workers", "verifyOffThreadAbove", "workerEntry"]);
  const { masterKey, cacheSize = 1024, publicKeyCacheSize = 1024 } = options;
  if (masterKey !== null) assertBytes(masterKey, "masterKey", 32);
  const workers = options.workers ?? defaultSignWorkers();
  if (!Number.isSafeInteger(workers) || workers < 0) throw new RangeError("workers must be a non-negative integer");
  // Derived once; the master key itself is not retained.
  const encryptionKey = masterKey === null ? null : deriveSeedEncryptionKey(masterKey);
  const sealedUnder = masterKey === null ? "" : masterKeyCheckValue(masterKey);
  const verifyHere = createPublicKeyVerifier(publicKeyCacheSize);
  const offThreadAbove = options.verifyOffThreadAbove ?? VERIFY_OFF_THREAD_ABOVE;
  if (!Number.isSafeInteger(offThreadAbove) || offThreadAbove < 0) throw new RangeError("verifyOffThreadAbove must be a non-negative integer");
  const verified = { thread: 0, workers: 0 };
  // verifyMany's calls in the current one-second window and the one before it.
  let windowStart = -Infinity;
  let inWindow = 0;
  let previousWindow = 0;
  function verificationBusy(calls: number): boolean {
    const now = performance.now();
    if (now - windowStart >= 1000) {
      previousWindow = now - windowStart < 2000 ? inWindow : 0;
      windowStart = now;
      inWindow = 0;
    }
    inWindow += calls;
    return previousWindow + inWindow > offThreadAbove;
  }

  function requireEncryptionKey(): Uint8Array {
    if (encryptionKey === null) throw new MasterKeyMissingError(null);
    return encryptionKey;
  }
  const keyRing = encryptionKey === null ? null : createKeyRing(encryptionKey, cacheSize);
  function requireKeyRing(): KeyRing {
    if (keyRing === null) throw new MasterKeyMissingError(null);
    return keyRing;
  }
  // Started on the first job, never at creation: idle memory (docs/benchmarks.md, "Idle memory"). Without a master key the
  // workers only verify.
  const pool =
    workers === 0
      ? null
      : createSignPool({ encryptionKey, size: workers, cacheSize, publicKeyCacheSize, ...(options.workerEntry === undefined ? {} : { entry: options.workerEntry }) });

  return {
    canSign: encryptionKey !== null,

    generateKey(purpose, algorithm = DEFAULT_ALGORITHM) {
      const encKey = requireEncryptionKey();
      assertPurpose(purpose);
      const spec = algorithmSpec(algorithm);
      const seed = new Uint8Array(randomBytes(spec.seedLength));
      try {
        const { privateKey, publicKey } = spec.importSeed(seed);
        const fingerprint = keyFingerprint({ algorithm: spec.name, publicKey });
        const sealedSeed = sealSeed(encKey, seed, { algorithm: spec.name, fingerprint, purpose });
        requireKeyRing().remember({ fingerprint, purpose, sealedSeed }, { privateKey, publicKey: spec.importPublicKey(publicKey) });
        return { algorithm: spec.name, publicKey, fingerprint, purpose, sealedSeed, sealedUnder };
      } finally {
        seed.fill(0);
      }
    },

    sign(key, message) {
      return requireKeyRing().sign(key, message);
    },

    async signAndSeal(signerKey, sealKey, recordPayload) {
      const ring = requireKeyRing();
      if (pool !== null) return pool.signAndSeal(signerKey, sealKey, recordPayload);
      return signAndSealWith(ring, signerKey, sealKey, recordPayload);
    },

    workersRunning() {
      return pool?.running() ?? 0;
    },

    verify: (algorithm, publicKey, message, signature) => verifyHere(algorithm, publicKey, message, signature),

    verifyMany(calls) {
      if (pool === null || calls.length === 0 || !verificationBusy(calls.length)) {
        verified.thread += calls.length;
        return verifyEach(verifyHere, calls);
      }
      return pool.verifyMany(calls).then(
        (results) => {
          verified.workers += calls.length;
          return results;
        },
        () => {
          verified.thread += calls.length;
          return verifyEach(verifyHere, calls);
        },
      );
    },

    verifiedBy: () => ({ ...verified }),

    clearCache() {
      keyRing?.clear();
      verifyHere.clear();
      pool?.close();
    },

    caches() {
      const out = [namedCache("signer_public_keys", verifyHere)];
      if (keyRing !== null) out.push(namedCache("signer_private_keys", keyRing));
      return out;
    },
  };
}
