/**
 * The receipt page's script (docs/receipts.md §4.4): the third shell of the verifier.
 * It reads the receipt and the document from files the visitor picks or drops, hashes the
 * document here (it is never sent anywhere; of a docverify-signed PDF, the original inside it:
 * signed-pdf.ts), asks the mirror nodes in the form (starting from the built-in ones for the
 * receipt's network, never the receipt's own), confirms the organisation's identity from a trust
 * file or its domain's well-known document, and shows the verdict and every check. Everything it
 * shows that came from outside (names from the ledger, details, file names) is set with
 * `textContent`, never parsed as HTML, and ledger text has its control and direction-changing
 * characters written out (render.ts's safeText).
 *
 * Bundled with the verifier core by src/http/pages/bundle.ts into one HTML file whose
 * Content-Security-Policy allows this script by its hash and network requests only to http(s).
 */
import { normaliseMirrorUrl, parseReceipt, parseTrustFile, sha256OfStream, verifyReceipt, type Receipt, type Report, type TrustFile } from "../index.ts";
import { webFetch } from "../mirror.ts";
import { humanTime } from "../human-time.ts";
import { machineTime, safeText, timesIn } from "../render.ts";
import { originalOfSignedPdfTail, SIGNED_PDF_TAIL_BYTES } from "../signed-pdf.ts";
import { pageDocument, type DomElement, type DomEvent, type DomInput } from "./dom.ts";
import { byteSize, documentLine, identityText, minimumMirrors, mirrorLines, reportText, scanPages, startingMirrors, STATUS_WORD } from "./view.ts";

const doc = pageDocument();
function byId<T extends DomElement = DomElement>(id: string): T {
  const el = doc.getElementById(id);
  if (el === null) throw new Error(`the page lacks #${id}`);
  return el as T;
}

const form = byId("form");
const receiptInput = byId<DomInput>("receipt");
const documentInput = byId<DomInput>("document");
const receiptInfo = byId("receipt-info");
const documentInfo = byId("document-info");
const mirrorsField = byId<DomInput>("mirrors");
const suggested = byId("suggested");
const useSuggested = byId<DomInput>("use-suggested");
const trustInput = byId<DomInput>("trust");
const trustInfo = byId("trust-info");
const ledgerNotice = byId("ledger-notice");
const minField = byId<DomInput>("min-mirrors");
const scanField = byId<DomInput>("max-scan-pages");
const button = byId<DomInput>("verify");
const progress = byId("progress");
const verdictEl = byId("verdict");
const verdictDetail = byId("verdict-detail");
const verdictMachine = byId("verdict-machine");
const organisation = byId("organisation");
const signed = byId("signed");
const revocation = byId("revocation");
const checksTable = byId("checks");
const checkRows = byId("check-rows");
const mirrorsUsed = byId("mirrors-used");

let receiptFile: File | null = null;
let documentFile: File | null = null;
let receipt: Receipt | null = null;
let receiptError: string | null = null;
let trust: TrustFile | null = null;
let trustError: string | null = null;

function say(el: DomElement, text: string, className = ""): void {
  el.textContent = text;
  el.className = className;
}

