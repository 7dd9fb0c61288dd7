/**
 * Enrolling and signing (docs/persons.md), end to end, as the people involved do it: `docverify
 * serve` running for real on http://localhost:PORT (the relying party id must be a domain) with its
 * embedded local ledger; an administrator adds a person with the command line; the person opens the
 * enrolment link in headless Chromium, whose virtual authenticator (CTAP2, internal, resident keys,
 * user verification) holds the passkey; enrols; signs a real PDF on /sign; downloads the signed
 * copy. Then: the bytes before the update are the original; qpdf --check passes on the signed copy;
 * POST /v1/verifications with the original's hash answers `verified`, signerType `user`, the
 * person's name as signerHint; the record's verify page, given the signed PDF, says it matches.
 * Finally the person revokes it from their list, signs out, and signs in again with the passkey.
 * Nothing the pages load comes from anywhere but the service, and the browser logs no error.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { startServiceWithOrg, type ServiceWithOrg } from "../support/service-with-org.ts";
import { waitFor } from "../support/wait.ts";

const NAME = "Zoë Ångström-Dubois";
const ORG = "Example District Council";
const HIGH_LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };

let s: ServiceWithOrg;
let base: string;
let browser: Browser;

/** A port free now, so the public URL can name it before the service starts. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  void probe.stop(true);
  return port;
}

beforeAll(async () => {
  const port = freePort();
  base = `http://localhost:${port}`;
  // Consensus in 500 ms rather than the local ledger's default 3 s: the topic, the person's key
  // announcement and the record each wait for one, and nothing here looks before it.
  s = await startServiceWithOrg({ orgName: ORG, env: { DOCVERIFY_PORT: String(port), DOCVERIFY_PUBLIC_URL: base, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "500", ...HIGH_LIMITS } });
  // The service creates the organisation's topic on its own; records wait for it.
  await waitFor("the organisation's topic", async () => (await s.admin.organisations.get(s.org.id)).topicId, 60_000, 100);
  browser = await chromium.launch({ executablePath: requireProgram("chromium"), args: CHROMIUM_ARGS });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await cleanup();
});

/** `docverify person add … --json`, as the administrator runs it on the appliance. */
function addPerson(): { id: string; enrolUrl: string; expiresAt: string } {
  const p = Bun.spawnSync(
    [BUN, join(ROOT, "src", "main.ts"), "person", "add", "--org", s.org.id, "--name", NAME, "--email", "zoe@example.org", "--identity", "Passport, number ending 0042, seen in person", "--json", "--data", s.admin.config.dataDir],
    { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "admin", DOCVERIFY_PUBLIC_URL: base } },
  );
  expect([p.exitCode, p.stderr.toString()]).toEqual([0, expect.any(String)]);
  return JSON.parse(p.stdout.toString()) as { id: string; enrolUrl: string; expiresAt: string };
}

