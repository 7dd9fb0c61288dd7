/**
 * docverify's cryptography: the only module that imports @noble/* or node:crypto's signing
 * APIs. See docs/signing.md for the algorithms, key handling and the exact signed bytes.
 */
export { ALGORITHMS, DEFAULT_ALGORITHM, algorithmSpec, isAlgorithm, type Algorithm, type AlgorithmSpec } from "./algorithms.ts";
export { createEd25519Verifier, ed25519PublicKeyFromPkcs8, ed25519RawSigner, type Ed25519RawSigner, type Ed25519Verifier } from "./ed25519.ts";
export { KeyDecryptionError, MasterKeyFileError, MasterKeyMissingError, UnsupportedAlgorithmError, type KeyDecryptionFailure } from "./errors.ts";
export { keccak256 } from "./keccak.ts";
export { FINGERPRINT_LENGTH, PUBLIC_KEY_DOMAIN, encodeTaggedPublicKey, keyFingerprint, type TaggedPublicKey } from "./keys.ts";
export {
  confirmMasterKey,
  generateMasterKey,
  installPendingMasterKey,
  loadOrCreateMasterKey,
  masterKeyCheckValue,
  masterKeyId,
  parseMasterKey,
  pendingKeyFile,
  previousKeyFile,
  settleRotation,
  writePendingMasterKey, type LoadedMasterKey, type MasterKeyFormat, type MasterKeyOptions } from "./master-key.ts";
export { VERIFY_MEMO_DOMAIN, createVerificationMemo, verificationMemoKey, type VerificationMemo, type VerificationMemoOptions, type VerifyFn } from "./memo.ts";
export { publicKeyFromSeedWithNoble, signWithNoble, verifyWithNoble, type NobleSignOptions } from "./noble.ts";
export {
  RECORD_DOMAIN,
  RECORD_PAYLOAD_LENGTH,
  SEAL_DOMAIN,
  docHashToBytes,
  encodeRecordPayload,
  encodeSealPayload,
  uuidToBytes,
  type RecordPayloadFields,
} from "./payload.ts";
export {
  ENVELOPE_MAGIC,
  ENVELOPE_VERSION,
  MASTER_KEY_LENGTH,
  deriveSeedEncryptionKey,
  openSeed,
  resealSeed,
  sealSeed,
  type SeedBinding,
} from "./sealed-seed.ts";
export { decompressSecp256k1, verifySecp256k1 } from "./secp256k1.ts";
export { SignWorkerError } from "./sign-pool.ts";
export { createSigner, defaultSignWorkers, VERIFY_OFF_THREAD_ABOVE, type GeneratedKey, type RecordSignatures, type SealedKey, type Signer, type SignerOptions, type VerifyCall } from "./signer.ts";
