/**
 * The enrolment page's script (GET /enrol/{token}, src/http/pages/person-pages.ts): one button
 * creates the person's passkey: POST /app/enrol/{token}/options → the browser's passkey prompt
 * (@simplewebauthn/browser startRegistration) → POST /app/enrol/{token}. The person is then signed
 * in, and the page links to the signing page. Each step is said in the status region.
 *
 * Bundled by scripts/build-app-pages.ts into src/http/pages/app-enrol.js.
 */
import { browserSupportsWebAuthn, startRegistration, type PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/browser";
import { call, type AppPerson } from "./api.ts";
import { byId, pageWindow, type DomControl, type DomLink } from "./dom.ts";
import { insecureContextMessage, markBusy, say } from "./status.ts";
import { explain } from "./words.ts";

const win = pageWindow();
const button = byId<DomControl>("enrol");
const status = byId("status");
const done = byId("done");
const doneTitle = byId("done-title");
const signLink = byId<DomLink>("sign-link");

/** The token is the last segment of this page's address; it is never shown or stored. */
const token = decodeURIComponent(win.location.pathname.split("/").pop() ?? "");
const base = `/app/enrol/${encodeURIComponent(token)}`;

interface Enrolled {
  readonly person: AppPerson;
  readonly signUrl?: string;
}

let busy = false;

async function enrol(): Promise<void> {
  if (busy) return;
  busy = true;
  markBusy(true, button);
  try {
    say(status, "Preparing your passkey…");
    const optionsJSON = await call<PublicKeyCredentialCreationOptionsJSON>("POST", `${base}/options`, {});
    say(status, "Your browser now asks you to create a passkey. Follow its steps: you may be asked for your fingerprint, your face, your device's PIN, or to touch a security key.");
    const registration = await startRegistration({ optionsJSON });
    say(status, "Saving your passkey with the service…");
    const enrolled = await call<Enrolled>("POST", base, registration);
    if (enrolled.signUrl !== undefined) signLink.href = new URL(enrolled.signUrl, win.location.origin).pathname;
    button.hidden = true;
    done.hidden = false;
    say(status, "Your passkey is ready and you are enrolled. You can now sign documents.", "ok");
    doneTitle.focus();
  } catch (e) {
    say(status, explain(e, "enrol"), "error");
  } finally {
    busy = false;
    markBusy(false, button);
  }
}

const blocked = !win.isSecureContext ? insecureContextMessage() : !browserSupportsWebAuthn() ? "This browser cannot use passkeys. Open this page in an up-to-date Chrome, Edge, Firefox or Safari." : null;
if (blocked !== null) {
  // Nothing on this page can work: the button is off, and the status says why.
  button.disabled = true;
  say(status, blocked, "error");
} else {
  button.addEventListener("click", () => void enrol());
}