async function verify(docHash: string): Promise<{ verdict: string; matches: { recordId: string; signerType: string; signerHint?: string; kind: string; status: string }[] }> {
  const res = await fetch(`${s.svc.url}/v1/verifications`, { method: "POST", headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

const text = (page: Page, selector: string) => page.textContent(selector).then((t) => t ?? "");
const waitStatus = (page: Page, t: string, timeout = 30_000) =>
  page.waitForFunction((want) => ((globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }).document.getElementById("status")?.textContent ?? "").includes(want), t, { timeout });

test(
  "an administrator adds a person; they enrol, sign a PDF, download it; it verifies as theirs, opens in qpdf, matches on its verify page; they revoke it, sign out and in",
  async () => {
    const qpdf = requireProgram("qpdf");
    const dir = tempDir();
    const original = makeTestPdf({ title: "Planning decision 2026-014", pages: 2 });
    const originalPath = join(dir, "Planning decision.pdf");
    writeFileSync(originalPath, original);
    const docHash = `sha256:${createHash("sha256").update(original).digest("hex")}`;

    const link = addPerson();
    expect(link.enrolUrl.startsWith(`${base}/enrol/`)).toBe(true);

    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = (await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    })) as { authenticatorId: string };
    const requested: string[] = [];
    const problems: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(String(e)));

    // Enrolment: the page names the person and says their name will be shown to verifiers.
    const enrolPage = await page.goto(link.enrolUrl);
    expect(enrolPage?.status()).toBe(200);
    expect(await text(page, "#person-name")).toBe(NAME);
    expect(await text(page, "#organisation-name")).toBe(ORG);
    expect(await text(page, "#name-notice")).toContain("will be shown to anyone who verifies a document you sign");
    await page.click("#enrol");
    await waitStatus(page, "you are enrolled");
    const credentials = (await cdp.send("WebAuthn.getCredentials", { authenticatorId })) as { credentials: { rpId: string; isResidentCredential: boolean }[] };
    expect(credentials.credentials.map((c) => [c.rpId, c.isResidentCredential])).toEqual([["localhost", true]]);
    // The link is used up: opened again, it says so.
    const again = await (await fetch(link.enrolUrl.replace(base, s.svc.url))).text();
    expect(again).toContain("This enrolment link has already been used");

    // Signing: enrolment signed the person in.
    await page.click("#sign-link");
    await page.waitForURL(`${base}/sign`);
    await page.waitForSelector("#signed-in:not([hidden])");
    expect(await text(page, "#who")).toBe(NAME);
    expect(await text(page, "#org")).toBe(ORG);
    expect(await text(page, "#records-empty")).toContain("not signed any document yet");
    await page.setInputFiles("#file", originalPath);
    await waitStatus(page, "“Planning decision.pdf” is ready to sign");
    await page.click("#sign");
    await waitStatus(page, "Signed. Your signed copy “Planning decision-signed.pdf” is ready");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
    expect(download.suggestedFilename()).toBe("Planning decision-signed.pdf");
    const signedPath = join(dir, "signed.pdf");
    await download.saveAs(signedPath);
    const signed = new Uint8Array(readFileSync(signedPath));
    const recordId = new URL((await page.getAttribute("#verify-link", "href"))!).pathname.split("/").pop()!;

    // The signed copy: the original bytes, then one update; qpdf finds nothing wrong.
    expect(signed.length).toBeGreaterThan(original.length);
    expect(Buffer.from(signed.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    expect(new TextDecoder("latin1").decode(signed.subarray(original.length))).toContain(`/DocverifyRecordId (${recordId})`);
    const check = Bun.spawnSync([qpdf, "--check", signedPath]);
    expect([check.exitCode, check.stdout.toString() + check.stderr.toString()]).toEqual([0, expect.stringContaining("No syntax or stream encoding errors")]);

    // Verification with the original's hash: verified, a person, by name. Until the ledger has
    // the record it is no_record (pending) or pending_anchor (accepted).
    const verdict = await waitFor("a final verdict", async () => {
      const v = await verify(docHash);
      return v.verdict === "no_record" || v.verdict === "pending_anchor" ? null : v;
    }, 60_000, 250);
    expect(verdict.verdict).toBe("verified");
    expect(verdict.matches.map((m) => [m.recordId, m.signerType, m.signerHint, m.kind, m.status])).toEqual([[recordId, "user", NAME, "pdf_embedded", "active"]]);

    // The person's list shows it, final once the ledger has confirmed it.
    await page.waitForFunction(() => ((globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector("#records-body td[data-state]")?.textContent ?? "").startsWith("Valid: confirmed on the ledger"), null, { timeout: 60_000 });
    expect(await text(page, "#records-body")).toContain("Planning decision.pdf");

    // The verify page, given the signed PDF, says it is this record's document.
    const verifyPage = await context.newPage();
    verifyPage.on("request", (r) => requested.push(r.url()));
    await verifyPage.goto(`${base}/verify/${recordId}`);
    expect(await verifyPage.textContent("dd bdi")).toBe("Planning decision.pdf");
    expect(await verifyPage.textContent("main")).toContain(NAME);
    await verifyPage.waitForSelector("#check:not([hidden])");
    await verifyPage.setInputFiles("#file", signedPath);
    await verifyPage.waitForSelector("#result.match", { timeout: 20_000 });
    expect(await verifyPage.textContent("#result")).toContain("Match");
    await verifyPage.close();

    // Revoking it from the list, with a reason, after confirming.
    await page.click("#records-body button");
    await page.waitForSelector("#revoke-dialog[open]");
    await page.selectOption("#revoke-reason", "SUPERSEDED");
    await page.click("#revoke-confirm");
    await waitStatus(page, "is revoked (a newer version replaces this document)");
    expect(await text(page, "#records-body")).toContain("Revoked (a newer version replaces this document)");
    const after = await verify(docHash);
    expect([after.verdict, after.matches[0]?.status]).toEqual(["revoked", "revoked"]);

    // Signing out, then in again with the same passkey.
    await page.click("#sign-out");
    await waitStatus(page, "You are signed out.");
    expect(await page.isVisible("#signed-in")).toBe(false);
    expect((await context.cookies()).map((c) => c.name)).not.toContain("docverify_session");
    await page.click("#sign-in");
    await waitStatus(page, `You are signed in as ${NAME}`);
    await page.waitForSelector("#records:not([hidden])");
    expect(await text(page, "#records-body")).toContain("Planning decision.pdf");

    // Everything came from the service itself (and the signed copy from the page's own memory).
    expect(requested.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith("blob:"))).toEqual([]);
    // Answers like 401 (not signed in) are logged by the browser; nothing else may be.
    expect(problems.filter((p) => !/^Failed to load resource: the server responded with a status of 401/.test(p))).toEqual([]);
    await context.close();
  },
  240_000,
);
