/**
 * Who made a record, as the verifier's page says it (docs/receipts.md §6), in headless Chromium
 * opened from a file: the claimed domain's /.well-known/docverify.json read cross-origin over HTTPS
 * (acme.test mapped to a loopback server by Chromium's --host-resolver-rules, its certificate from
 * a test CA trusted only through --ignore-certificate-errors-spki-list), a trust file chosen in the
 * form, and DNS, which a page cannot read. For each: the verdict's data-identity, the headline, and
 * the organisation line, which states a name as fact only when confirmed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { BUN, ROOT, cleanup, onCleanup, tempDir } from "../support/env.ts";
import { deadPort, docverifyTxt, identityDocument, startDnsServer, startIdentityServer, withCors, type IdentityServer } from "../support/identity-servers.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { receiptPageHtml } from "../../src/http/pages/bundle.ts";
import { createTestCa } from "../support/test-ca.ts";
import { announcementBytes, buildReceipt, DOC_HASH, DOCUMENT, fakeMirror, ORG_ID, TOPIC } from "../verifier/fixtures.ts";

afterAll(cleanup);

/** The generated page as committed: what `npm run build` ships. */
const NAME = "Acme Ltd";
/** Served by the identity server. */
const DOMAIN = "acme.test";
/** Mapped to a port where nothing listens. */
const DOWN = "down.test";
const FINGERPRINT = (JSON.parse(new TextDecoder().decode(announcementBytes())) as { keyFingerprint: string }).keyFingerprint;

interface Held {
  readonly receiptPath: string;
  /** CORS fronts of the receipt's two fake mirror nodes. */
  readonly mirrors: string[];
}

let server: IdentityServer;
let trusting: Browser;
let untrusting: Browser;
let pageUrl: string;
let documentPath: string;
let files: string;
const held: Record<string, Held> = {};

/** A receipt whose key announcement claims `domain`, and two mirror nodes of its ledger that a page may read. */
function receiptClaiming(domain: string): Held {
  const { receipt, ledger } = buildReceipt();
  const announcement = announcementBytes(NAME, { domain });
  ledger.messages[0]!.message = announcement;
  receipt.keyAnnouncement.message = Buffer.from(announcement).toString("base64");
  const receiptPath = join(files, `receipt-${domain}.json`);
  writeFileSync(receiptPath, JSON.stringify(receipt, null, 2));
  return { receiptPath, mirrors: [withCors(fakeMirror(ledger).url), withCors(fakeMirror(ledger).url)] };
}

async function launch(trustTestCa: boolean, spki: string, dead: number): Promise<Browser> {
  const args = [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${DOMAIN}:443 127.0.0.1:${server.port}, MAP ${DOWN}:443 127.0.0.1:${dead}`];
  if (trustTestCa) args.push(`--ignore-certificate-errors-spki-list=${spki}`);
  const b = await chromium.launch({ executablePath: requireProgram("chromium"), args });
  onCleanup(() => b.close());
  return b;
}

beforeAll(async () => {
  const ca = createTestCa();
  const cert = ca.serverCertificate([DOMAIN]);
  server = startIdentityServer(cert);
  files = tempDir("docverify-identity-page-");
  writeFileSync(join(files, "verify-receipt.html"), receiptPageHtml());
  pageUrl = `file://${join(files, "verify-receipt.html")}`;
  documentPath = join(files, "hello.txt");
  writeFileSync(documentPath, DOCUMENT);
  held[DOMAIN] = receiptClaiming(DOMAIN);
  held[DOWN] = receiptClaiming(DOWN);
  const dead = deadPort();
  [trusting, untrusting] = await Promise.all([launch(true, cert.spkiSha256, dead), launch(false, cert.spkiSha256, dead)]);
}, 60_000);

interface Shown {
  readonly verdict: string | null;
  readonly identity: string | null;
  readonly headline: string;
  /** As rendered: the label and name, a line break, then the note. */
  readonly organisation: string;
  readonly identityCheck: { status: string; detail: string } | null;
  readonly consoleErrors: string[];
}

