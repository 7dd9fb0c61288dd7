/**
 * POST /v1/records (docs/records.md §1): the Record, idempotency (including
 * concurrent first calls and abandoned records), durability, the signatures (checked with both
 * implementations), validation with `details` naming the field, 413 and the 503 causes.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { encodeRecordPayload, encodeSealPayload, keyFingerprint, verifyWithNoble, type Algorithm } from "../../src/crypto/index.ts";
import { decodeLedgerMessage, sha256Text } from "../../src/records/messages.ts";
import { SEAL_KEY_META, SEAL_KEY_PURPOSE } from "../../src/records/seal-key.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { otherConnection, sqliteOnly, sqlRow } from "../support/engine.ts";
import { engineHarness, HASH, harness, T0 } from "./fixtures.ts";

// Each test makes its own harness: closed after it, so a PostgreSQL run holds a few connections at a time.
afterEach(cleanup);

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface RecordBody {
  recordId: string;
  originalDocHash: string;
  authenticatedAt: string;
  anchorState: string;
  verifyUrl: string;
  anchor: { topicId: string; transactionId: string; hashscanUrl: string };
  retryAfterSeconds?: number;
}
interface RecordRow {
  signer_fingerprint: Uint8Array;
  signature: Uint8Array;
  seal_fingerprint: Uint8Array;
  seal_signature: Uint8Array;
}
interface KeyRow {
  purpose: string;
  algorithm: string;
  public_key: Uint8Array;
}
interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, string> };
}

describe("POST /v1/records", () => {
  test("first call: 201 with the Record; the record and its message, a leaf of the organisation's open batch whose transaction it names, written together", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const res = await h.create(org, { originalDocHash: HASH(1), filename: "Résumé.pdf" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    const body = (await res.json()) as RecordBody;
    expect(Object.keys(body).sort()).toEqual(["anchor", "anchorState", "authenticatedAt", "originalDocHash", "recordId", "retryAfterSeconds", "verifyUrl"]);
    expect(body.recordId).toMatch(UUID7);
    expect(body.originalDocHash).toBe(HASH(1));
    expect(body.authenticatedAt).toBe("2026-01-15T09:30:00.123Z");
    expect(Date.parse(body.authenticatedAt)).toBe(T0);
    expect(body.anchorState).toBe("pending");
    expect(body.verifyUrl).toBe(`${h.config.publicUrl}/verify/${body.recordId}`);
    // The first id is the leaf's, the second the batch's it opened: the record names the batch's.
    expect(h.ledger.issued).toHaveLength(2);
    expect(body.anchor).toEqual({
      topicId: "0.0.1001",
      transactionId: h.ledger.issued[1]!,
      hashscanUrl: `http://ledger.test/transaction/${encodeURIComponent(h.ledger.issued[1]!)}`,
    });
    expect(body.retryAfterSeconds).toBe(5);

    const row = await h.row("SELECT * FROM records WHERE id = ?", body.recordId) as Record<string, unknown>;
    expect(row).toMatchObject({
      org_id: org,
      signer_type: "org",
      kind: "record_only",
      doc_hash: HASH(1),
      filename: "Résumé.pdf",
      signed_at_ms: T0,
      anchor_state: "pending",
      topic_id: "0.0.1001",
      transaction_id: body.anchor.transactionId,
      revoked_at: null,
    });
    const leaf = await h.row("SELECT * FROM ledger_transactions WHERE transaction_id = ?", h.ledger.issued[0]!) as Record<string, unknown>;
    expect(leaf).toMatchObject({
      kind: "record_message",
      org_id: org,
      record_id: body.recordId,
      topic_id: "0.0.1001",
      signed_bytes: null,
      state: "pending",
      attempts: 0,
      batch_leaf: 1,
      batch_transaction_id: body.anchor.transactionId,
      leaf_index: null,
    });
    const batch = await h.row("SELECT * FROM ledger_transactions WHERE transaction_id = ?", body.anchor.transactionId) as Record<string, unknown>;
    expect(batch).toMatchObject({
      kind: "batch_message",
      org_id: org,
      record_id: null,
      topic_id: "0.0.1001",
      message: null,
      signed_bytes: null,
      valid_start_ms: 1768469400000,
      valid_seconds: 180,
      state: "open",
      attempts: 0,
      batch_leaf: 0,
      batch_size: 1,
      // Its window: DOCVERIFY_BATCH_WINDOW_MS from its first leaf.
      next_attempt_at: T0 + 250,
    });
    expect(h.ledger.wakes).toBe(1);
    expect(h.access.calls).toEqual([{ operation: "records.create", bodyUsed: false }]);
  });

  test("a repeat answers 200 with the same record and writes nothing; a different filename is ignored", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const first = (await (await h.create(org, { originalDocHash: HASH(2), filename: "a.pdf" })).json()) as RecordBody;
    const tables = ["records", "ledger_transactions", "signing_keys", "service_meta", "organisations"];
    const counts = () => Promise.all(tables.map((t) => h.count(t)));
    const before = await counts();
    // Every write to these tables raises the change counter (on SQLite per row, on PostgreSQL per
    // statement): unchanged, nothing was written, not even a row rewritten with its own values.
    const counter = async () => (await h.row("SELECT value FROM change_counter"))!.value;
    const changes = await counter();
    h.clock.advance(60_000);
    const res = await h.create(org, { originalDocHash: HASH(2), filename: "b.pdf" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(first);
    expect(await counts()).toEqual(before);
    expect(await counter()).toBe(changes);
    expect(await h.rows("SELECT filename FROM records")).toEqual([{ filename: "a.pdf" }]);
    expect(h.ledger.wakes).toBe(1);
  });

  test("the same hash is a separate record for another organisation", async () => {
    const h = await engineHarness();
    const a = await h.org("A");
    const b = await h.org("B", "0.0.1002");
    const ra = (await (await h.create(a, { originalDocHash: HASH(3) })).json()) as RecordBody;
    const resB = await h.create(b, { originalDocHash: HASH(3) });
    expect(resB.status).toBe(201);
    const rb = (await resB.json()) as RecordBody;
    expect(rb.recordId).not.toBe(ra.recordId);
    expect(rb.anchor.topicId).toBe("0.0.1002");
  });

  test("orgId and credentialId in the body change nothing", async () => {
    const h = await engineHarness();
    const mine = await h.org("Mine");
    const theirs = await h.org("Theirs", "0.0.1002");
    const res = await h.create(mine, { originalDocHash: HASH(4), orgId: theirs, credentialId: "x", extra: { deep: [1] } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as RecordBody;
    expect(body.anchor.topicId).toBe("0.0.1001");
    expect(await h.row("SELECT org_id FROM records WHERE id = ?", body.recordId)).toEqual({ org_id: mine });
  });

  test("concurrent first calls for one hash create exactly one record", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => h.create(org, { originalDocHash: HASH(5), filename: `copy ${i}.pdf` })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(39);
    const ids = new Set(await Promise.all(responses.map(async (r) => ((await r.json()) as RecordBody).recordId)));
    expect(ids.size).toBe(1);
    expect(await h.count("records")).toBe(1);
    // Its leaf and the batch it opened.
    expect(await h.count("ledger_transactions")).toBe(2);
  });

  test("concurrent calls for different hashes all succeed and share commits", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => h.create(org, { originalDocHash: HASH(`many-${i}`) })));
    expect(responses.map((r) => r.status)).toEqual(Array(30).fill(201));
    expect(await h.count("records")).toBe(30);
    // Thirty leaves, all in one open batch, which every record names.
    expect(await h.count("ledger_transactions")).toBe(31);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as RecordBody[];
    expect(new Set(bodies.map((b) => b.anchor.transactionId)).size).toBe(1);
    expect(await h.row("SELECT batch_size, state FROM ledger_transactions WHERE kind = 'batch_message'")).toEqual({ batch_size: 30, state: "open" });
  });

  test("a record whose anchor was abandoned no longer counts: the next call creates a new one", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const first = (await (await h.create(org, { originalDocHash: HASH(6) })).json()) as RecordBody;
    await h.setAnchorState(first.recordId, "abandoned");
    const res = await h.create(org, { originalDocHash: HASH(6) });
    expect(res.status).toBe(201);
    const second = (await res.json()) as RecordBody;
    expect(second.recordId).not.toBe(first.recordId);
    // And the new one is the active record from then on.
    const again = await h.create(org, { originalDocHash: HASH(6) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as RecordBody).recordId).toBe(second.recordId);
    expect(await h.count("records")).toBe(2);
  });

  test("a repeat of an accepted or anchored record reports its state; retryAfterSeconds only until anchored", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const first = (await (await h.create(org, { originalDocHash: HASH(7) })).json()) as RecordBody;
    await h.setAnchorState(first.recordId, "accepted");
    const accepted = (await (await h.create(org, { originalDocHash: HASH(7) })).json()) as RecordBody;
    expect(accepted.anchorState).toBe("accepted");
    expect(accepted.retryAfterSeconds).toBe(5);
    await h.markAnchored(first.recordId);
    const anchored = (await (await h.create(org, { originalDocHash: HASH(7) })).json()) as RecordBody;
    expect(anchored.anchorState).toBe("anchored");
    expect("retryAfterSeconds" in anchored).toBe(false);
  });

  test("a 201 is durable when it is sent: another connection reads the row", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const res = await h.create(org, { originalDocHash: HASH(8) });
    expect(res.status).toBe(201);
    const { recordId, anchor } = (await res.json()) as RecordBody;
    const other = await otherConnection(h.config);
    expect(await sqlRow(other, "SELECT id FROM records WHERE id = ?", recordId)).toEqual({ id: recordId });
    expect(await sqlRow(other, "SELECT state, batch_size FROM ledger_transactions WHERE transaction_id = ?", anchor.transactionId)).toEqual({ state: "open", batch_size: 1 });
    expect(await sqlRow(other, "SELECT state FROM ledger_transactions WHERE batch_transaction_id = ? AND record_id = ?", anchor.transactionId, recordId)).toEqual({ state: "pending" });
  });

  sqliteOnly("the database file is written with synchronous = FULL", "a SQLite pragma", async () => {
    const h = harness();
    expect(h.core.db.$client.query("PRAGMA synchronous").get()).toEqual({ synchronous: 2 }); // FULL
  });

  test("signatures verify natively and with noble over the documented encodings", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const bodies: RecordBody[] = [];
    for (const n of [9, 10]) bodies.push((await (await h.create(org, { originalDocHash: HASH(n) })).json()) as RecordBody);
    const meta = await h.row("SELECT value FROM service_meta WHERE key = ?", SEAL_KEY_META) as { value: string };
    const sealRow = await h.row("SELECT * FROM signing_keys WHERE fingerprint = ?", Buffer.from(meta.value, "hex")) as Record<string, unknown>;
    expect(sealRow.purpose).toBe(SEAL_KEY_PURPOSE);
    expect(sealRow.sealed_seed).toBeInstanceOf(Uint8Array);
    expect(await h.count("signing_keys")).toBe(2); // the organisation's and the seal key, created once
    for (const body of bodies) {
      const r = (await h.row("SELECT * FROM records WHERE id = ?", body.recordId)) as unknown as RecordRow;
      const orgKey = (await h.row("SELECT * FROM signing_keys WHERE fingerprint = ?", r.signer_fingerprint)) as unknown as KeyRow;
      expect(orgKey.purpose).toBe(`org:${org}`);
      const orgPub = new Uint8Array(orgKey.public_key);
      const algorithm = orgKey.algorithm as Algorithm;
      expect(Buffer.from(keyFingerprint({ algorithm, publicKey: orgPub })).equals(Buffer.from(r.signer_fingerprint))).toBe(true);
      // Recomputed from the response alone plus the key: docs/signing.md §3.3.
      const payload = encodeRecordPayload({
        recordId: body.recordId,
        docHash: body.originalDocHash,
        signedAtMs: Date.parse(body.authenticatedAt),
        signerKeyFingerprint: keyFingerprint({ algorithm, publicKey: orgPub }),
      });
      const signature = new Uint8Array(r.signature);
      expect(h.core.signer.verify(algorithm, orgPub, payload, signature)).toBe(true);
      expect(verifyWithNoble(algorithm, orgPub, payload, signature)).toBe(true);
      const sealPub = new Uint8Array(sealRow.public_key as Uint8Array);
      const sealFp = keyFingerprint({ algorithm: sealRow.algorithm as Algorithm, publicKey: sealPub });
      expect(Buffer.from(sealFp).toString("hex")).toBe(meta.value);
      expect(Buffer.from(r.seal_fingerprint).toString("hex")).toBe(meta.value);
      const sealPayload = encodeSealPayload(payload, signature, sealFp);
      const sealSignature = new Uint8Array(r.seal_signature);
      expect(h.core.signer.verify(sealRow.algorithm as Algorithm, sealPub, sealPayload, sealSignature)).toBe(true);
      expect(verifyWithNoble(sealRow.algorithm as Algorithm, sealPub, sealPayload, sealSignature)).toBe(true);
      // A flipped byte anywhere fails both.
      const bad = payload.slice();
      bad[100]! ^= 1;
      expect(h.core.signer.verify(algorithm, orgPub, bad, signature)).toBe(false);
      expect(verifyWithNoble(algorithm, orgPub, bad, signature)).toBe(false);

      // The ledger message commits to exactly these.
      const tx = await h.row("SELECT message FROM ledger_transactions WHERE record_id = ?", body.recordId) as { message: Uint8Array };
      expect(tx.message.length).toBeLessThanOrEqual(1024);
      expect(decodeLedgerMessage(tx.message)).toEqual({
        v: 1,
        type: "record",
        recordId: body.recordId,
        originalDocHash: body.originalDocHash,
        signedAt: body.authenticatedAt,
        signerPublicKeySha256: sha256Text(orgPub),
        signatureSha256: sha256Text(signature),
        sealSignatureSha256: sha256Text(sealSignature),
      });
      expect(Buffer.from(tx.message).toString()).not.toContain(" ");
    }
  });

  test("the seal key is created once, and two services on one data folder agree on it", async () => {
    const a = await engineHarness();
    const org = await a.org();
    const b = await engineHarness({ sameDatabaseAs: a });
    const [ra, rb] = await Promise.all([a.create(org, { originalDocHash: HASH(11) }), b.create(org, { originalDocHash: HASH(12) })]);
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(await a.count("service_meta WHERE key = 'seal_key_fingerprint'")).toBe(1);
    expect(await a.count("signing_keys WHERE purpose = 'service-seal'")).toBe(1);
    expect(await a.count("(SELECT DISTINCT seal_fingerprint FROM records) AS fingerprints")).toBe(1);
  });

  describe("validation: 400 VALIDATION_FAILED naming the field", () => {
    const cases: [string, unknown, string][] = [
      ["missing hash", {}, "originalDocHash"],
      ["uppercase hex", { originalDocHash: "sha256:" + "AB".repeat(32) }, "originalDocHash"],
      ["bare digest", { originalDocHash: "ab".repeat(32) }, "originalDocHash"],
      ["uppercase prefix", { originalDocHash: "SHA256:" + "ab".repeat(32) }, "originalDocHash"],
      ["short digest", { originalDocHash: "sha256:" + "ab".repeat(31) }, "originalDocHash"],
      ["trailing newline", { originalDocHash: HASH(1) + "\n" }, "originalDocHash"],
      ["hash as a number", { originalDocHash: 12 }, "originalDocHash"],
      ["hash as null", { originalDocHash: null }, "originalDocHash"],
      ["hash as an array", { originalDocHash: [HASH(1)] }, "originalDocHash"],
      ["filename as a number", { originalDocHash: HASH(1), filename: 7 }, "filename"],
      ["filename null", { originalDocHash: HASH(1), filename: null }, "filename"],
      ["filename empty", { originalDocHash: HASH(1), filename: "" }, "filename"],
      ["filename 501 code points", { originalDocHash: HASH(1), filename: "a".repeat(497) + ".pdf" }, "filename"],
      ["filename 501 astral code points", { originalDocHash: HASH(1), filename: "😀".repeat(501) }, "filename"],
      ["filename with NUL", { originalDocHash: HASH(1), filename: "a\u0000.pdf" }, "filename"],
      ["filename with newline", { originalDocHash: HASH(1), filename: "a\n.pdf" }, "filename"],
      ["filename with tab", { originalDocHash: HASH(1), filename: "a\t.pdf" }, "filename"],
      ["filename with DEL", { originalDocHash: HASH(1), filename: "a\u007f.pdf" }, "filename"],
      ["filename with C1 control", { originalDocHash: HASH(1), filename: "a\u0085.pdf" }, "filename"],
      ["filename with bidi override U+202E", { originalDocHash: HASH(1), filename: "invoice\u202Efdp.exe" }, "filename"],
      ["filename with bidi isolate U+2066", { originalDocHash: HASH(1), filename: "a\u2066b.pdf" }, "filename"],
      ["filename with LRM U+200E", { originalDocHash: HASH(1), filename: "a\u200Eb.pdf" }, "filename"],
      ["filename with soft hyphen", { originalDocHash: HASH(1), filename: "con\u00ADtract.pdf" }, "filename"],
      ["filename with zero-width space", { originalDocHash: HASH(1), filename: "con\u200Btract.pdf" }, "filename"],
      ["filename with BOM", { originalDocHash: HASH(1), filename: "\uFEFFcontract.pdf" }, "filename"],
      ["filename with word joiner", { originalDocHash: HASH(1), filename: "a\u2060b.pdf" }, "filename"],
      ["filename with a tag character", { originalDocHash: HASH(1), filename: "a\u{E0041}.pdf" }, "filename"],
      // Characters that show as nothing, or as a space that is not one, though not Cf.
      ...(
        [
          ["Hangul filler U+3164", "\u3164"],
          ["braille blank U+2800", "\u2800"],
          ["Khmer inherent vowel U+17B4", "a\u17B4.pdf"],
          ["Hangul choseong filler U+115F", "\u115F.pdf"],
          ["Hangul jungseong filler U+1160", "a\u1160b.pdf"],
          ["halfwidth Hangul filler U+FFA0", "\uFFA0"],
          ["line separator U+2028", "a\u2028b.pdf"],
          ["paragraph separator U+2029", "a\u2029b.pdf"],
          ["ideographic space U+3000", "a\u3000b.pdf"],
          ["combining grapheme joiner U+034F", "a\u034Fb.pdf"],
          ["only spaces", "   "],
          ["a leading space", " contract.pdf"],
          ["a trailing space", "contract.pdf "],
          ["a trailing no-break space", "contract.pdf\u00A0"],
        ] as const
      ).map(([what, filename]): [string, unknown, string] => [`filename with ${what}`, { originalDocHash: HASH(1), filename }, "filename"]),
    ];
    for (const [name, body, field] of cases) {
      test(name, async () => {
        const h = await engineHarness();
        const org = await h.org();
        const res = await h.create(org, body);
        expect(res.status).toBe(400);
        const err = (await res.json()) as ErrorBody;
        expect(err.error.code).toBe("VALIDATION_FAILED");
        expect(Object.keys(err.error.details ?? {})).toEqual([field]);
        expect(await h.count("records")).toBe(0);
      });
    }

    test("a lone surrogate (written as a JSON escape) is refused", async () => {
      const h = await engineHarness();
      const org = await h.org();
      for (const lone of ["\\ud800", "\\udfff", "a\\ud83d.pdf", "\\ude00x"]) {
        const res = await h.create(org, `{"originalDocHash":"${HASH(1)}","filename":"${lone}"}`);
        expect(res.status).toBe(400);
        expect(((await res.json()) as ErrorBody).error.details).toEqual({ filename: expect.stringContaining("surrogate") });
      }
    });

    test("both fields bad: details names both", async () => {
      const h = await engineHarness();
      const res = await h.create(await h.org(), { originalDocHash: "nope", filename: "\u202E" });
      expect(res.status).toBe(400);
      expect(Object.keys(((await res.json()) as ErrorBody).error.details ?? {}).sort()).toEqual(["filename", "originalDocHash"]);
    });

    for (const [name, raw] of [
      ["not JSON", "{"],
      ["an array", "[]"],
      ["a string", '"x"'],
      ["null", "null"],
      ["empty", ""],
    ] as const) {
      test(`body ${name}`, async () => {
        const h = await engineHarness();
        const res = await h.create(await h.org(), raw);
        expect(res.status).toBe(400);
        expect(((await res.json()) as ErrorBody).error.details).toHaveProperty("body");
      });
    }
  });

  describe("filenames accepted and stored exactly as sent", () => {
    const names: [string, string][] = [
      ["accented", "Résumé.pdf"],
      ["decomposed accents (not normalised)", "Re\u0301sume\u0301.pdf"],
      ["CJK", "契約書.pdf"],
      ["ZWJ emoji sequence", "👩‍👩‍👧‍👦 family.pdf"],
      ["ZWNJ (Persian)", "می\u200Cخواهم.pdf"],
      ["Arabic (right-to-left, no override)", "عقد.pdf"],
      ["quotes and markup", `<b>"it's" & more</b>.pdf`],
      ["500 code points", "a".repeat(496) + ".pdf"],
      ["500 astral code points", "😀".repeat(500)],
      ["spaces inside", "my  signed contract.pdf"],
      ["no-break spaces inside (U+00A0, U+202F)", "Rapport\u00A0annuel\u202F: 2026.pdf"],
      ["an emoji with its variation selector", "\u2764\uFE0F.pdf"],
    ];
    for (const [name, filename] of names) {
      test(name, async () => {
        const h = await engineHarness();
        const res = await h.create(await h.org(), { originalDocHash: HASH(name), filename });
        expect(res.status).toBe(201);
        const { recordId } = (await res.json()) as RecordBody;
        expect(await h.row("SELECT filename FROM records WHERE id = ?", recordId)).toEqual({ filename });
      });
    }

    test("the longest legal body, every character \\u-escaped, fits the 8 KiB limit", async () => {
      const h = await engineHarness();
      const escaped = "\\ud83d\\ude00".repeat(500);
      const raw = `{"originalDocHash":"${HASH(13)}","filename":"${escaped}"}`;
      expect(raw.length).toBeLessThanOrEqual(8 * 1024);
      const res = await h.create(await h.org(), raw);
      expect(res.status).toBe(201);
    });
  });

  test("413 for a body over 8 KiB, after access and before validation", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const res = await h.create(org, { originalDocHash: "bad", filename: "a".repeat(9000) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.code).toBe("PAYLOAD_TOO_LARGE");
    // Access refusals come first, even with an oversized body.
    const unauth = await h.request("/v1/records", { method: "POST", body: "x".repeat(100_000) });
    expect(unauth.status).toBe(401);
    expect(h.access.calls.every((c) => !c.bodyUsed)).toBe(true);
  });

  test("503 with Retry-After while the organisation's topic does not exist; nothing written", async () => {
    const h = await engineHarness();
    const org = await h.org("No topic yet", null);
    const res = await h.create(org, { originalDocHash: HASH(14) });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await res.json()) as ErrorBody).error.code).toBe("SERVICE_UNAVAILABLE");
    expect(await h.count("records") + await h.count("ledger_transactions")).toBe(0);
    // Validation still answers first.
    expect((await h.create(org, { originalDocHash: "x" })).status).toBe(400);
  });

  test("503 with Retry-After while the key store is sealed; a repeat still answers 200", async () => {
    const a = await engineHarness();
    const org = await a.org();
    const first = (await (await a.create(org, { originalDocHash: HASH(15) })).json()) as RecordBody;
    await a.core.close();
    const sealed = await engineHarness({ sameDatabaseAs: a, env: { DOCVERIFY_MASTER_KEY_FILE: join(tempDir(), "missing.key") } });
    expect(sealed.core.signer.canSign).toBe(false);
    const res = await sealed.create(org, { originalDocHash: HASH(16) });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await res.json()) as ErrorBody).error.code).toBe("SERVICE_UNAVAILABLE");
    expect(await sealed.count("records")).toBe(1);
    const repeat = await sealed.create(org, { originalDocHash: HASH(15) });
    expect(repeat.status).toBe(200);
    expect(((await repeat.json()) as RecordBody).recordId).toBe(first.recordId);
  });
});
