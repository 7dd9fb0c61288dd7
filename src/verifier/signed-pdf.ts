/**
 * Recovering the original document from a docverify-signed PDF (docs/signing.md, "The signed
 * PDF"). A record's `originalDocHash` is the SHA-256 of the PDF as it was before signing; the
 * signed PDF is those bytes followed by one incremental update whose Info dictionary holds
 *
 *   /DocverifyOriginalLength (N)   /DocverifySignedLength (S, 10 digits)   /DocverifyRecordId (uuid)
 *
 * so whoever checks a file hashes its first N bytes instead of the whole file. Pure functions over
 * bytes, no imports: the verify-receipt command line and page use them, and so does the verify
 * page's script (src/sign-pages/verify.ts).
 *
 * Callers may assume:
 * - `signed` only when the last marker in the file's last `SIGNED_PDF_TAIL_BYTES` bytes is
 *   consistent: N < S = the file's length, the marker's object lies after N, and both N and S
 *   fall right after a `%%EOF` (and at most 32 bytes of PDF whitespace);
 * - `changed-after-signing` when such a marker is consistent except that the file goes on after
 *   S: something (an editor's incremental update, anything) was appended to the signed PDF, so
 *   what a viewer shows is no longer what was signed and the file must not be taken for a match;
 * - `not-signed` otherwise, including any file that is not a PDF: callers hash the whole file.
 * What this proves is only that the bytes before the update are the original. The update itself
 * (stamp and metadata) is not signed by anything; see docs/signing.md for what that means.
 */

export type SignedPdf =
  | { kind: "signed"; originalLength: number; recordId: string }
  | { kind: "not-signed" }
  | { kind: "changed-after-signing"; originalLength: number; recordId: string };

/** How many bytes from the end of a file the verifier reads: signPdf keeps its whole update within them. */
export const SIGNED_PDF_TAIL_BYTES = 65_536;

const MAX_SPACE_AFTER_EOF = 32;
const isPdfSpace = (b: number) => b === 0x00 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;
const NOT_SIGNED: SignedPdf = { kind: "not-signed" };

/** Bytes as a string of the same length, one character per byte. */
function latin1(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return s;
}

/** True when `text` before index `end` ends with `%%EOF` and at most 32 whitespace bytes. */
function endsAtEof(text: string, end: number): boolean {
  let at = end;
  while (at > 0 && end - at < MAX_SPACE_AFTER_EOF && isPdfSpace(text.charCodeAt(at - 1))) at--;
  return at >= 5 && text.slice(at - 5, at) === "%%EOF";
}

/** The whole file's verdict. */
export function originalOfSignedPdf(bytes: Uint8Array): SignedPdf {
  return originalOfSignedPdfTail(bytes.subarray(Math.max(0, bytes.length - SIGNED_PDF_TAIL_BYTES)), bytes.length);
}

/**
 * The verdict from the file's last bytes only (`tail`, at least the last `SIGNED_PDF_TAIL_BYTES`
 * bytes or the whole file) and its total length, for callers that stream the file: read the
 * tail first, then hash the first `originalLength` bytes.
 */
export function originalOfSignedPdfTail(tail: Uint8Array, totalLength: number): SignedPdf {
  if (tail.length > totalLength) return NOT_SIGNED;
  const text = latin1(tail);
  const base = totalLength - tail.length; // file offset of text[0]
  const at = text.lastIndexOf("/DocverifyOriginalLength");
  if (at === -1) return NOT_SIGNED;
  // The dictionary's object: from its `obj` keyword to `endobj`, both in the tail.
  const start = text.lastIndexOf(" obj", at);
  const end = text.indexOf("endobj", at);
  if (start === -1 || end === -1) return NOT_SIGNED;
  const dict = text.slice(start, end);
  const n = /\/DocverifyOriginalLength\s*\((\d{1,10})\)/.exec(dict);
  const s = /\/DocverifySignedLength\s*\((\d{10})\)/.exec(dict);
  const id = /\/DocverifyRecordId\s*\(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)/.exec(dict);
  if (n === null || s === null || id === null) return NOT_SIGNED;
  const originalLength = Number(n[1]);
  const signedLength = Number(s[1]);
  // Both ends of the update must be inside the tail, and the marker after the original (it is in
  // docverify's update, or in a copy an editor appended later).
  if (!(base + MAX_SPACE_AFTER_EOF + 5 <= originalLength && originalLength <= base + start && originalLength < signedLength && signedLength <= totalLength)) return NOT_SIGNED;
  if (!endsAtEof(text, originalLength - base) || !endsAtEof(text, signedLength - base)) return NOT_SIGNED;
  const found = { originalLength, recordId: id[1]! };
  return signedLength === totalLength ? { kind: "signed", ...found } : { kind: "changed-after-signing", ...found };
}
