/**
 * The two pages people use (docs/persons.md "The pages"):
 * - GET /enrol/{token}: what enrolment means, whose it is (the name and organisation, escaped),
 *   that the name is shown to anyone verifying what the person signs, and one button that
 *   creates the passkey. A refused link gets a page saying why in plain words: 404 unknown,
 *   410 expired (or replaced) or already used, 403 suspended.
 * - GET /sign: sign in with the passkey, sign a PDF in the browser, list and revoke one's own
 *   records.
 * - GET /app/assets/enrol.js and /app/assets/sign.js: the pages' scripts, generated from
 *   src/sign-pages/ by scripts/build-app-pages.ts and embedded as text, so the executable serves
 *   them from any folder.
 *
 * The pages call only the /app JSON endpoints of their own origin. Their policy: scripts from
 * this origin only (no inline script), the one inline style by hash, requests to this origin only,
 * nothing else. The enrolment address holds a secret token, so no page ever sends a referrer,
 * and none is cached or indexed.
 */
import { Elysia } from "elysia";
import type { EnrolmentRefusal } from "../../persons/persons.ts";
import { DomainError } from "../../lib/errors.ts";
import { cspHash, escapeHtml as e, PAGE_SECURITY_HEADERS, pageHeadStart } from "./html.ts";


export interface AppPagesDeps {
  readonly persons: {
    /**
     * Who an enrolment token is for, without using it up. Throws EnrolmentTokenError
     * (persons/persons.ts: a DomainError with `reason`) for a token that cannot be used.
     */
    peekEnrolment(token: string): Promise<{ person: { id: string; name: string; email: string }; organisation: { name: string } }>;
  };
  /** The service's public URL (DOCVERIFY_PUBLIC_URL), without a trailing slash. */
  readonly publicUrl: () => string;
}

export const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #8c959f; --ok: #1a7f37; --bad: #cf222e; --accent: #0550ae; --accent-fg: #fff; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #6e7681; --ok: #3fb950; --bad: #ff7b72; --accent: #4493f8; --accent-fg: #0d1117; } }
* { box-sizing: border-box; }
body { margin: 0; font: 17px/1.55 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 46rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .25rem; }
h1, h2, h3, p, li, label { overflow-wrap: break-word; }
.lead { color: var(--muted); margin: 0 0 1.25rem; }
.important { border-left: 4px solid var(--accent); padding: .25rem .75rem; }
a { color: var(--accent); }
button { font: inherit; padding: .55rem 1.1rem; border-radius: .4rem; border: 2px solid var(--accent); background: var(--accent); color: var(--accent-fg); cursor: pointer; }
button.secondary { background: transparent; color: var(--fg); border-color: var(--line); padding: .3rem .7rem; }
button:disabled { opacity: .6; cursor: not-allowed; }
[aria-disabled="true"] { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid var(--fg); outline-offset: 3px; }
[tabindex="-1"]:focus { outline: none; }
.drop { border: 2px dashed var(--line); border-radius: .5rem; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.drop.over, .drop:focus-within { border-color: var(--fg); }
.drop label { font-weight: 600; display: block; margin-bottom: .4rem; }
.drop p { margin: .5rem 0 0; color: var(--muted); }
input[type=file], select { font: inherit; max-width: 100%; }
#status { min-height: 1.5em; font-weight: 600; overflow-wrap: anywhere; }
#status.ok { color: var(--ok); }
#status.error { color: var(--bad); }
.done { border: 2px solid var(--ok); border-radius: .5rem; padding: .25rem 1rem .75rem; margin: 1rem 0; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { text-align: left; vertical-align: top; padding: .45rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
#records th:nth-child(1) { width: 32%; }
#records th:nth-child(2) { width: 23%; }
#records th:nth-child(3) { width: 27%; }
#records th:nth-child(4) { width: 18%; }
@media (max-width: 40rem) {
  #records:not([hidden]), #records tbody, #records tr, #records td { display: block; }
  #records thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  #records tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  #records td { border: 0; padding: .1rem 0; }
  #records td:first-child { font-weight: 600; }
  #records td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
}
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
dialog { color: var(--fg); background: var(--bg); border: 2px solid var(--line); border-radius: .5rem; max-width: min(34rem, calc(100% - 2rem)); }
dialog select { width: 100%; }
dialog::backdrop { background: rgb(0 0 0 / .45); }
dialog label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.25rem; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .9rem; }
`.trim();

/** The pages' policy: this origin's scripts and requests, the inline style by hash, nothing else. */
export function appPagePolicy(withScript: boolean): string {
  return [
    "default-src 'none'",
    `script-src ${withScript ? "'self'" : "'none'"}`,
    `style-src ${cspHash(STYLE)}`,
    `connect-src ${withScript ? "'self'" : "'none'"}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const HEADERS = { ...PAGE_SECURITY_HEADERS, "x-robots-tag": "noindex, nofollow" } as const;

function page(status: number, html: string, withScript: boolean): Response {
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": appPagePolicy(withScript),
      ...HEADERS,
      // Personal details and a session's state: never kept by a browser or a proxy.
      "cache-control": "no-store",
    },
  });
}

