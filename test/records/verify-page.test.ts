/**
 * GET /verify/{recordId}: what it shows, escaping, the Content-Security-Policy, 404 pages, a
 * record signed with a key declared compromised (on the test engine), and the page in headless Chromium (filename shown, a
 * smuggled script not run, a dropped file matched locally, a signed PDF matched by its original,
 * no request leaving the service).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { cspHash } from "../../src/http/pages/html.ts";
import { VERIFY_SCRIPT } from "../../src/http/pages/verify.ts";
import { signPdf } from "../../src/pdf/stamp.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { eq } from "drizzle-orm";
import { verifyPages } from "../../src/http/pages/verify.ts";
import { createHttp } from "../../src/http/server.ts";
import { records } from "../../src/storage/schema.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { cleanup, tempDir, testApp } from "../support/env.ts";
import { createRecordsFixture } from "../support/records-fixture.ts";
import { sql } from "drizzle-orm";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { rfc3339Ms } from "../../src/lib/formats.ts";
import { q } from "../../src/storage/store.ts";
import { journalDrivers } from "../support/drivers.ts";
import { engineHarness, HASH, harness, T0, type Harness } from "./fixtures.ts";

afterAll(cleanup);

const NASTY = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">"'&\u202Egnp.exe`;

/** A record with any filename, as the application could store it (bypassing API validation). */
function storedRecord(h: Harness, org: string, filename: string | null, docHash = HASH(filename ?? "none")): string {
  const id = Bun.randomUUIDv7();
  const key = h.core.db.$client.query("SELECT fingerprint FROM signing_keys LIMIT 1").get() as { fingerprint: Uint8Array };
  h.core.db
    .insert(records)
    .values({
      id,
      orgId: org,
      signerType: "org",
      kind: "record_only",
      docHash,
      filename,
      signedAtMs: T0,
      signerFingerprint: Buffer.from(key.fingerprint),
      signature: Buffer.from([1]),
      sealFingerprint: Buffer.from(key.fingerprint),
      sealSignature: Buffer.from([1]),
      anchorState: "pending",
      topicId: "0.0.1001",
      transactionId: `0.0.2@1768469400.${id.slice(-9).replace(/[a-f]/g, "0")}`,
      createdAt: T0,
    })
    .run();
  return id;
}

async function page(h: Harness, id: string) {
  const res = await h.request(`/verify/${id}`);
  return { res, html: await res.text() };
}

