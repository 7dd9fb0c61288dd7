/**
 * The signed PDF (docs/signing.md §7): the original bytes unchanged, followed by exactly one
 * incremental update (ISO 32000-1 §7.5.6) that adds docverify's metadata and a visible stamp on
 * the first page. Runs in the signer's browser (the document never leaves it), so nothing here
 * imports node: or bun:. This is the only module that imports the PDF library.
 *
 * Callers may assume, when `signPdf` returns:
 * - the first `original.length` bytes of the result are `original`, byte for byte (checked here);
 * - what follows is one update, written uncompressed (no object streams, a classic xref section
 *   with `/Prev`), ending with `%%EOF` and one line feed, whose Info dictionary carries the
 *   marker: `/DocverifyOriginalLength (N)` (N = `original.length`, ASCII digits),
 *   `/DocverifySignedLength (S)` (S = the result's length, 10 digits with leading zeros),
 *   `/DocverifyRecordId (uuid)`, and, as UTF-16BE text strings with the exact text,
 *   `/DocverifyVerifyUrl` and `/DocverifySignedBy` ("NAME (ORGANISATION)");
 * - the whole update lies within the last `SIGNED_PDF_TAIL_BYTES` bytes, so a verifier reading
 *   only the file's tail finds it (docs/signing.md, "The signed PDF");
 * - the stamp's visible text uses the standard font Helvetica; characters it cannot show are
 *   transliterated (accents dropped) or replaced by "?", while the metadata keeps the exact text.
 * Otherwise it throws `SignPdfError` with a `reason`, and nothing is produced.
 */
import {
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRef,
  PDFString,
  StandardFonts,
  concatTransformationMatrix,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  type PDFFont,
  type PDFPage,
} from "@cantoo/pdf-lib";

export interface Stamp {
  /** The record's id: a lowercase canonical UUID. */
  recordId: string;
  /** `{publicUrl}/verify/{recordId}`; http or https. */
  verifyUrl: string;
  /** The signer's name as enrolled. */
  signerName: string;
  organisation: string;
  /** RFC 3339, e.g. the record's `authenticatedAt`. */
  signedAt: string;
}

export type SignPdfFailure =
  /** The bytes are not a PDF (no `%PDF-` header in the first 1,024 bytes). */
  | "not-pdf"
  /** The PDF is encrypted: an update would have to be encrypted with its key. */
  | "encrypted"
  /** The PDF library cannot read it, or it has no page. */
  | "unreadable"
  /** Readable, but it cannot take an update whose start a verifier can find (bytes after its last `%%EOF`), or the update came out wrong. */
  | "not-updatable"
  /** A stamp field is malformed (the caller's mistake). */
  | "invalid-stamp";