function script(text: string): Response {
  return new Response(text, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      ...HEADERS,
      // Embedded in this build: a new build must not be met by an old cached script.
      "cache-control": "no-cache",
    },
  });
}

function shell(title: string, body: string, scriptPath?: string): string {
  return `${pageHeadStart(title, STYLE, { robots: true })}
${scriptPath === undefined ? "" : `<script src="${e(scriptPath)}" defer></script>\n`}</head>
<body>
<main>
${body}
<footer>docverify · this page loads nothing from outside this service.</footer>
</main>
</body>
</html>
`;
}

const NO_SCRIPT = `<noscript><p class="important">This page needs JavaScript to use your passkey. Turn JavaScript on for this site, or use another browser.</p></noscript>`;

export function renderEnrolPage(who: { name: string; organisation: string }): string {
  const name = `<bdi>${e(who.name)}</bdi>`;
  const org = `<bdi>${e(who.organisation)}</bdi>`;
  return shell(
    "Enrol to sign documents · docverify",
    `<h1>Enrol to sign documents</h1>
<p class="lead">This enrolment is for <strong id="person-name">${name}</strong>, at <span id="organisation-name">${org}</span>.</p>
<h2>What enrolment means</h2>
<ul>
<li>You create a <strong>passkey</strong>: a digital key kept safely on this device (or on a security key). You unlock it with your fingerprint, your face, or your device's PIN. There is no password to remember.</li>
<li>With your passkey you can then sign PDF documents for ${org} on the signing page of this service.</li>
<li>Your documents never leave your computer: only a fingerprint of each document (its hash) is sent.</li>
</ul>
<p class="important" id="name-notice"><strong>Your name, ${name}, will be shown to anyone who verifies a document you sign</strong>, together with ${org} and the date and time you signed. Your name and email address are never put on the public ledger.</p>
<p>This link works once. If you are not ${name}, do not continue: tell the administrator who sent it.</p>
<h2>Create your passkey</h2>
<p>When you press the button, your browser asks you to create a passkey and to confirm that it is you.</p>
<p><button type="button" id="enrol">Create my passkey</button></p>
<p id="status" role="status" aria-live="polite"></p>
<section id="done" class="done" aria-labelledby="done-title" hidden>
<h2 id="done-title" tabindex="-1">You are enrolled</h2>
<p>Your passkey is ready. You are signed in, and can sign documents now.</p>
<p><a id="sign-link" href="/sign">Go to the signing page</a></p>
</section>
${NO_SCRIPT}`,
    "/app/assets/enrol.js",
  );
}

/** The refused links' pages: status, title and what the person should do, in plain words. */
const REFUSED: Readonly<Record<EnrolmentRefusal, { status: number; title: string; text: string }>> = {
  unknown: {
    status: 404,
    title: "This enrolment link is not valid",
    text: "This service does not know this link. It may have been cut short or changed when it was copied. Check that you opened the whole link; if it still does not work, ask the administrator who sent it for a new one.",
  },
  expired: {
    status: 410,
    title: "This enrolment link has expired",
    text: "Enrolment links work for 24 hours, and a newer link replaces an older one. Ask the administrator who sent it for a new link.",
  },
  used: {
    status: 410,
    title: "This enrolment link has already been used",
    text: "Each enrolment link works only once. If you have enrolled already, go to the signing page and sign in with your passkey. If you have not, someone else may have used your link: tell your administrator and ask for a new one.",
  },
  suspended: {
    status: 403,
    title: "You cannot enrol at the moment",
    text: "Your administrator has suspended you on this service, so you cannot enrol or sign. If you think this is a mistake, ask your administrator.",
  },
};

export function renderRefusedPage(reason: EnrolmentRefusal): string {
  const r = REFUSED[reason];
  return shell(
    `${r.title} · docverify`,
    `<h1>${e(r.title)}</h1>
<p id="refusal" data-reason="${e(reason)}">${e(r.text)}</p>
${reason === "used" ? `<p><a href="/sign">Go to the signing page</a></p>\n` : ""}<p>No passkey was created, and nothing about you has changed.</p>`,
  );
}