describe("GET /verify/{recordId}", () => {
  test("shows the record's facts, with no credential", async () => {
    const h = harness();
    const org = await h.org("Acme & Sons <Ltd>");
    const created = await h.create(org, { originalDocHash: HASH(1), filename: "契約書.pdf" });
    const { recordId, anchor, verifyUrl } = (await created.json()) as { recordId: string; verifyUrl: string; anchor: { transactionId: string; hashscanUrl: string } };
    expect(new URL(verifyUrl).pathname).toBe(`/verify/${recordId}`);
    const { res, html } = await page(h, recordId);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(html).toContain("<bdi>契約書.pdf</bdi>");
    expect(html).toContain(HASH(1));
    expect(html).toContain("Acme &amp; Sons &lt;Ltd&gt;");
    // A time for people, to the second in UTC; the exact value in its attributes.
    expect(html).toContain('<time datetime="2026-01-15T09:30:00.123Z" title="2026-01-15T09:30:00.123Z">15 January 2026, 09:30:00 UTC</time>');
    expect(html).toContain("Pending:");
    expect(html).toContain("<strong>Awaiting the ledger</strong>");
    expect(html).toContain(`href="${anchor.hashscanUrl}"`);
    expect(html).not.toContain("mirror node");
    h.setAnchorState(recordId, "accepted");
    expect((await page(h, recordId)).html).toContain("Accepted:");
  });

  test("a pending or accepted record awaits the ledger (it can still be abandoned); only an anchored one is Valid", async () => {
    const h = harness();
    const org = await h.org();
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH("waiting") })).json()) as { recordId: string };
    for (const state of ["pending", "accepted"] as const) {
      h.setAnchorState(recordId, state);
      const { html } = await page(h, recordId);
      expect([state, html]).toEqual([state, expect.stringContaining("<strong>Awaiting the ledger</strong>")]);
      expect(html).toContain("abandoned");
      expect(html).toContain('<dt>Status</dt><dd>Awaiting the ledger <span class="lead">(not final)</span></dd>');
      expect(html).toContain('data-status="waiting"');
      expect(html).not.toContain("<strong>Valid</strong>");
      expect(html).not.toContain("good standing");
    }
    h.markAnchored(recordId);
    const { html } = await page(h, recordId);
    expect(html).toContain("<strong>Valid</strong>The authentication is in good standing");
    expect(html).toContain("<dt>Status</dt><dd>Valid</dd>");
    expect(html).toContain('data-status="active"');
    expect(html).not.toContain("Awaiting the ledger");
  });

  test("network local: the ledger is called local, nothing public; a public network is named", async () => {
    const h = harness();
    const org = await h.org();
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH("where") })).json()) as { recordId: string };
    h.markAnchored(recordId, 7);
    const on = async (network: "local" | "mainnet" | "testnet") => {
      const http = createHttp({ log: h.log, version: "test", readiness: {}, plugins: [verifyPages({ records: h.records, network })] });
      return (await http.handle(new Request(`http://localhost/verify/${recordId}`), "127.0.0.1")).text();
    };
    const local = await on("local");
    expect(local).not.toContain("consensus reached on the public");
    expect(local).not.toMatch(/on the public ledger/);
    expect(local).toContain("Anchored: consensus reached on a local development ledger run alongside this service; nothing about this record is on a public ledger.");
    expect(local).toContain('<p class="notice" id="local-ledger">');
    const mainnet = await on("mainnet");
    expect(mainnet).toContain("Anchored: consensus reached on the public Hedera mainnet ledger; final and permanent.");
    expect(mainnet).not.toContain("local-ledger");
    expect(await on("testnet")).toContain("Hedera testnet, a public test ledger");
    // Without a network (a page built without the setting) nothing is called public.
    expect((await page(h, recordId)).html).toContain("Anchored: consensus reached on the ledger; final and permanent.");
  });

  test("the app names its network: the embedded default is local", async () => {
    const { app } = await testApp();
    const fx = createRecordsFixture({ db: app.db, signer: app.signer });
    const org = await fx.createOrg("Local Ledger Ltd");
    const id = fx.addOrgRecord(org, { docHash: HASH("app") });
    const html = await (await app.http.handle(new Request(`http://localhost/verify/${id}`), "127.0.0.1")).text();
    expect(html).toContain("local development ledger");
    expect(html).not.toContain("on the public");
    expect(html).toContain("<bdi>Local Ledger Ltd</bdi>");
  });

  test("the organisation's registered name, also for a person who signed within it; a suspended organisation is not in good standing", async () => {
    const h = harness();
    const org = await h.org("Registered Name Ltd");
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH("named") })).json()) as { recordId: string };
    h.markAnchored(recordId);
    let { html } = await page(h, recordId);
    expect(html).toContain("<bdi>Registered Name Ltd</bdi> <span class=\"lead\">(its registered name; as an organisation, not a named person)</span>");
    await h.core.organisations.set(org, { suspended: true }, "ops");
    ({ html } = await page(h, recordId));
    expect(html).toContain("<strong>Valid</strong>");
    expect(html).toContain("has suspended the organisation");
    expect(html).not.toContain("in good standing:");
    const personal = storedRecord(h, org, "p.pdf");
    h.core.db.update(records).set({ signerType: "user", kind: "pdf_embedded", signerHint: "J. <Doe>" }).where(eq(records.id, personal)).run();
    ({ html } = await page(h, personal));
    expect(html).toContain("A person: <bdi>J. &lt;Doe&gt;</bdi> <span class=\"lead\">(signed within <bdi>Registered Name Ltd</bdi>)</span>");
  });

  test("anchored: consensus time and the mirror-node message link; revoked: reason, meaning and conclusion", async () => {
    const h = harness();
    const org = await h.org();
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH(2) })).json()) as { recordId: string };
    h.markAnchored(recordId, 42);
    let { html } = await page(h, recordId);
    expect(html).toContain("Anchored:");
    // The consensus time to the second: its nanoseconds only in the title, never in the text.
    expect(html).toContain('<time datetime="2026-01-15T09:30:03.123Z" title="2026-01-15T09:30:03.123456789Z">15 January 2026, 09:30:03 UTC</time>');
    expect(html.replace(/<[^>]*>/g, "")).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d/);
    expect(html).toContain('href="http://ledger.test/api/v1/topics/0.0.1001/messages/42"');
    expect(html).toContain("No file name was given.");
    expect((await h.revoke(org, recordId, { reason: "KEY_COMPROMISE" })).status).toBe(200);
    ({ html } = await page(h, recordId));
    expect(html).toContain("<strong>Revoked</strong>");
    expect(html).toContain("<code>KEY_COMPROMISE</code>");
    expect(html).toContain("Signing key may be in others&#39; hands.");
    expect(html).toContain("Treat the authentication as untrustworthy.");
    expect(html).toContain('data-status="revoked"');
  });

  test("escapes every user text: markup, quotes, ampersands, bidi overrides", async () => {
    const h = harness();
    const org = await h.org(`O'Brien "Quotes" & <b>Co</b>`);
    const id = storedRecord(h, org, NASTY);
    const { html } = await page(h, id);
    expect(html).not.toContain("<script>window");
    expect(html).not.toContain("<img");
    expect(html).toContain("<bdi>&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;&quot;&#39;&amp;\u202Egnp.exe</bdi>");
    expect(html).toContain("O&#39;Brien &quot;Quotes&quot; &amp; &lt;b&gt;Co&lt;/b&gt;");
    // Exactly the page's own script element.
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  test("a strict Content-Security-Policy naming the page's own inline style and script by hash", async () => {
    const h = harness();
    const id = storedRecord(h, await h.org(), "a.pdf");
    const { res, html } = await page(h, id);
    const csp = res.headers.get("content-security-policy")!;
    const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]));
    expect(directives["default-src"]).toBe("'none'");
    const script = /<script>([\s\S]*)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*)<\/style>/.exec(html)![1]!;
    expect(script).toBe(VERIFY_SCRIPT);
    expect(directives["script-src"]).toBe(cspHash(script));
    expect(directives["style-src"]).toBe(cspHash(style));
    for (const d of ["img-src", "connect-src", "base-uri", "form-action", "frame-ancestors"]) expect(directives[d]).toBe("'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Nothing is loaded from anywhere: no src attributes, no stylesheet links.
    expect(html).not.toMatch(/\ssrc=|<link/);
  });

  test("unknown, malformed and abandoned ids get a plain 404 page", async () => {
    const h = harness();
    const org = await h.org();
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH(3) })).json()) as { recordId: string };
    h.setAnchorState(recordId, "abandoned");
    for (const id of [recordId, "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "nope", recordId.toUpperCase(), "%3Cscript%3E"]) {
      const { res, html } = await page(h, id);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(html).toContain("No such record");
      expect(html).not.toContain(id === "nope" ? "nope" : "<script");
    }
  });

  test("needs no credential and ignores the /v1 rules (an Origin header is fine)", async () => {
    const h = harness();
    const id = storedRecord(h, await h.org(), "x.pdf");
    const res = await h.request(`/verify/${id}`, { headers: { origin: "https://example.org" } });
    expect(res.status).toBe(200);
    expect(h.access.calls).toEqual([]);
  });
});

