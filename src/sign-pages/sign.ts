/**
 * The signing page's script (GET /sign, src/http/pages/person-pages.ts; docs/persons.md "The pages"):
 * - sign in with the passkey: POST /app/session/options → startAuthentication → POST /app/session;
 * - choose a PDF (file input or drop): refused here unless it is a PDF; read and hashed on this
 *   computer (the document never leaves it), and a trial stamp made so that a PDF that cannot
 *   take one is refused before anything is signed;
 * - sign: POST /app/signatures/options with the hash; check that the challenge commits to a
 *   record payload naming this document; the passkey confirms (startAuthentication); POST
 *   /app/signatures records it; signPdf writes the signed copy, offered as a download;
 * - the person's records with their state in words, each revocable (records.ts); sign out
 *   (DELETE /app/session).
 * Every step is said in the status region; everything shown that came from the service or the
 * file is set as text, never parsed as HTML.
 *
 * Bundled by scripts/build-app-pages.ts into src/http/pages/app-sign.js.
 */
import { browserSupportsWebAuthn, startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { signPdf } from "../pdf/stamp.ts";
import { ApiError, call, organisationName, type AppPerson, type AppRecord } from "./api.ts";
import { checkIntent, hex, looksLikePdf, readAndHash } from "./document.ts";
import { byId, pageWindow, type DomControl, type DomEvent, type DomInput, type DomLink } from "./dom.ts";
import { recordsList } from "./records.ts";
import { insecureContextMessage, markBusy, say } from "./status.ts";
import { explain, readableSize, signedName, type Step } from "./words.ts";

const win = pageWindow();
const status = byId("status");
const signedOut = byId("signed-out");
const signedOutTitle = byId("signed-out-title");
const signInButton = byId<DomControl>("sign-in");
const signedIn = byId("signed-in");
const signedInTitle = byId("signed-in-title");
const who = byId("who");
const org = byId("org");
const signOutButton = byId<DomControl>("sign-out");
const drop = byId("drop");
const fileInput = byId<DomInput>("file");
const chosenText = byId("chosen");
const signButton = byId<DomControl>("sign");
const done = byId("done");
const doneTitle = byId("done-title");
const download = byId<DomLink>("download");
const verifyLink = byId<DomLink>("verify-link");

/** What the page knows: the person signed in, and the document chosen and checked. */
const state: {
  person: AppPerson | null;
  chosen: { name: string; bytes: Uint8Array; digest: Uint8Array } | null;
  busy: boolean;
  signingIn: boolean;
  downloadUrl: string | null;
} = { person: null, chosen: null, busy: false, signingIn: false, downloadUrl: null };

/** A stamp with a record's shape, to check that a PDF can take one before anything is signed. */
const TRIAL_RECORD = "00000000-0000-7000-8000-000000000000";

function setBusy(busy: boolean): void {
  state.busy = busy;
  markBusy(busy, signButton, fileInput, signOutButton);
}

/** A failure at `step`; a lost session takes the person back to signing in. */
function fail(e: unknown, step: Step): void {
  if (e instanceof ApiError && e.code === "UNAUTHENTICATED" && step !== "sign-in" && step !== "sign") {
    showSignedOut();
  }
  say(status, explain(e, step), "error");
}

const records = recordsList({ status, fail, isBusy: () => state.busy, setBusy, isSignedIn: () => state.person !== null });

function showSignedOut(): void {
  state.person = null;
  signedIn.hidden = true;
  signedOut.hidden = false;
  records.stop();
}

function showSignedIn(person: AppPerson): void {
  state.person = person;
  who.textContent = person.name;
  org.textContent = organisationName(person);
  signedOut.hidden = true;
  signedIn.hidden = false;
  void records.load();
}

async function signIn(): Promise<void> {
  if (state.signingIn) return;
  state.signingIn = true;
  markBusy(true, signInButton);
  try {
    say(status, "Preparing to sign in…");
    const optionsJSON = await call<PublicKeyCredentialRequestOptionsJSON>("POST", "/app/session/options", {});
    say(status, "Your browser now asks for your passkey. Follow its steps: you may be asked for your fingerprint, your face, your device's PIN, or to touch a security key.");
    const assertion = await startAuthentication({ optionsJSON });
    say(status, "Checking your passkey with the service…");
    const { person } = await call<{ person: AppPerson }>("POST", "/app/session", assertion);
    showSignedIn(person);
    say(status, `You are signed in as ${person.name}. Choose a PDF document to sign.`, "ok");
    signedInTitle.focus();
  } catch (e) {
    fail(e, "sign-in");
  } finally {
    state.signingIn = false;
    markBusy(false, signInButton);
  }
}

async function signOut(): Promise<void> {
  if (state.busy) return;
  try {
    await call<void>("DELETE", "/app/session");
  } catch (e) {
    if (!(e instanceof ApiError && e.code === "UNAUTHENTICATED")) return fail(e, "sign-out");
  }
  forgetDocument();
  clearDownload();
  showSignedOut();
  say(status, "You are signed out.", "ok");
  signedOutTitle.focus();
}


function forgetDocument(): void {
  state.chosen = null;
  fileInput.value = "";
  chosenText.textContent = "No document chosen yet.";
}

function clearDownload(): void {
  if (state.downloadUrl !== null) win.URL.revokeObjectURL(state.downloadUrl);
  state.downloadUrl = null;
  done.hidden = true;
}

async function choose(file: File | null): Promise<void> {
  if (file === null || state.busy || state.person === null) return;
  forgetDocument();
  clearDownload();
  if (file.size === 0) return say(status, `“${file.name}” is empty. Choose the PDF document you want to sign. Nothing was sent.`, "error");
  const head = new Uint8Array(await file.slice(0, 1029).arrayBuffer());
  if (!looksLikePdf(head)) {
    return say(status, `“${file.name}” is not a PDF document. Only PDF files can be signed here: save or export the document as a PDF, then choose that file. Nothing was sent.`, "error");
  }
  setBusy(true);
  try {
    say(status, `Reading “${file.name}” on this computer…`);
    const { bytes, digest } = await readAndHash(file, (at, total) => {
      if (total > 8_000_000) say(status, `Reading “${file.name}” on this computer: ${Math.floor((100 * at) / total)}%…`);
    });
    say(status, `Checking that a signature stamp can be added to “${file.name}”…`);
    await signPdf(bytes, {
      recordId: TRIAL_RECORD,
      verifyUrl: `${win.location.origin}/verify/${TRIAL_RECORD}`,
      signerName: state.person.name,
      organisation: organisationName(state.person),
      signedAt: new Date().toISOString(),
    });
    state.chosen = { name: file.name, bytes, digest };
    chosenText.textContent = `Chosen: “${file.name}” (${readableSize(file.size)}).`;
    say(status, `“${file.name}” is ready to sign. Press “Sign this document” when you are ready.`, "ok");
  } catch (e) {
    forgetDocument();
    say(status, pdfProblem(file.name, e), "error");
  } finally {
    setBusy(false);
  }
}

function pdfProblem(name: string, e: unknown): string {
  const reason = e instanceof Error && e.name === "SignPdfError" ? e.message : e instanceof Error ? `it could not be read (${e.message})` : "it could not be read";
  return `“${name}” cannot be signed here: ${reason}. Nothing was sent.`;
}


async function sign(): Promise<void> {
  const person = state.person;
  const chosen = state.chosen;
  if (person === null || state.busy) return;
  if (chosen === null) {
    say(status, "Choose a PDF document first: use “Choose a PDF document”, or drop the file in the box.", "error");
    fileInput.focus();
    return;
  }
  setBusy(true);
  clearDownload();
  let recorded: (AppRecord & { signerName?: string }) | null = null;
  // Until the passkey is asked, a 401 means the session ended; after, that its answer was refused.
  let step: Step = "session";
  try {
    say(status, `Preparing the signature for “${chosen.name}”…`);
    const hash = hex(chosen.digest);
    const options = await call<PublicKeyCredentialRequestOptionsJSON & { docverify?: unknown }>("POST", "/app/signatures/options", {
      originalDocHash: `sha256:${hash}`,
      filename: chosen.name,
    });
    const intent = checkIntent(options, chosen.digest);
    say(status, `Confirm with your passkey that you sign “${chosen.name}”. Your browser now asks for it: fingerprint, face, PIN or security key.`);
    const { docverify: _intent, ...optionsJSON } = options;
    step = "sign";
    const assertion = await startAuthentication({ optionsJSON });
    say(status, "Recording your signature…");
    recorded = await call<AppRecord & { signerName?: string }>("POST", "/app/signatures", assertion);
    // 200 with an earlier record of the same document is fine; another document is not.
    if (recorded.originalDocHash !== intent.originalDocHash) throw new Error("the service recorded another document");
    say(status, "Adding the signature stamp to your PDF…");
    const signed = await signPdf(chosen.bytes, {
      recordId: recorded.recordId,
      verifyUrl: recorded.verifyUrl,
      signerName: recorded.signerName ?? person.name,
      organisation: organisationName(person),
      signedAt: recorded.authenticatedAt,
    });
    const name = signedName(chosen.name);
    state.downloadUrl = win.URL.createObjectURL(new Blob([signed], { type: "application/pdf" }));
    download.href = state.downloadUrl;
    download.download = name;
    download.textContent = `Download “${name}”`;
    verifyLink.href = recorded.verifyUrl;
    done.hidden = false;
    say(
      status,
      `Signed. Your signed copy “${name}” is ready: download it below and send that file, not the original. ` +
        (recorded.anchorState === "anchored" ? "The ledger has confirmed the signature." : "The ledger confirms the signature within seconds; your list below shows when."),
      "ok",
    );
    forgetDocument();
    doneTitle.focus();
    void records.load(true);
  } catch (e) {
    if (recorded !== null) {
      say(status, `Your signature was recorded, but the signed PDF could not be written: ${e instanceof Error ? e.message : String(e)}. You can revoke this signature in your list below once the ledger has confirmed it.`, "error");
      void records.load(true);
    } else {
      fail(e, step);
      // Refused for the passkey's answer, or because the session ended meanwhile? Only the latter signs out.
      if (step === "sign" && e instanceof ApiError && e.code === "UNAUTHENTICATED") void call("GET", "/app/session").catch(() => showSignedOut());
    }
  } finally {
    setBusy(false);
  }
}


signInButton.addEventListener("click", () => void signIn());
signOutButton.addEventListener("click", () => void signOut());
signButton.addEventListener("click", () => void sign());
fileInput.addEventListener("change", () => void choose(fileInput.files?.item(0) ?? null));
// While a step runs the chooser stays shut (the input keeps focus: it is not disabled).
fileInput.addEventListener("click", (e) => {
  if (state.busy) e.preventDefault();
});
drop.addEventListener("dragover", (e: DomEvent) => {
  e.preventDefault();
  if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
  drop.classList.add("over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e: DomEvent) => {
  e.preventDefault();
  drop.classList.remove("over");
  void choose(e.dataTransfer?.files.item(0) ?? null);
});
// A file dropped beside the box must not replace the page (the browser would open the PDF).
win.document.addEventListener("dragover", (e) => e.preventDefault());
win.document.addEventListener("drop", (e) => e.preventDefault());

async function start(): Promise<void> {
  forgetDocument();
  const blocked = !win.isSecureContext ? insecureContextMessage() : !browserSupportsWebAuthn() ? "This browser cannot use passkeys. Open this page in an up-to-date Chrome, Edge, Firefox or Safari." : null;
  try {
    const { person } = await call<{ person: AppPerson }>("GET", "/app/session");
    showSignedIn(person);
    say(status, `You are signed in as ${person.name}.`);
  } catch (e) {
    showSignedOut();
    if (!(e instanceof ApiError && e.code === "UNAUTHENTICATED")) say(status, explain(e, "session"), "error");
  }
  if (blocked !== null) {
    signInButton.disabled = true;
    signButton.disabled = true;
    say(status, blocked, "error");
  }
}

void start();
