/**
 * The document, on the person's computer: is it a PDF, what is its SHA-256, and does the
 * signature the service asks for commit to exactly that hash? Nothing here sends anything.
 *
 * The hash is computed in JavaScript (noble's SHA-256), not with WebCrypto: `crypto.subtle`
 * exists only in secure contexts, and the appliance may be reached over plain http on a LAN. The
 * file is read in chunks so the page can say how far it has got.
 */
import { base64URLStringToBuffer, bufferToBase64URLString } from "@simplewebauthn/browser";
import { sha256 } from "@noble/hashes/sha2.js";

/** ISO 32000 §7.5.2: the header `%PDF-` may follow up to 1,024 bytes of anything. */
const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d];
const HEADER_WINDOW = 1024;
const CHUNK = 4 * 1024 * 1024;

/** True when `head` (the file's first bytes) holds a PDF header where a reader looks for it. */
export function looksLikePdf(head: Uint8Array): boolean {
  return indexOf(head.subarray(0, HEADER_WINDOW + PDF_HEADER.length), Uint8Array.from(PDF_HEADER)) >= 0;
}

/** Where `needle` first occurs in `hay`, or -1. */
export function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The file's bytes and their SHA-256, read chunk by chunk; `progress` gets the fraction done. */
export async function readAndHash(file: Blob, progress: (done: number, total: number) => void = () => {}): Promise<{ bytes: Uint8Array; digest: Uint8Array }> {
  const bytes = new Uint8Array(file.size);
  const h = sha256.create();
  for (let at = 0; at < file.size; at += CHUNK) {
    const chunk = new Uint8Array(await file.slice(at, Math.min(at + CHUNK, file.size)).arrayBuffer());
    h.update(chunk);
    bytes.set(chunk, at);
    progress(at + chunk.length, file.size);
  }
  return { bytes, digest: h.digest() };
}

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What POST /app/signatures/options adds to the WebAuthn options. */
export interface SigningIntent {
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly signedAt: string;
  /** base64url of the exact record payload the person's key will sign (docs/signing.md). */
  readonly payload: string;
}

/** The service asked for a signature over something else: nothing may be signed. */
export class MismatchError extends Error {
  constructor(why: string) {
    super(`The service asked your passkey to confirm something other than this document (${why}), so nothing was signed. Tell your administrator.`);
    this.name = "MismatchError";
  }
}

/**
 * Checks, before the passkey is asked, that the challenge commits to this document: the challenge
 * is base64url(SHA-256(payload)), and the payload holds the document's 32-byte digest. Throws
 * MismatchError otherwise. Returns the intent.
 */
export function checkIntent(options: { challenge?: unknown; docverify?: unknown }, digest: Uint8Array): SigningIntent {
  const intent = options.docverify as Partial<SigningIntent> | undefined;
  if (typeof options.challenge !== "string" || intent === undefined || typeof intent.payload !== "string" || typeof intent.recordId !== "string" || typeof intent.signedAt !== "string") {
    throw new MismatchError("the request was incomplete");
  }
  let payload: Uint8Array;
  try {
    payload = new Uint8Array(base64URLStringToBuffer(intent.payload));
  } catch {
    throw new MismatchError("the record to sign was unreadable");
  }
  if (bufferToBase64URLString(sha256(payload).buffer as ArrayBuffer) !== options.challenge) throw new MismatchError("the challenge is not the record's");
  if (indexOf(payload, digest) < 0) throw new MismatchError("the record does not name this document");
  if (typeof intent.originalDocHash !== "string" || !intent.originalDocHash.endsWith(hex(digest))) throw new MismatchError("the record names another document");
  return intent as SigningIntent;
}