describe("GET /verify/{recordId} of a record whose signing key was declared compromised", () => {
  test("signed at or after since: Revoked, KEY_COMPROMISE with its meaning, at the declaration then at the message's consensus; earlier, a key that replaced it, an own earlier revocation: as before", async () => {
    const h = await engineHarness();
    const org = await h.org("Compromised Ltd");
    const anchored = async (label: string) => {
      const { recordId } = (await (await h.create(org, { originalDocHash: HASH(label) })).json()) as { recordId: string };
      await h.markAnchored(recordId);
      // Its message too, as the loop anchors both (an organisation whose messages wait cannot be rotated).
      await h.run("UPDATE ledger_transactions SET state = 'anchored' WHERE record_id = ? AND kind = 'record_message'", recordId);
      return recordId;
    };
    const before = await anchored("before since");
    h.clock.advance(1);
    const since = h.clock.now();
    const atSince = await anchored("at since");
    h.clock.advance(60_000);
    const ownEarlier = await anchored("revoked on its own first");
    expect((await h.revoke(org, ownEarlier, { reason: "SUPERSEDED" })).status).toBe(200);
    const ownAt = h.clock.now();
    h.clock.advance(60_000);
    const declaredAt = h.clock.now();
    const declared = await h.core.organisations.declareKeyCompromised(org, { sinceMs: since }, "test");
    expect(declared.rotation).not.toBeNull();
    const afterRotation = await anchored("signed with the new key");

    const status = async (id: string) => /<div class="status [^"]*" role="status">[\s\S]*?<\/div>/.exec(await (await h.request(`/verify/${id}`)).text())![0];
    const revokedBy = (reason: string, at: number) => expect.stringMatching(new RegExp(`<strong>Revoked</strong>Revoked on <time datetime="${rfc3339Ms(at)}"[^>]*>[^<]*</time>\\. Reason: <code>${reason}</code>`));
    expect(await status(before)).toContain("<strong>Valid</strong>");
    expect(await status(afterRotation)).toContain("<strong>Valid</strong>");
    expect(await status(atSince)).toEqual(revokedBy("KEY_COMPROMISE", declaredAt));
    expect(await status(atSince)).toContain("Signing key may be in others&#39; hands. What a verifier should conclude: Treat the authentication as untrustworthy.");
    const html = await (await h.request(`/verify/${atSince}`)).text();
    expect(html).toContain('<dt>Status</dt><dd>Revoked <span class="lead">(reason <code>KEY_COMPROMISE</code>)</span></dd>');
    expect(html).toContain('data-status="revoked"');
    expect(await status(ownEarlier)).toEqual(revokedBy("SUPERSEDED", ownAt));

    // The key_compromise message anchored by the anchor loop's journal: revoked at its consensus time.
    const store = h.core.store;
    if (store.engine === "postgres") await store.write((tx) => q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`)));
    const ids = createTransactionIds({ clock: h.clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0, lastValidStartNs: 0n });
    const journal = journalDrivers(store, { epoch: () => 1 }).journal(journalRules(h.clock, ids));
    const [wanted] = await journal.keysWantingCompromiseMessage();
    const queued = (await journal.queueCompromise(wanted!, new TextEncoder().encode('{"v":1,"type":"key_compromise"}')))!;
    await journal.grouped.toAnchoredMessage(queued, { sequenceNumber: 99, consensusAt: "1768469700.250000000", runningHash: new Uint8Array(48) });
    expect(await status(atSince)).toEqual(revokedBy("KEY_COMPROMISE", 1_768_469_700_250));
    expect(await status(before)).toContain("<strong>Valid</strong>");
  });
});

describe("in Chromium", () => {
  test(
    "shows the filename, does not run a smuggled script, and matches a chosen file locally",
    async () => {
      const executablePath = requireProgram("chromium");
      const h = harness();
      const org = await h.org();
      const dir = tempDir();
      const docPath = join(dir, "contract.pdf");
      const document = new Uint8Array(randomBytes(200_000));
      writeFileSync(docPath, document);
      const otherPath = join(dir, "other.pdf");
      writeFileSync(otherPath, "not the document");
      const docHash = "sha256:" + createHash("sha256").update(document).digest("hex");
      const id = storedRecord(h, org, NASTY, docHash);
      h.markAnchored(id);
      // Another organisation's record of the same document, still pending.
      const waitingId = storedRecord(h, await h.org("Waiting Ltd"), "waiting.pdf", docHash);
      const { recordId: cleanId } = (await (await h.create(org, { originalDocHash: HASH("clean"), filename: "👩‍👩‍👧‍👦 Résumé.pdf" })).json()) as { recordId: string };

      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.http.handle(req, "127.0.0.1") });
      const base = `http://127.0.0.1:${server.port}`;
      const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
      try {
        const p = await browser.newPage();
        const requested: string[] = [];
        const consoleErrors: string[] = [];
        p.on("request", (r) => requested.push(r.url()));
        p.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(m.text());
        });
        await p.goto(`${base}/verify/${cleanId}`);
        expect(await p.textContent("dd bdi")).toBe("👩‍👩‍👧‍👦 Résumé.pdf");

        await p.goto(`${base}/verify/${id}`);
        expect(await p.textContent("dd bdi")).toBe(NASTY);
        // Our own script ran (it unhides the check box)...
        await p.waitForSelector("#check:not([hidden])", { timeout: 10_000 });
        // ...and the smuggled one did not.
        expect(await p.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);

        await p.setInputFiles("#file", docPath);
        await p.waitForSelector("#result.match", { timeout: 15_000 });
        expect(await p.textContent("#result")).toContain("Match: this file is the document this record authenticates.");

        await p.setInputFiles("#file", otherPath);
        await p.waitForSelector("#result.mismatch", { timeout: 15_000 });
        expect(await p.textContent("#result")).toContain("No match");
        expect(await p.textContent("#result")).toContain("sha256:" + createHash("sha256").update("not the document").digest("hex"));

        // A pending record's match says it is not final yet.
        await p.goto(`${base}/verify/${waitingId}`);
        await p.waitForSelector("#check:not([hidden])", { timeout: 10_000 });
        await p.setInputFiles("#file", docPath);
        await p.waitForSelector("#result.match.waiting", { timeout: 15_000 });
        expect(await p.textContent("#result")).toContain("not final yet: it awaits the ledger");
        await p.goto(`${base}/verify/${id}`);
        await p.waitForSelector("#check:not([hidden])", { timeout: 10_000 });

        // Dropping a file on the box works the same way.
        const dropped = await p.evaluateHandle((bytes) => {
          // Browser globals (the test's types have no DOM library).
          const g = globalThis as unknown as { DataTransfer: new () => { items: { add(f: unknown): void } } };
          const dt = new g.DataTransfer();
          dt.items.add(new File([new Uint8Array(bytes)], "dropped.pdf"));
          return dt;
        }, [...document]);
        await p.dispatchEvent("#drop", "drop", { dataTransfer: dropped });
        await p.waitForSelector("#result.match", { timeout: 15_000 });

        const foreign = requested.filter((u) => !u.startsWith(base));
        expect(foreign).toEqual([]);
        const notFound = await p.goto(`${base}/verify/0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d`);
        expect(notFound?.status()).toBe(404);
        expect(await p.textContent("h1")).toBe("No such record");
      } finally {
        await browser.close();
        await server.stop(true);
      }
    },
    120_000,
  );

  test(
    "a signed PDF matches by its original; one changed after signing, or signed under another record, says so",
    async () => {
      const executablePath = requireProgram("chromium");
      const h = harness();
      const org = await h.org();
      const dir = tempDir();
      const original = makeTestPdf({ xrefStream: true, pages: 2 });
      const id = storedRecord(h, org, "contract.pdf", "sha256:" + createHash("sha256").update(original).digest("hex"));
      h.markAnchored(id);
      const stamp = { recordId: id, verifyUrl: `http://127.0.0.1/verify/${id}`, signerName: "Ada Lovelace", organisation: "Org", signedAt: "2026-01-15T09:30:00Z" };
      const signed = await signPdf(original, stamp);
      const files = {
        original: original,
        signed,
        changed: new Uint8Array([...signed, ...new TextEncoder().encode("% appended after signing\n")]),
        other: await signPdf(original, { ...stamp, recordId: "0190f5a3-7c1e-7d2a-9b4c-000000000002" }),
        otherDocument: await signPdf(makeTestPdf({ title: "another document" }), stamp),
      };
      const paths = Object.fromEntries(
        Object.entries(files).map(([name, bytes]) => {
          const path = join(dir, `${name}.pdf`);
          writeFileSync(path, bytes);
          return [name, path];
        }),
      ) as Record<keyof typeof files, string>;

      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.http.handle(req, "127.0.0.1") });
      const base = `http://127.0.0.1:${server.port}`;
      const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
      try {
        const p = await browser.newPage();
        await p.goto(`${base}/verify/${id}`);
        await p.waitForSelector("#check:not([hidden])", { timeout: 10_000 });
        const check = async (path: string, kind: "match" | "mismatch") => {
          await p.evaluate(() => {
            const r = (globalThis as unknown as { document: { getElementById(id: string): { className: string; textContent: string } } }).document.getElementById("result");
            r.className = "";
            r.textContent = "";
          });
          await p.setInputFiles("#file", path);
          await p.waitForSelector(`#result.${kind}`, { timeout: 15_000 });
          return (await p.textContent("#result")) ?? "";
        };
        expect(await check(paths.signed, "match")).toBe(
          "Match: this is the signed PDF of this record: its original document matches. The stamp and metadata were added when it was signed and are not part of what was signed.",
        );
        // The original inside it, offered to save: exactly the signed bytes, no stamp.
        await p.waitForSelector("#original:not([hidden])");
        expect(await p.getAttribute("#original-link", "download")).toBe("contract (original).pdf");
        const [download] = await Promise.all([p.waitForEvent("download"), p.click("#original-link")]);
        expect(readFileSync((await download.path())!).equals(original)).toBe(true);
        expect(await check(paths.original, "match")).toBe("Match: this file is the document this record authenticates.");
        expect(await p.isHidden("#original")).toBe(true);
        expect(await check(paths.changed, "mismatch")).toBe(
          "No match: this PDF was signed with docverify, but changed after signing (something was added to it afterwards), so it is no longer the signed document.",
        );
        expect(await check(paths.other, "match")).toBe(
          "Match: this PDF was signed with docverify under another record (0190f5a3-7c1e-7d2a-9b4c-000000000002); its original document is the document this record authenticates.",
        );
        expect(await p.isHidden("#original")).toBe(false);
        const wrong = await check(paths.otherDocument, "mismatch");
        expect(await p.isHidden("#original")).toBe(true);
        expect(wrong).toStartWith("No match: this is a PDF signed with docverify, but its original document is not the document of this record. The original's hash is sha256:");
      } finally {
        await browser.close();
        await server.stop(true);
      }
    },
    120_000,
  );
});
