/**
 * Accessibility (docs/persons.md "How the pages are built"): the enrolment and signing pages in
 * headless Chromium pass axe-core's WCAG 2.0/2.1 A and AA rules (0 violations) in every state a
 * person meets: the enrolment page, a refused link, signed out, signed in with records in each
 * state, the revoke dialog, a signed document ready to download, and each kind of error; in light
 * and dark colour schemes. And they work with the keyboard alone: Tab reaches every control in a
 * sensible order, each focused control shows a visible outline, buttons work with Enter and Space,
 * the file chooser opens from the keyboard, and focus goes where the person's attention must go
 * next.
 *
 * The pages are served for real in front of a fake of the /app endpoints (fake-app.ts) so every
 * state can be reached; e2e.test.ts runs the same pages against the real service.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { expectClean } from "../support/axe.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { GOOD_TOKEN, PERSON, recordOf, startFakeApp, type FakeApp } from "./fake-app.ts";

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: requireProgram("chromium"), args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await cleanup();
});

/** A page in a fresh context with a platform passkey authenticator (user verification on). */
async function open(fake: FakeApp, path: string, colorScheme: "light" | "dark" = "light"): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ colorScheme });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  // Anything the page logs as an error (a policy violation, an exception) is a finding.
  const problems: string[] = [];
  page.on("console", (m) => {
    // The browser logs each error answer; the tests provoke those on purpose.
    if (m.type() === "error" && !/^Failed to load resource: the server responded with a status of \d+/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${fake.base}${path}`);
  return { page, problems };
}

interface Stop {
  id: string;
  tag: string;
  text: string;
  /** A visible focus indicator: an outline at least 2 px wide. */
  outlined: boolean;
}

/** The element with focus, described. */
async function focused(page: Page): Promise<Stop | null> {
  return (await page.evaluate(`(() => {
    const el = document.activeElement;
    if (el === null || el === document.body) return null;
    const cs = getComputedStyle(el);
    return { id: el.id, tag: el.tagName.toLowerCase(), text: (el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 80),
             outlined: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2 };
  })()`)) as Stop | null;
}

/** Presses Tab from the top of the page until focus leaves it; returns each stop. */
async function tabStops(page: Page): Promise<Stop[]> {
  await page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)");
  const stops: Stop[] = [];
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    const f = await focused(page);
    if (f === null || (stops.length > 0 && f.id !== "" && f.id === stops[0]!.id)) break;
    stops.push(f);
  }
  return stops;
}

const status = (page: Page) => page.textContent("#status");
const waitStatus = (page: Page, text: string) => page.waitForFunction((t) => ((globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }).document.getElementById("status")?.textContent ?? "").includes(t), text, { timeout: 20_000 });

describe("the enrolment page", () => {
  test("0 violations, light and dark; the refused links' pages too", async () => {
    const fake = startFakeApp();
    for (const scheme of ["light", "dark"] as const) {
      const { page, problems } = await open(fake, `/enrol/${GOOD_TOKEN}`, scheme);
      expect(await page.textContent("#person-name")).toBe(PERSON.name);
      await expectClean(page, `enrolment page (${scheme})`);
      for (const refused of ["unknown-token", "expired", "used", "suspended"]) {
        await page.goto(`${fake.base}/enrol/${refused}`);
        await expectClean(page, `refused link ${refused} (${scheme})`);
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  test("with the keyboard alone: a refusal said in words, then Enter creates the passkey, focus moves to the result, the link leads on", async () => {
    const fake = startFakeApp();
    const { page, problems } = await open(fake, `/enrol/${GOOD_TOKEN}`);
    const stops = await tabStops(page);
    expect(stops.map((s) => s.id)).toEqual(["enrol"]);
    expect(stops.every((s) => s.outlined)).toBe(true);

    // The service refuses: its message is shown, in the status region, and the page stays usable.
    fake.failures.set(`POST /app/enrol/${GOOD_TOKEN}/options`, { status: 403, code: "FORBIDDEN", message: "This enrolment link has already been used. Ask your administrator for a new one." });
    await page.focus("#enrol");
    await page.keyboard.press("Enter");
    await waitStatus(page, "already been used");
    expect(await page.getAttribute("#status", "class")).toBe("error");
    await expectClean(page, "enrolment refused");

    fake.failures.clear();
    // Focus stayed on the button through the failure.
    expect((await focused(page))?.id).toBe("enrol");
    await page.keyboard.press("Space");
    await waitStatus(page, "you are enrolled");
    expect((await focused(page))?.id).toBe("done-title");
    await expectClean(page, "enrolled");
    await page.keyboard.press("Tab");
    const link = await focused(page);
    expect([link?.id, link?.outlined]).toEqual(["sign-link", true]);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${fake.base}/sign`);
    await page.waitForSelector("#signed-in:not([hidden])");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});