function clearOutcome(): void {
  say(progress, "");
  say(verdictEl, "");
  verdictEl.setAttribute("data-verdict", "");
  say(verdictDetail, "");
  say(verdictMachine, "", "hint");
  say(organisation, "");
  say(ledgerNotice, "");
  say(signed, "");
  say(revocation, "");
  checkRows.replaceChildren();
  checksTable.hidden = true;
  say(mirrorsUsed, "");
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function loadReceipt(file: File): Promise<void> {
  receiptFile = file;
  receipt = null;
  receiptError = null;
  clearOutcome();
  let parsed: Receipt;
  try {
    parsed = parseReceipt(await file.text());
  } catch (e) {
    if (receiptFile !== file) return; // another receipt was chosen meanwhile
    receiptError = `${file.name} is not a usable receipt: ${errorMessage(e)}`;
    say(receiptInfo, receiptError, "info error");
    return;
  }
  if (receiptFile !== file) return;
  receipt = parsed;
  say(receiptInfo, `${file.name}: record ${parsed.recordId}, ${parsed.originalDocHash}, on the ${parsed.anchor.network} ledger.`, "info");
  // The field starts from this page's own list for the receipt's network; the receipt's
  // suggestions are shown, and asked only if the visitor adds them.
  mirrorsField.value = startingMirrors(parsed.anchor.network);
  const local = parsed.anchor.network === "local";
  if (parsed.mirrorNodes.length > 0) {
    say(suggested, `The receipt suggests: ${parsed.mirrorNodes.join(", ")}. A receipt does not choose its own witnesses: they are asked only if you add them.${local ? " A local-ledger receipt has no built-in mirror nodes: name the local ledger's (it proves nothing publicly)." : ""}`, "hint");
    useSuggested.hidden = false;
  } else {
    say(suggested, local ? "A local-ledger receipt has no built-in mirror nodes: name the local ledger's (it proves nothing publicly)." : "", "hint");
    useSuggested.hidden = true;
  }
}

async function loadTrust(file: File): Promise<void> {
  trust = null;
  trustError = null;
  clearOutcome();
  try {
    trust = parseTrustFile(await file.text());
    say(trustInfo, `${file.name}: ${trust.organisations.length} organisation${trust.organisations.length === 1 ? "" : "s"} pinned; mirror nodes for ${Object.keys(trust.networks).join(", ") || "no network"}.`, "info");
  } catch (e) {
    trustError = `${file.name} is not a usable trust file: ${errorMessage(e)}`;
    say(trustInfo, trustError, "info error");
  }
}

function loadDocument(file: File): void {
  documentFile = file;
  clearOutcome();
  say(documentInfo, `${file.name} (${byteSize(file.size)}): hashed in this browser when you verify; never uploaded.`, "info");
}

function firstFile(files: { length: number; item(i: number): File | null } | null | undefined): File | null {
  return files !== null && files !== undefined && files.length > 0 ? files.item(0) : null;
}

/** A drop zone around each file input: dropping a file is the same as choosing it. */
function dropZone(zoneId: string, take: (file: File) => unknown): void {
  const zone = byId(zoneId);
  const over = (e: DomEvent) => {
    e.preventDefault();
    zone.classList.add("over");
  };
  zone.addEventListener("dragenter", over);
  zone.addEventListener("dragover", over);
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    const file = firstFile(e.dataTransfer?.files);
    if (file !== null) void take(file);
  });
}

receiptInput.addEventListener("change", () => {
  const file = firstFile(receiptInput.files);
  if (file !== null) void loadReceipt(file);
});
documentInput.addEventListener("change", () => {
  const file = firstFile(documentInput.files);
  if (file !== null) loadDocument(file);
});
trustInput.addEventListener("change", () => {
  const file = firstFile(trustInput.files);
  if (file !== null) void loadTrust(file);
  else {
    trust = null;
    trustError = null;
    say(trustInfo, "");
  }
});
useSuggested.addEventListener("click", () => {
  if (receipt === null) return;
  const have = mirrorLines(mirrorsField.value);
  mirrorsField.value = [...have, ...receipt.mirrorNodes.filter((m) => !have.includes(m))].join("\n");
});
dropZone("receipt-drop", loadReceipt);
dropZone("trust-drop", loadTrust);
dropZone("document-drop", loadDocument);

function fail(text: string): void {
  say(progress, text, "error");
}

function showReport(report: Report, receipt: Receipt): void {
  say(progress, "");
  const v = reportText(report);
  say(verdictEl, v.headline, v.tone);
  verdictEl.setAttribute("data-verdict", report.verdict);
  verdictEl.setAttribute("data-identity", report.identity?.status ?? "");
  say(verdictDetail, v.explanation);
  // The verifier's own name for the verdict, for whoever compares with the command line's --json: detail, not the headline.
  verdictMachine.replaceChildren("Verdict code, as the command line's --json names it: ", element("code", report.verdict, "verdict-code"));
  if (!report.public) say(ledgerNotice, "Local development ledger: this proves nothing publicly. Anyone can run one and write anything on it.", "warn");
  // Names are text from the ledger or a trust root: textContent only, never markup.
  const who = identityText(report);
  organisation.replaceChildren(who.label, ...(who.name === null ? [] : [strong(who.name)]), doc.createElement("br"), who.note);
  organisation.className = who.tone;
  if (report.person !== null) organisation.append(doc.createElement("br"), "Signed by person ", strong(report.person.personId), " of that organisation.");
  // The signed time is only worth showing once the signatures over it have been checked.
  if (SIGNED_VERDICTS.has(report.verdict)) signed.replaceChildren("Authenticated at ", time(receipt.authenticatedAt), ` (the signed time), record ${report.recordId}.`);
  if (report.revocation !== null) {
    // What the revocation message on the ledger says: its text is made safe to show.
    const r = report.revocation;
    // A batch that lists the record, the receipt unable to prove its leaf: revoked, the reason not on the ledger.
    if (r.reason === null) revocation.replaceChildren("Revoked by ", `ledger message ${r.sequenceNumber}, consensus at `, time(r.consensusAt), "; the reason is not on the ledger.");
    else revocation.replaceChildren("Revoked on ", time(safeText(r.revokedAt)), ", reason ", element("code", safeText(r.reason)), `: ledger message ${r.sequenceNumber}, consensus at `, time(r.consensusAt), ".");
  }
  // Roles said outright: on a narrow screen the table is laid out as stacked rows (style.css), and
  // a table whose cells are no longer laid out as cells can lose its table semantics.
  const rows = report.checks.map((c) => {
    const tr = doc.createElement("tr");
    tr.setAttribute("role", "row");
    const status = element("td", STATUS_WORD[c.status] ?? c.status, undefined, c.status);
    const name = element("td");
    name.append(element("code", c.name));
    const detail = element("td");
    // Times in a detail (a consensus time) are shown for people, the exact value kept in the <time>.
    detail.append(...timesIn(safeText(c.detail)).map((part) => ("time" in part ? time(part.time) : part.text)));
    for (const cell of [status, name, detail]) cell.setAttribute("role", "cell");
    tr.setAttribute("data-check", c.name);
    tr.append(status, name, detail);
    return tr;
  });
  checkRows.replaceChildren(...rows);
  checksTable.hidden = false;
  say(
    mirrorsUsed,
    report.mirrors.length === 0
      ? "No mirror node was asked."
      : `Mirror nodes asked: ${report.mirrors.join(", ")}, on ${report.witnesses} distinct host${report.witnesses === 1 ? "" : "s"} (minimum ${report.minMirrors}${report.minMirrors < 2 ? ", a weakened check" : ""}; this page compares host names, as a browser cannot resolve them).`,
    "hint",
  );
}