/** Opens the page from its file, chooses the receipt, the document and maybe a trust file, names the mirror nodes, presses Verify. */
async function verifyInPage(browser: Browser, domain: string, trust?: unknown): Promise<Shown> {
  const { receiptPath, mirrors } = held[domain]!;
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(pageUrl);
    await page.setInputFiles("#receipt", receiptPath);
    await page.waitForSelector("#receipt-info:not(:empty)");
    await page.setInputFiles("#document", documentPath);
    await page.fill("#mirrors", mirrors.join("\n"));
    if (trust !== undefined) {
      const path = join(tempDir("docverify-trust-"), "trust.json");
      writeFileSync(path, JSON.stringify(trust));
      await page.setInputFiles("#trust", path);
      await page.waitForSelector("#trust-info:not(:empty)");
      expect(await page.getAttribute("#trust-info", "class")).not.toContain("error");
    }
    await page.click("#verify");
    await page.waitForSelector("#verdict:not(:empty), #progress.error", { timeout: 20_000 });
    const error = await page.$("#progress.error");
    if (error !== null) throw new Error(`the page gave no verdict: ${await error.textContent()}`);
    const row = await page.$('#check-rows tr[data-check="identity"]');
    const identityCheck = row === null ? null : await row.$$eval("td", (tds) => ({ status: tds[0]!.textContent ?? "", detail: tds[2]!.textContent ?? "" }));
    return {
      verdict: await page.getAttribute("#verdict", "data-verdict"),
      identity: await page.getAttribute("#verdict", "data-identity"),
      headline: (await page.textContent("#verdict")) ?? "",
      organisation: await page.innerText("#organisation"),
      identityCheck,
      consoleErrors,
    };
  } finally {
    await context.close();
  }
}

const listing = (over: { topicId?: string; fingerprints?: string[] } = {}) =>
  identityDocument([{ orgId: ORG_ID, name: NAME, domain: DOMAIN, network: "testnet", topicId: over.topicId ?? TOPIC, fingerprints: over.fingerprints ?? [FINGERPRINT] }]);

/** The claim shown as a claim, never as the organisation. */
function shownAsClaim(s: Shown, domain: string): void {
  expect(s.verdict).toBe("verified_org");
  expect(s.identity).toBe("unconfirmed");
  expect(s.headline).toBe("Valid, but who made it is not confirmed");
  expect(s.organisation).toStartWith(`Organisation: unconfirmed claim. The ledger announcement claims ${NAME}\nIt names a domain (domain ${domain}), which did not confirm it. Anyone can announce any name on a ledger topic of their own`);
  expect(s.organisation).not.toContain("confirmed)");
  expect(s.identityCheck?.status).toBe("warning");
}

const T = 30_000;

