/**
 * The local checks of docs/receipts.md §4.1 (verify.ts runs them first): the document, the kind,
 * the payloads recomputed from the receipt's fields (payloads.ts), and the two signatures,
 * verified with @noble/post-quantum (never the appliance's native code) over those payloads, not
 * over the receipt's copies. Nothing here asks the ledger.
 */
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { bytesToHex, equalBytes } from "./encoding.ts";
import { keyFingerprint, recordPayloadV1, sealPayloadV1, sha256Text } from "./payloads.ts";
import { rfc3339MsToMillis, type Receipt, type SignedPart } from "./receipt.ts";
import type { Check, CheckName } from "./verify.ts";

/** Adds one check to the report, in the order of the report. */
export type AddCheck = (name: CheckName, status: Check["status"], detail: string, evidence?: Record<string, unknown>) => void;

const ML_DSA_65 = { publicKeyLength: 1952, signatureLength: 3309 };

/** ML-DSA-65 Verify with an empty context; false, never a throw, for malformed bytes. */
function verifySignature(part: SignedPart, message: Uint8Array): boolean {
  if (part.publicKey.length !== ML_DSA_65.publicKeyLength || part.signature.length !== ML_DSA_65.signatureLength) return false;
  try {
    // @noble/post-quantum 0.7.1: verify(signature, message, publicKey).
    return ml_dsa65.verify(part.signature, message, part.publicKey);
  } catch {
    return false;
  }
}

/** What the local checks found, for the ledger's checks and the verdict. */
export interface LocalResult {
  readonly documentOk: boolean;
  /** Every local check passed. */
  readonly localOk: boolean;
  readonly signerFingerprint: Uint8Array;
  readonly sealFingerprint: Uint8Array;
}

/** The local checks of `receipt` for the document `docHash` (lowercase, checked), each added in order. */
export function localChecks(receipt: Receipt, docHash: string, add: AddCheck): LocalResult {
  const documentOk = docHash === receipt.originalDocHash;
  add("documentHash", documentOk ? "pass" : "fail", documentOk ? "the document's SHA-256 is the receipt's" : "the document's SHA-256 is not the receipt's: this receipt is for another document", { document: docHash, receipt: receipt.originalDocHash });
  // `kind` is in no signature: it is bound to the signer's type, which the key announcement's type binds in turn.
  const expectedKind = receipt.signerType === "user" ? "pdf_embedded" : "record_only";
  const kindOk = receipt.kind === expectedKind;
  add("kind", kindOk ? "pass" : "fail", kindOk ? `${receipt.kind}, as every record signed by ${receipt.signerType === "user" ? "a person" : "an organisation"} is` : `${receipt.kind} does not go with signerType ${receipt.signerType} (expected ${expectedKind}): the receipt was altered`, { kind: receipt.kind, signerType: receipt.signerType });

  const signerFingerprint = keyFingerprint(receipt.signer.algorithm, receipt.signer.publicKey);
  const sealFingerprint = keyFingerprint(receipt.seal.algorithm, receipt.seal.publicKey);
  const recordPayload = recordPayloadV1({ recordId: receipt.recordId, docHash: receipt.originalDocHash, signedAtMs: rfc3339MsToMillis(receipt.authenticatedAt)!, signerFingerprint });
  const recordPayloadOk = equalBytes(recordPayload, receipt.signer.payload);
  add("recordPayload", recordPayloadOk ? "pass" : "fail", recordPayloadOk ? "recomputed from the record's id, hash, time and signer key: equal" : "the receipt's signer.payload is not the record payload of its own fields", {
    signerKeyFingerprint: bytesToHex(signerFingerprint),
    recomputedSha256: sha256Text(recordPayload),
    receiptSha256: sha256Text(receipt.signer.payload),
  });
  const signerOk = verifySignature(receipt.signer, recordPayload);
  add("signerSignature", signerOk ? "pass" : "fail", signerOk ? `${receipt.signer.algorithm} signature of the ${receipt.signerType === "org" ? "organisation" : "signer"}'s key verifies` : "the signer's signature does not verify over the record payload", {
    algorithm: receipt.signer.algorithm,
    signatureSha256: sha256Text(receipt.signer.signature),
  });
  const sealPayload = sealPayloadV1(recordPayload, receipt.signer.signature, sealFingerprint);
  const sealPayloadOk = equalBytes(sealPayload, receipt.seal.payload);
  add("sealPayload", sealPayloadOk ? "pass" : "fail", sealPayloadOk ? "recomputed from the record payload, the signature and the seal key: equal" : "the receipt's seal.payload is not the seal payload of its own fields", {
    sealKeyFingerprint: bytesToHex(sealFingerprint),
    recomputedSha256: sha256Text(sealPayload),
    receiptSha256: sha256Text(receipt.seal.payload),
  });
  const sealOk = verifySignature(receipt.seal, sealPayload);
  add("sealSignature", sealOk ? "pass" : "fail", sealOk ? "the seal signature verifies (whose seal key it is, the key announcement and the identity say)" : "the seal signature does not verify over the seal payload", { algorithm: receipt.seal.algorithm, signatureSha256: sha256Text(receipt.seal.signature) });
  const localOk = documentOk && kindOk && recordPayloadOk && signerOk && sealPayloadOk && sealOk;
  return { documentOk, localOk, signerFingerprint, sealFingerprint };
}