export class SignPdfError extends Error {
  override readonly name = "SignPdfError";
  constructor(
    readonly reason: SignPdfFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The update, and so the marker, always lies within this many bytes of the end of the signed PDF. */
export const SIGNED_PDF_TAIL_BYTES = 65_536;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Written first, then overwritten in place with the final length (same width, so no offset moves). */
const SIGNED_LENGTH_PLACEHOLDER = "0".repeat(10);
const MAX_SIGNED_LENGTH = 9_999_999_999;

/** PDF whitespace (ISO 32000-1 Table 1) that may follow the original's last `%%EOF`. */
const isPdfSpace = (b: number) => b === 0x00 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;
/** At most this many whitespace bytes after `%%EOF`: the same bound the verifier uses. */
const MAX_SPACE_AFTER_EOF = 32;

/** True when `bytes` end with `%%EOF` and at most 32 whitespace bytes: the point a verifier will recognise. */
function endsAtEof(bytes: Uint8Array): boolean {
  let end = bytes.length;
  while (end > 0 && bytes.length - end < MAX_SPACE_AFTER_EOF && isPdfSpace(bytes[end - 1]!)) end--;
  if (end < 5) return false;
  return String.fromCharCode(...bytes.subarray(end - 5, end)) === "%%EOF";
}

function checkStamp(stamp: Stamp): Date {
  if (!UUID.test(stamp.recordId)) throw new SignPdfError("invalid-stamp", "recordId must be a lowercase canonical UUID");
  let url: URL;
  try {
    url = new URL(stamp.verifyUrl);
  } catch {
    throw new SignPdfError("invalid-stamp", "verifyUrl must be an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new SignPdfError("invalid-stamp", "verifyUrl must be http or https");
  if (stamp.signerName.trim() === "") throw new SignPdfError("invalid-stamp", "signerName is empty");
  const date = new Date(stamp.signedAt);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(stamp.signedAt) || Number.isNaN(date.getTime())) {
    throw new SignPdfError("invalid-stamp", "signedAt must be an RFC 3339 time");
  }
  return date;
}

/** Windows-1252's printable characters beyond Latin-1's: what Helvetica with WinAnsiEncoding can show. */
const WIN_ANSI_EXTRA = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ";
const showable = (c: string) => {
  const code = c.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.includes(c);
};

/** Latin letters that Unicode does not decompose into a base letter and an accent. */
const UNDECOMPOSED: Record<string, string> = { Ł: "L", ł: "l", Đ: "D", đ: "d", Ħ: "H", ħ: "h", ı: "i", Ŀ: "L", ŀ: "l", Ŧ: "T", ŧ: "t", ĸ: "k", Ŋ: "N", ŋ: "n", ſ: "s", Ə: "E", ə: "e" };

/** Text the standard font can draw: each character kept, else without its accents, else "?". */
export function stampText(text: string): string {
  let out = "";
  for (const c of text.replace(/\s+/g, " ")) {
    if (showable(c)) out += c;
    else {
      const bare = UNDECOMPOSED[c] ?? c.normalize("NFKD").replace(/\p{M}/gu, "");
      out += bare !== "" && [...bare].every(showable) ? bare : "?";
    }
  }
  return out;
}

/** The longest prefix of `text` (plus "…") that fits `width` at `size`. */
function fit(font: PDFFont, text: string, size: number, width: number): string {
  if (font.widthOfTextAtSize(text, size) <= width) return text;
  const chars = [...text];
  while (chars.length > 0 && font.widthOfTextAtSize(chars.join("") + "…", size) > width) chars.pop();
  return chars.join("") + "…";
}

const pad2 = (n: number) => String(n).padStart(2, "0");
const utcMinute = (d: Date) => `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())} UTC`;

async function load(original: Uint8Array): Promise<PDFDocument> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(original, { forIncrementalUpdate: true, updateMetadata: false, throwOnInvalidObject: false });
  } catch (e) {
    if (e instanceof Error && /encrypted/i.test(e.message)) throw new SignPdfError("encrypted", "this PDF is encrypted (password-protected); save an unprotected copy and sign that");
    throw new SignPdfError("unreadable", `this PDF cannot be read: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (doc.isEncrypted) throw new SignPdfError("encrypted", "this PDF is encrypted (password-protected); save an unprotected copy and sign that");
  if (doc.getPageCount() === 0) throw new SignPdfError("unreadable", "this PDF has no page to stamp");
  return doc;
}

/**
 * The matrix from the page as it is shown (origin at its visible bottom left, /Rotate applied) to
 * its default user space, and the shown width. A viewer turns the page clockwise by /Rotate.
 */
function shownFrame(page: PDFPage): { matrix: [number, number, number, number, number, number]; width: number } {
  const { x, y, width, height } = page.getCropBox();
  const turn = (((page.getRotation().angle % 360) + 360) % 360) as number;
  if (turn === 90) return { matrix: [0, 1, -1, 0, x + width, y], width: height };
  if (turn === 180) return { matrix: [-1, 0, 0, -1, x + width, y + height], width };
  if (turn === 270) return { matrix: [0, -1, 1, 0, x, y + height], width: height };
  return { matrix: [1, 0, 0, 1, x, y], width };
}

/** The visible stamp: a white box with a thin border at the bottom left of the first page as shown. */
async function drawStamp(doc: PDFDocument, stamp: Stamp, signedAt: Date): Promise<void> {
  const page = doc.getPage(0);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const frame = shownFrame(page);
  const margin = Math.min(12, frame.width / 20);
  const room = frame.width - 2 * margin - 8;
  const who = `${stampText(stamp.signerName)} (${stampText(stamp.organisation)})`;
  const lines = [`Signed with docverify by ${who} on ${utcMinute(signedAt)}`, `Verify at ${stampText(stamp.verifyUrl)}`];
  // 7 pt, smaller down to 4 pt on a narrow page; past that the line is cut with "…".
  let size = 7;
  const widest = () => Math.max(...lines.map((l) => font.widthOfTextAtSize(l, size)));
  while (size > 4 && widest() > room) size -= 0.5;
  const shown = lines.map((l) => fit(font, l, size, room));
  const lineHeight = size * 1.3;
  const width = Math.max(...shown.map((l) => font.widthOfTextAtSize(l, size))) + 8;
  const height = lineHeight * shown.length + 5;
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(...frame.matrix));
  page.drawRectangle({ x: margin, y: margin, width, height, color: rgb(1, 1, 1), opacity: 0.9, borderColor: rgb(0.2, 0.2, 0.2), borderWidth: 0.5 });
  shown.forEach((line, i) => {
    page.drawText(line, { x: margin + 4, y: margin + height - 3 - lineHeight * (i + 1) + (lineHeight - size) / 2 + 1, size, font, color: rgb(0, 0, 0) });
  });
  page.pushOperators(popGraphicsState());
}

function writeMetadata(doc: PDFDocument, original: Uint8Array, stamp: Stamp): void {
  const ref = doc.context.trailerInfo.Info;
  const existing = ref === undefined ? undefined : doc.context.lookup(ref);
  if (existing !== undefined && !(existing instanceof PDFDict)) throw new SignPdfError("unreadable", "this PDF's Info entry is not a dictionary");
  const info = existing ?? doc.context.obj({});
  info.set(PDFName.of("DocverifyOriginalLength"), PDFString.of(String(original.length)));
  info.set(PDFName.of("DocverifySignedLength"), PDFString.of(SIGNED_LENGTH_PLACEHOLDER));
  info.set(PDFName.of("DocverifyRecordId"), PDFString.of(stamp.recordId));
  info.set(PDFName.of("DocverifyVerifyUrl"), PDFHexString.fromText(stamp.verifyUrl));
  info.set(PDFName.of("DocverifySignedBy"), PDFHexString.fromText(`${stamp.signerName} (${stamp.organisation})`));
  // An indirect Info is rewritten in the update; a missing or direct one becomes a new object.
  if (existing !== undefined && ref instanceof PDFRef) doc.context.snapshot?.markRefForSave(ref);
  else doc.context.trailerInfo.Info = doc.context.register(info);
}

/**
 * Returns `original` followed by one incremental update with docverify's metadata and visible
 * stamp. Throws `SignPdfError` (see `SignPdfFailure`) and never returns a partial result.
 */
export async function signPdf(original: Uint8Array, stamp: Stamp): Promise<Uint8Array> {
  const signedAt = checkStamp(stamp);
  const head = String.fromCharCode(...original.subarray(0, 1024));
  if (!head.includes("%PDF-")) throw new SignPdfError("not-pdf", "this file is not a PDF");
  if (!endsAtEof(original)) throw new SignPdfError("not-updatable", "this PDF has data after its end (%%EOF); re-save it with a PDF program and sign the result");
  const doc = await load(original);
  const snapshot = doc.context.snapshot;
  if (snapshot === undefined) throw new SignPdfError("not-updatable", "the PDF library did not prepare an incremental update");
  await drawStamp(doc, stamp, signedAt);
  snapshot.markRefForSave(doc.getPage(0).ref);
  writeMetadata(doc, original, stamp);
  let update: Uint8Array;
  try {
    update = await doc.saveIncremental(snapshot, { useObjectStreams: false });
  } catch (e) {
    throw new SignPdfError("not-updatable", `this PDF cannot be updated: ${e instanceof Error ? e.message : String(e)}`);
  }
  // One line feed after the update's %%EOF, so a later editor's update starts on a new line.
  const eol = update[update.length - 1] === 0x0a ? 0 : 1;
  const signed = new Uint8Array(original.length + update.length + eol);
  signed.set(original);
  signed.set(update, original.length);
  if (eol === 1) signed[signed.length - 1] = 0x0a;
  if (signed.length > MAX_SIGNED_LENGTH) throw new SignPdfError("not-updatable", "this PDF is too large to sign (10 GB or more)");
  patchSignedLength(signed, original.length);
  checkSigned(signed, original);
  return signed;
}

/** Overwrites the placeholder's digits in the update with the signed PDF's length. */
function patchSignedLength(signed: Uint8Array, from: number): void {
  const text = new TextDecoder("latin1").decode(signed.subarray(from));
  const key = `/DocverifySignedLength (${SIGNED_LENGTH_PLACEHOLDER})`;
  const at = text.indexOf(key);
  if (at === -1 || text.indexOf(key, at + 1) !== -1) throw new SignPdfError("not-updatable", "the update's length marker was not written once");
  const digits = String(signed.length).padStart(SIGNED_LENGTH_PLACEHOLDER.length, "0");
  const start = from + at + key.length - 1 - digits.length;
  for (let i = 0; i < digits.length; i++) signed[start + i] = digits.charCodeAt(i);
}

/** The promises made above, checked on the bytes about to be returned. */
function checkSigned(signed: Uint8Array, original: Uint8Array): void {
  for (let i = 0; i < original.length; i++) {
    if (signed[i] !== original[i]) throw new SignPdfError("not-updatable", "the PDF library changed the original bytes");
  }
  // The verifier also reads the original's last %%EOF, so that must lie in the tail too.
  if (signed.length - original.length + MAX_SPACE_AFTER_EOF + 5 > SIGNED_PDF_TAIL_BYTES) throw new SignPdfError("not-updatable", "the update is too large to be found from the end of the file");
  const update = new TextDecoder("latin1").decode(signed.subarray(original.length));
  const marker = `/DocverifyOriginalLength (${original.length})`;
  if (update.indexOf(marker) === -1 || update.indexOf(marker) !== update.lastIndexOf(marker)) throw new SignPdfError("not-updatable", "the update's marker was not written once");
  if (!update.endsWith("%%EOF\n") || update.indexOf("%%EOF") !== update.length - 6) throw new SignPdfError("not-updatable", "the update does not end with its only %%EOF");
}