describe("https: the claimed domain's /.well-known/docverify.json, read cross-origin", () => {
  test(
    "listing this network, topic and key confirms the organisation; the same document behind a certificate the browser does not trust confirms nothing",
    async () => {
      server.document = listing();
      const before = server.requests.length;
      const confirmed = await verifyInPage(trusting, DOMAIN);
      expect(confirmed).toMatchObject({ verdict: "verified_org", identity: "confirmed", headline: "Valid", consoleErrors: [] });
      expect(confirmed.organisation).toBe(`Organisation (confirmed): ${NAME}\nConfirmed by https://${DOMAIN}/.well-known/docverify.json for ${DOMAIN}.`);
      expect(confirmed.identityCheck?.status).toBe("pass");
      expect(server.requests.slice(before)).toEqual(["/.well-known/docverify.json"]);

      const untrusted = await verifyInPage(untrusting, DOMAIN);
      shownAsClaim(untrusted, DOMAIN);
      expect(untrusted.organisation).toContain(`https://${DOMAIN}/.well-known/docverify.json could not be read`);
      // The handshake failed: the server saw no second request.
      expect(server.requests.slice(before)).toEqual(["/.well-known/docverify.json"]);
    },
    T,
  );

  test(
    "listing another topic, or this topic with another key, is a mismatch: Not valid",
    async () => {
      server.document = listing({ topicId: "0.0.999" });
      const otherTopic = await verifyInPage(trusting, DOMAIN);
      expect(otherTopic).toMatchObject({ verdict: "signature_invalid", identity: "mismatch", headline: "Not valid" });
      expect(otherTopic.organisation).toBe(`Organisation: MISMATCH. The ledger claims ${NAME}\nBut ${DOMAIN} lists 0.0.999 on testnet, not ${TOPIC} on testnet. Do not rely on this receipt.`);
      expect(otherTopic.identityCheck?.status).toBe("fail");

      server.document = listing({ fingerprints: ["0f".repeat(32)] });
      const otherKey = await verifyInPage(trusting, DOMAIN);
      expect(otherKey).toMatchObject({ verdict: "signature_invalid", identity: "mismatch", headline: "Not valid" });
      expect(otherKey.organisation).toBe(`Organisation: MISMATCH. The ledger claims ${NAME}\nBut ${DOMAIN} lists topic ${TOPIC} with other keys than this record's. Do not rely on this receipt.`);
    },
    T,
  );

  test(
    "the domain's server down: the ledger proof stands, who made it is a claim",
    async () => {
      const shown = await verifyInPage(trusting, DOWN);
      shownAsClaim(shown, DOWN);
      expect(shown.organisation).toContain(`https://${DOWN}/.well-known/docverify.json could not be read`);
    },
    T,
  );
});

describe("dns", () => {
  test(
    "a TXT record that confirms on the command line confirms nothing in the page, which says it cannot read DNS",
    async () => {
      const dns = await startDnsServer({ [`_docverify.${DOWN}`]: [docverifyTxt("testnet", TOPIC)] });
      const { receiptPath, mirrors } = held[DOWN]!;
      const cli = Bun.spawn(
        [BUN, join(ROOT, "src", "main.ts"), "verify-receipt", receiptPath, "--hash", DOC_HASH, "--no-builtin-mirrors", ...mirrors.flatMap((m) => ["--mirror", m]), "--connect-to", `${DOWN}:443:127.0.0.1:${deadPort()}`, "--dns-server", dns.address, "--json"],
        { cwd: files, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" }, stdout: "pipe", stderr: "pipe" },
      );
      const [out, page] = await Promise.all([new Response(cli.stdout).text(), verifyInPage(trusting, DOWN)]);
      expect(await cli.exited).toBe(0);
      expect((JSON.parse(out) as { identity: unknown }).identity).toMatchObject({ status: "confirmed", method: "dns", domain: DOWN });

      shownAsClaim(page, DOWN);
      expect(page.organisation).toContain("(This page cannot read DNS records; the command line can.)");
    },
    T,
  );
});

describe("trust file", () => {
  const pin = (topicId: string) => ({
    v: 1,
    networks: {},
    organisations: [{ orgId: ORG_ID, name: NAME, domain: DOWN, network: "testnet", topicId, keys: [{ algorithm: "ML-DSA-65", fingerprint: FINGERPRINT }] }],
  });

  test(
    "pinning this topic and key confirms the organisation (its domain's web address down)",
    async () => {
      const shown = await verifyInPage(trusting, DOWN, pin(TOPIC));
      expect(shown).toMatchObject({ verdict: "verified_org", identity: "confirmed", headline: "Valid" });
      expect(shown.organisation).toBe(`Organisation (confirmed): ${NAME}\nConfirmed by your trust file for ${DOWN}.`);
    },
    T,
  );

  test(
    "pinning the claimed organisation on another topic is a mismatch: Not valid",
    async () => {
      const shown = await verifyInPage(trusting, DOWN, pin("0.0.777"));
      expect(shown).toMatchObject({ verdict: "signature_invalid", identity: "mismatch", headline: "Not valid" });
      expect(shown.organisation).toBe(`Organisation: MISMATCH. The ledger claims ${NAME}\nBut the trust file pins "${NAME}" to topic 0.0.777 on testnet, not ${TOPIC} on testnet. Do not rely on this receipt.`);
    },
    T,
  );
});