export function renderSignPage(): string {
  return shell(
    "Sign a document · docverify",
    `<h1>Sign a document</h1>
<p class="lead">Sign PDF documents with your passkey, in your own name, for your organisation.</p>
<p id="status" role="status" aria-live="polite"></p>
<section id="signed-out" aria-labelledby="signed-out-title" hidden>
<h2 id="signed-out-title" tabindex="-1">Sign in</h2>
<p>Sign in with the passkey you created when you enrolled. Your browser asks you to confirm that it is you: with your fingerprint, your face, your device's PIN, or by touching your security key.</p>
<p><button type="button" id="sign-in">Sign in with my passkey</button></p>
<p>Not enrolled yet? Open the enrolment link your administrator sent you.</p>
</section>
<section id="signed-in" aria-labelledby="signed-in-title" hidden>
<h2 id="signed-in-title" tabindex="-1">Signed in as <bdi id="who"></bdi></h2>
<p>You sign for <bdi id="org"></bdi>. <button type="button" id="sign-out" class="secondary">Sign out</button></p>
<h2>Sign a PDF document</h2>
<p>Your document stays on this computer. Your browser computes its fingerprint (its SHA-256 hash), and only that is sent. The signed copy you download is your document with a signature stamp added. <strong>Anyone who verifies it will see your name.</strong></p>
<div class="drop" id="drop">
<label for="file">Choose a PDF document</label>
<input type="file" id="file" accept=".pdf,application/pdf">
<p>Or drag the file from your folders and drop it in this box.</p>
</div>
<p id="chosen"></p>
<p><button type="button" id="sign">Sign this document</button></p>
<section id="done" class="done" aria-labelledby="done-title" hidden>
<h3 id="done-title" tabindex="-1">Signed</h3>
<p><a id="download" href="#">Download the signed PDF</a></p>
<p>Anyone can check it on its <a id="verify-link" href="#">verify page</a>.</p>
</section>
<h2 id="records-title" tabindex="-1">Documents you have signed</h2>
<p id="records-empty">You have not signed any document yet.</p>
<table id="records" role="table" hidden>
<caption class="vh">Documents you have signed, newest first</caption>
<thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Document</th><th scope="col" role="columnheader">Signed</th><th scope="col" role="columnheader">State</th><th scope="col" role="columnheader">Actions</th></tr></thead>
<tbody id="records-body" role="rowgroup"></tbody>
</table>
</section>
<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-what">
<h2 id="revoke-title">Revoke your signature?</h2>
<p id="revoke-what"></p>
<label for="revoke-reason">Why are you revoking it?</label>
<select id="revoke-reason"></select>
<div class="actions"><button type="button" id="revoke-confirm">Revoke my signature</button><button type="button" id="revoke-cancel" class="secondary">Keep it</button></div>
</dialog>
${NO_SCRIPT}`,
    "/app/assets/sign.js",
  );
}

const SIGN_PAGE = renderSignPage();

/** An EnrolmentTokenError (persons/persons.ts), recognised by shape: a DomainError with a known `reason`. */
function isRefusal(error: unknown): error is DomainError & { reason: EnrolmentRefusal } {
  if (!(error instanceof DomainError)) return false;
  const reason: unknown = (error as unknown as { reason?: unknown }).reason;
  return typeof reason === "string" && Object.hasOwn(REFUSED, reason);
}

/** Hidden from the OpenAPI document: pages for people; their JSON endpoints are the API. */
const HIDDEN = { detail: { hide: true } } as const;

export function appPages(deps: AppPagesDeps) {
  return new Elysia({ name: "app-pages" })
    .get(
      "/enrol/:token",
      async ({ params }) => {
        let who: Awaited<ReturnType<AppPagesDeps["persons"]["peekEnrolment"]>>;
        try {
          who = await deps.persons.peekEnrolment(params.token);
        } catch (error) {
          if (!isRefusal(error)) throw error;
          return page(REFUSED[error.reason].status, renderRefusedPage(error.reason), false);
        }
        return page(200, renderEnrolPage({ name: who.person.name, organisation: who.organisation.name }), true);
      },
      HIDDEN,
    )
    .get("/sign", () => page(200, SIGN_PAGE, true), HIDDEN)
    .get("/app/assets/enrol.js", async () => script((await import("./app-scripts.ts")).ENROL_JS), HIDDEN)
    .get("/app/assets/sign.js", async () => script((await import("./app-scripts.ts")).SIGN_JS), HIDDEN);
}