describe("the signing page", () => {
  test("signed out: 0 violations; Tab reaches the sign-in button; Enter signs in with the passkey", async () => {
    const fake = startFakeApp();
    const { page, problems } = await open(fake, `/enrol/${GOOD_TOKEN}`);
    // A passkey on this authenticator first, as enrolment leaves it.
    await page.click("#enrol");
    await waitStatus(page, "you are enrolled");
    fake.signedIn = false;
    await page.goto(`${fake.base}/sign`);
    await page.waitForSelector("#signed-out:not([hidden])");
    await expectClean(page, "signed out");
    const stops = await tabStops(page);
    expect(stops.map((s) => s.id)).toEqual(["sign-in"]);
    expect(stops[0]!.outlined).toBe(true);
    // The service refuses the passkey: said in words, the person stays on the sign-in part.
    fake.failures.set("POST /app/session", { status: 401, code: "UNAUTHENTICATED", message: "This passkey is not registered with this service." });
    await page.focus("#sign-in");
    await page.keyboard.press("Enter");
    await waitStatus(page, "Your passkey was not accepted. This passkey is not registered with this service.");
    await expectClean(page, "sign-in refused");
    fake.failures.clear();
    expect((await focused(page))?.id).toBe("sign-in");
    await page.keyboard.press("Space");
    await waitStatus(page, `You are signed in as ${PERSON.name}`);
    expect((await focused(page))?.id).toBe("signed-in-title");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  test("signed in with records in every state: 0 violations, light and dark; Tab reaches every control, in order, each outlined", async () => {
    const fake = startFakeApp();
    fake.signedIn = true;
    fake.records = [
      recordOf(fake.base, 1, { anchorState: "pending" }),
      recordOf(fake.base, 2, { anchorState: "accepted", filename: null }),
      recordOf(fake.base, 3),
      recordOf(fake.base, 4, { revocation: { reason: "SUPERSEDED", revokedAt: "2026-01-16T10:00:00.000Z" } }),
      recordOf(fake.base, 5, { anchorState: "abandoned", filename: "<b>not bold</b>.pdf" }),
    ];
    for (const scheme of ["light", "dark"] as const) {
      const { page, problems } = await open(fake, "/sign", scheme);
      await page.waitForSelector("#records:not([hidden])");
      expect(await page.locator("#records-body tr").count()).toBe(5);
      expect(await page.textContent("#records-body")).toContain("<b>not bold</b>.pdf");
      expect(await page.textContent("#records-body")).toContain("Revoked (a newer version replaces this document)");
      await expectClean(page, `signed in with records (${scheme})`);
      if (scheme === "light") {
        const stops = await tabStops(page);
        const named = stops.map((s) => (s.id !== "" ? s.id : `${s.tag}:${s.text}`));
        // Every verify page is linked; only the final, unrevoked record can be revoked.
        expect(named).toEqual([
          "sign-out",
          "file",
          "sign",
          "a:Verify page of Document 1.pdf",
          "a:Verify page of (no file name)",
          "a:Verify page of Document 3.pdf",
          "button:Revoke my signature of Document 3.pdf",
          "a:Verify page of Document 4.pdf",
          "a:Verify page of <b>not bold</b>.pdf",
        ]);
        expect(stops.filter((s) => !s.outlined).map((s) => s.id || s.text)).toEqual([]);
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  test("error states, each said in words and clean: no file chosen, a file that is not a PDF (chosen from the keyboard, or dropped), a PDF that cannot take a stamp, a session that ended, too many attempts", async () => {
    const fake = startFakeApp();
    fake.signedIn = true;
    const dir = tempDir();
    const notPdf = join(dir, "letter.docx");
    writeFileSync(notPdf, "PK\u0003\u0004 word/document.xml");
    const { page, problems } = await open(fake, "/sign");
    await page.waitForSelector("#signed-in:not([hidden])");
    // Asked for now, long before the key that opens the chooser: Playwright turns on Chromium's
    // interception of file choosers when the first listener is added, without waiting for it, and
    // a key pressed right after could open the chooser before it is on (no event: CI saw it once).
    const chooser = page.waitForEvent("filechooser");

    // Sign with nothing chosen: told so, and focus goes to the file chooser.
    await page.focus("#sign");
    await page.keyboard.press("Enter");
    await waitStatus(page, "Choose a PDF document first");
    expect((await focused(page))?.id).toBe("file");
    await expectClean(page, "no file chosen");

    // The file chooser opens from the keyboard; a .docx is refused before anything is sent.
    await page.keyboard.press("Space");
    await (await chooser).setFiles(notPdf);
    await waitStatus(page, "“letter.docx” is not a PDF document");
    expect(await status(page)).toContain("Nothing was sent.");
    expect(fake.calls.filter((c) => c.includes("signatures"))).toEqual([]);
    await expectClean(page, "not a PDF");

    // Dropped on the box: the same.
    const dropped = await page.evaluateHandle(() => {
      const g = globalThis as unknown as { DataTransfer: new () => { items: { add(f: unknown): void } } };
      const dt = new g.DataTransfer();
      dt.items.add(new File(["GIF89a"], "photo.gif"));
      return dt;
    });
    await page.dispatchEvent("#drop", "drop", { dataTransfer: dropped });
    await waitStatus(page, "“photo.gif” is not a PDF document");

    // A PDF the stamp cannot be added to (data after its end): refused before anything is sent.
    const trailing = join(dir, "scan.pdf");
    writeFileSync(trailing, Buffer.concat([makeTestPdf(), Buffer.from("\nJUNK".repeat(20))]));
    await page.setInputFiles("#file", trailing);
    await waitStatus(page, "“scan.pdf” cannot be signed here: this PDF has data after its end");
    expect(await status(page)).toContain("Nothing was sent.");
    expect(fake.calls.filter((c) => c.includes("signatures"))).toEqual([]);
    await expectClean(page, "PDF that cannot take a stamp");

    // The session ended (15 minutes idle): the person is told, and taken back to signing in.
    const pdf = join(dir, "report.pdf");
    writeFileSync(pdf, makeTestPdf());
    await page.setInputFiles("#file", pdf);
    await waitStatus(page, "is ready to sign");
    fake.signedIn = false;
    await page.click("#sign");
    await waitStatus(page, "You are not signed in (or were signed out after 15 minutes without activity)");
    await page.waitForSelector("#signed-out:not([hidden])");
    await expectClean(page, "session ended");
    // Too many attempts: said in words.
    fake.failures.set("POST /app/session/options", { status: 429, code: "RATE_LIMITED", message: "Too many requests." });
    await page.click("#sign-in");
    await waitStatus(page, "wait a minute");
    await expectClean(page, "rate limited");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  test("revoking with the keyboard: the dialog (clean), Escape and “Keep it” change nothing, a reason and confirm revoke", async () => {
    const fake = startFakeApp();
    fake.signedIn = true;
    fake.records = [recordOf(fake.base, 7, { filename: "Budget 2026.pdf" })];
    const { page, problems } = await open(fake, "/sign");
    await page.waitForSelector("#records:not([hidden])");
    const revokeButton = page.locator("#records-body button");
    await revokeButton.focus();
    await page.keyboard.press("Enter");
    await page.waitForSelector("#revoke-dialog[open]");
    expect((await focused(page))?.id).toBe("revoke-reason");
    expect(await page.textContent("#revoke-what")).toContain("“Budget 2026.pdf”");
    expect(await page.textContent("#revoke-what")).toContain("This cannot be undone.");
    await expectClean(page, "revoke dialog");
    await page.keyboard.press("Escape");
    await page.waitForSelector("#revoke-dialog[open]", { state: "detached" });
    expect(await focused(page)).toMatchObject({ tag: "button", text: "Revoke my signature of Budget 2026.pdf" });

    await page.keyboard.press("Space");
    await page.waitForSelector("#revoke-dialog[open]");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect((await focused(page))?.id).toBe("revoke-cancel");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#revoke-dialog[open]", { state: "detached" });
    expect(fake.records[0]!.revocation).toBeNull();

    await page.keyboard.press("Enter");
    await page.waitForSelector("#revoke-dialog[open]");
    await page.selectOption("#revoke-reason", "ERROR_IN_DOCUMENT");
    await page.keyboard.press("Tab");
    expect((await focused(page))?.id).toBe("revoke-confirm");
    await page.keyboard.press("Enter");
    await waitStatus(page, "Your signature of “Budget 2026.pdf” is revoked (the document has a mistake in it).");
    expect(fake.records[0]!.revocation?.reason).toBe("ERROR_IN_DOCUMENT");
    expect(await page.textContent("#records-body")).toContain("Revoked (the document has a mistake in it)");
    expect((await focused(page))?.id).toBe("records-title");
    await expectClean(page, "revoked");
    // A refusal from the service is shown in words.
    fake.records.push(recordOf(fake.base, 8, { filename: "Other.pdf" }));
    fake.failures.set(`POST /app/records/${fake.records[1]!.recordId}/revoke`, { status: 409, code: "ANCHOR_NOT_FINAL", message: "The record is not final yet." });
    await page.reload();
    await page.locator("#records-body button").first().click();
    await page.click("#revoke-confirm");
    await waitStatus(page, "cannot be revoked yet");
    await expectClean(page, "revoke refused");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  test("signing a PDF (against the fake): each step in words, the download offered, focus on the result, clean", async () => {
    const fake = startFakeApp();
    const dir = tempDir();
    const pdf = join(dir, "Minutes 12 March.pdf");
    writeFileSync(pdf, makeTestPdf({ title: "Minutes" }));
    const { page, problems } = await open(fake, `/enrol/${GOOD_TOKEN}`);
    await page.click("#enrol");
    await waitStatus(page, "you are enrolled");
    await page.goto(`${fake.base}/sign`);
    await page.waitForSelector("#signed-in:not([hidden])");
    await page.setInputFiles("#file", pdf);
    await waitStatus(page, "is ready to sign");
    expect(await page.textContent("#chosen")).toContain("Minutes 12 March.pdf");
    await page.focus("#sign");
    await page.keyboard.press("Enter");
    await waitStatus(page, "Signed. Your signed copy “Minutes 12 March-signed.pdf” is ready");
    expect((await focused(page))?.id).toBe("done-title");
    expect(await page.getAttribute("#download", "download")).toBe("Minutes 12 March-signed.pdf");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toMatchObject({ id: "download", outlined: true });
    await expectClean(page, "signed");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});