const SIGNED_VERDICTS: ReadonlySet<string> = new Set(["verified", "verified_org", "revoked"]);

function strong(text: string): DomElement {
  return element("strong", text);
}

function element(tag: string, text?: string, id?: string, className?: string): DomElement {
  const el = doc.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (id !== undefined) el.setAttribute("id", id);
  if (className !== undefined) el.className = className;
  return el;
}

/**
 * A time as every page writes it for people (`15 January 2026, 09:30:00 UTC`), the exact value
 * (RFC 3339, or the ledger's `seconds.nanoseconds`) in its title, the instant in its datetime.
 */
function time(value: string): DomElement {
  const el = element("time", humanTime(value));
  el.setAttribute("datetime", machineTime(value));
  el.setAttribute("title", value);
  return el;
}

async function verify(): Promise<void> {
  clearOutcome();
  if (receiptFile === null) return fail("Choose the receipt file first.");
  if (receiptError !== null || receipt === null) return fail(receiptError ?? "The receipt is still being read; try again.");
  if (documentFile === null) return fail("Choose the document the receipt is for.");
  if (trustError !== null) return fail(trustError);
  // What is checked is what was chosen when Verify was pressed, whatever is chosen meanwhile.
  const current = receipt;
  const file = documentFile;
  const minMirrors = minimumMirrors(minField.value);
  if (minMirrors === null) return fail("The minimum number of mirror nodes must be a whole number, 1 or more.");
  const maxScanPages = scanPages(scanField.value);
  if (maxScanPages === null) return fail("The topic scan limit must be a whole number, 1 or more.");
  const mirrors = mirrorLines(mirrorsField.value);
  const bad = mirrors.find((m) => normaliseMirrorUrl(m) === null);
  if (bad !== undefined) return fail(`Not a mirror node URL (http:// or https://, no query): ${bad}`);
  button.disabled = true;
  try {
    say(progress, `Hashing ${file.name} in this browser…`);
    // A docverify-signed PDF names its original's length in its last bytes: read those first.
    const tail = new Uint8Array(await file.slice(Math.max(0, file.size - SIGNED_PDF_TAIL_BYTES)).arrayBuffer());
    const pdf = originalOfSignedPdfTail(tail, file.size);
    // Chunk by chunk: a large document is never held whole.
    const docHash = await sha256OfStream((pdf.kind === "signed" ? file.slice(0, pdf.originalLength) : file).stream());
    say(documentInfo, documentLine(file.name, file.size, pdf, docHash), "info");
    say(progress, "Asking the mirror nodes…");
    const report = await verifyReceipt(current, {
      docHash,
      mirrors,
      // The field is the whole list: it started from the built-in one, and the visitor edits it.
      builtinMirrors: false,
      howToAddMirror: "in the mirror node field",
      howToRaiseScan: "in the topic scan limit field",
      maxScanPages,
      trust,
      minMirrors,
      offline: false,
      fetch: webFetch,
      onProgress: (line) => say(progress, line),
    });
    showReport(report, current);
    verdictEl.focus();
  } catch (e) {
    fail(`The check could not run: ${errorMessage(e)}`);
  } finally {
    button.disabled = false;
  }
}

// A file dropped beside the zones would make the browser leave the page to show it.
for (const type of ["dragover", "drop"]) doc.addEventListener(type, (e) => e.preventDefault());

form.addEventListener("submit", (e) => {
  e.preventDefault();
  void verify();
});
