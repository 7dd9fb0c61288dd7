/**
 * A signing worker (sign-pool.ts): signs and seals records with its own key ring over the
 * seed-encryption key it receives once, with exactly the code the calling thread uses
 * (`signAndSealWith`, signer.ts), and verifies signatures with the calling thread's own
 * `createPublicKeyVerifier`. It logs nothing; a failure goes back as the job's answer with the
 * error's message only (key decryption: its reason and the key's fingerprint).
 */
import { KeyDecryptionError } from "./errors.ts";
import type { FromSignWorker, ToSignWorker } from "./sign-pool.ts";
import { createKeyRing, createPublicKeyVerifier, signAndSealWith, verifyEach, type KeyRing, type PublicKeyVerifier } from "./signer.ts";

declare const self: Worker;

let ring: KeyRing | null = null;
let verifier: PublicKeyVerifier | null = null;

self.onmessage = (event: MessageEvent<ToSignWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    // Held for the worker's life, as the calling thread's signer holds its own.
    ring = message.encryptionKey === null ? null : createKeyRing(message.encryptionKey, message.cacheSize);
    verifier = createPublicKeyVerifier(message.publicKeyCacheSize);
    return;
  }
  let reply: FromSignWorker;
  try {
    if (verifier === null) throw new Error("signing worker: a job before init");
    if (message.type === "verify") {
      reply = { type: "verified", id: message.id, results: verifyEach(verifier, message.calls) };
    } else {
      if (ring === null) throw new Error("signing worker: no master key to sign with");
      const { signature, sealSignature } = signAndSealWith(ring, message.signerKey, message.sealKey, message.recordPayload);
      reply = { type: "done", id: message.id, signature, sealSignature };
    }
  } catch (e) {
    reply =
      e instanceof KeyDecryptionError
        ? { type: "failed", id: message.id, message: "key decryption failed", keyDecryption: { reason: e.reason, keyId: e.keyId } }
        : { type: "failed", id: message.id, message: e instanceof Error ? e.message : String(e) };
  }
  self.postMessage(reply);
};

