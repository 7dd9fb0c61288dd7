/**
 * The verify page's only script (GET /verify/{recordId}), for the visitor's browser: bundled by
 * http/pages/bundle.ts when http/pages/verify.ts is compiled, inlined, and allowed by its SHA-256 in the page's
 * Content-Security-Policy. It hashes a file the visitor picks or drops, in the browser (the file
 * never leaves the machine), and says whether it is the document of the record shown.
 *
 * SHA-256 is noble's, streaming the file in chunks, rather than `crypto.subtle`: SubtleCrypto
 * exists only in secure contexts (HTTPS or localhost), and an appliance on a private network is
 * often reached over plain HTTP; it would also need the whole file in memory.
 *
 * A docverify-signed PDF (docs/signing.md, "The signed PDF") is recognised from the file's last
 * 64 KiB by the verifier's own rule (verifier/signed-pdf.ts), and only the original inside it,
 * the bytes before docverify's update, is hashed; when it matches, that original is offered to
 * save (a blob: link, nothing leaves the machine).
 *
 * The page's markup (http/pages/verify.ts) gives `#check` with `data-hash`, `data-record` and `data-status`,
 * `#file`, `#drop`, `#result`, `#original` and `#original-link`.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { originalOfSignedPdfTail, SIGNED_PDF_TAIL_BYTES } from "../verifier/signed-pdf.ts";
import { hex } from "./document.ts";
import { pageWindow, type DomElement, type DomFileList, type DomInput } from "./dom.ts";

type Kind = "match" | "match revoked" | "match waiting" | "busy" | "mismatch";

function wire(section: DomElement, input: DomInput, drop: DomElement, result: DomElement, original: DomElement, originalLink: DomElement): void {
  const expected = section.getAttribute("data-hash");
  const recordId = section.getAttribute("data-record");
  const status = section.getAttribute("data-status");
  const revoked = status === "revoked";
  const waiting = status === "waiting";
  section.hidden = false;

  const say = (text: string, kind: Kind) => {
    result.textContent = text;
    result.className = kind;
  };

  // The original cut out of a signed PDF that matched, offered to save: what was signed, no stamp.
  let originalUrl: string | null = null;
  const offerOriginal = (blob: Blob | null) => {
    const { URL } = pageWindow();
    if (originalUrl !== null) URL.revokeObjectURL(originalUrl);
    originalUrl = blob === null ? null : URL.createObjectURL(blob);
    if (originalUrl === null) originalLink.removeAttribute("href");
    else originalLink.setAttribute("href", originalUrl);
    original.hidden = originalUrl === null;
  };

  const hashOf = async (blob: Blob): Promise<string> => {
    const hasher = sha256.create();
    const reader = blob.stream().getReader();
    for (;;) {
      const r = await reader.read();
      if (r.done) return `sha256:${hex(hasher.digest())}`;
      hasher.update(r.value);
    }
  };

  // Three sentences for a match: active, revoked, awaiting the ledger.
  const matched = (active: string, revokedText: string, waitingText: string) => {
    if (revoked) say(`${revokedText}, but the record has been revoked (see its status above).`, "match revoked");
    else if (waiting) say(`${waitingText}, but the record is not final yet: it awaits the ledger (see its status above).`, "match waiting");
    else say(active, "match");
  };

  const check = async (file: File): Promise<void> => {
    offerOriginal(null);
    say("Computing the SHA-256 of the file on this computer…", "busy");
    // A docverify-signed PDF carries its original's length in its last bytes: read those first.
    const tail = new Uint8Array(await file.slice(Math.max(0, file.size - SIGNED_PDF_TAIL_BYTES)).arrayBuffer());
    const pdf = originalOfSignedPdfTail(tail, file.size);
    const other = pdf.kind !== "not-signed" && pdf.recordId !== recordId ? ` It names another record, ${pdf.recordId}.` : "";
    if (pdf.kind === "changed-after-signing") {
      say(`No match: this PDF was signed with docverify, but changed after signing (something was added to it afterwards), so it is no longer the signed document.${other}`, "mismatch");
      return;
    }
    if (pdf.kind === "signed") {
      const inside = file.slice(0, pdf.originalLength, "application/pdf");
      const actual = await hashOf(inside);
      if (actual === expected) offerOriginal(inside);
      if (actual === expected && pdf.recordId === recordId) {
        const ours = "Match: this is the signed PDF of this record, and its original document matches";
        matched("Match: this is the signed PDF of this record: its original document matches. The stamp and metadata were added when it was signed and are not part of what was signed.", ours, ours);
      } else if (actual === expected) {
        const theirs = `Match: this PDF was signed with docverify under another record (${pdf.recordId}); its original document is the document`;
        matched(`${theirs} this record authenticates.`, `${theirs} of this record`, `${theirs} of this record`);
      } else {
        say(`No match: this is a PDF signed with docverify, but its original document is not the document of this record.${other} The original's hash is ${actual}.`, "mismatch");
      }
      return;
    }
    const actual = await hashOf(file);
    if (actual === expected) matched("Match: this file is the document this record authenticates.", "Match: this file is the document of this record", "Match: this file is the document of this record");
    else say(`No match: this file is not the document of this record. Its hash is ${actual}.`, "mismatch");
  };

  const checkFirst = (files: DomFileList | null | undefined) => {
    const file = files?.item(0);
    if (file === null || file === undefined) return;
    check(file).catch(() => say("The file could not be read.", "mismatch"));
  };
  input.addEventListener("change", () => checkFirst(input.files));
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    checkFirst(e.dataTransfer?.files);
  });
  // A file dropped beside the zone must not make the browser navigate away to it.
  const { document } = pageWindow();
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", (e) => e.preventDefault());
}

// The check box exists only on the page of a record that has a document hash to compare.
const { document } = pageWindow();
const [section, input, drop, result, original, originalLink] = ["check", "file", "drop", "result", "original", "original-link"].map((id) => document.getElementById(id));
if (section && input && drop && result && original && originalLink) wire(section, input as DomInput, drop, result, original, originalLink);
