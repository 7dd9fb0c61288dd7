/**
 * POST /v1/records/{recordId}/revoke (docs/records.md §2): every refusal in its order,
 * success, the stored decision and its queued ledger message.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { q } from "../../src/storage/store.ts";
import { cleanup } from "../support/env.ts";
import { engineHarness, HASH, T0, type EngineHarness } from "./fixtures.ts";

// Each test makes its own harness: closed after it, so a PostgreSQL run holds a few connections at a time.
afterEach(cleanup);

interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, string> };
}

async function anchoredRecord(h: EngineHarness, org: string, n: number | string = 1): Promise<string> {
  const res = await h.create(org, { originalDocHash: HASH(n) });
  const { recordId } = (await res.json()) as { recordId: string };
  await h.markAnchored(recordId);
  return recordId;
}

/** A person-signed record, as the application would store it (not creatable through the API). */
async function personRecord(h: EngineHarness, orgId: string | null): Promise<string> {
  const id = Bun.randomUUIDv7();
  const key = (await h.row("SELECT fingerprint FROM signing_keys LIMIT 1")) as { fingerprint: Uint8Array };
  await h.core.store.write((tx, t) =>
    q(
      tx.insert(t.records).values({
        id,
        orgId,
        signerType: "user",
        kind: "pdf_embedded",
        signerHint: "J. Doe",
        docHash: HASH(`person-${id}`),
        filename: "signed.pdf",
        signedAtMs: T0,
        signerFingerprint: Buffer.from(key.fingerprint),
        signature: Buffer.from([1]),
        sealFingerprint: Buffer.from(key.fingerprint),
        sealSignature: Buffer.from([1]),
        anchorState: "anchored",
        topicId: "0.0.1001",
        transactionId: `0.0.2@1768469400.${Date.now()}`,
        sequenceNumber: 7,
        consensusAt: "1768469403.000000001",
        createdAt: T0,
      }),
    ),
  );
  return id;
}

async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body;
}

describe("POST /v1/records/{recordId}/revoke", () => {
  test("success: 200 {recordId}; decision stored and its message queued in the same commit, a leaf of the organisation's open batch of revocations, which the revocation names", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const recordId = await anchoredRecord(h, org);
    const wakes = h.ledger.wakes;
    h.clock.advance(90_000);
    const res = await h.revoke(org, recordId, { reason: "KEY_COMPROMISE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ recordId });
    const row = (await h.row("SELECT revoked_at, revocation_reason, revocation_transaction_id, anchor_state FROM records WHERE id = ?", recordId)) as Record<string, unknown>;
    // The leaf's id, then the id of the batch of revocations it opened: the record names the batch's.
    expect(row).toEqual({ revoked_at: T0 + 90_000, revocation_reason: "KEY_COMPROMISE", revocation_transaction_id: h.ledger.issued.at(-1)!, anchor_state: "anchored" });
    const batch = (await h.row("SELECT * FROM ledger_transactions WHERE transaction_id = ?", row.revocation_transaction_id as string)) as Record<string, unknown>;
    expect(batch).toMatchObject({ kind: "batch_message", org_id: org, record_id: null, topic_id: "0.0.1001", state: "open", batch_size: 1, key_fingerprint: null, seal_fingerprint: null, message: null });
    const tx = (await h.row("SELECT * FROM ledger_transactions WHERE transaction_id = ?", h.ledger.issued.at(-2)!)) as Record<string, unknown>;
    expect(tx).toMatchObject({ kind: "revocation_message", org_id: org, record_id: recordId, topic_id: "0.0.1001", state: "pending", attempts: 0, signed_bytes: null, batch_leaf: 1, batch_transaction_id: row.revocation_transaction_id });
    const message = tx.message as Uint8Array;
    expect(message.length).toBeLessThanOrEqual(1024);
    expect(decodeLedgerMessage(message)).toEqual({ v: 1, type: "revocation", recordId, reason: "KEY_COMPROMISE", revokedAt: "2026-01-15T09:31:30.123Z" });
    expect(h.ledger.wakes).toBe(wakes + 1);
    expect(h.access.calls.at(-1)).toEqual({ operation: "records.revoke", bodyUsed: false });
  });

  test("every RevocationReason is accepted", async () => {
    const h = await engineHarness();
    const org = await h.org();
    for (const reason of ["SUPERSEDED", "ERROR_IN_DOCUMENT", "KEY_COMPROMISE", "PRIVILEGE_WITHDRAWN", "AFFILIATION_CHANGED", "CESSATION_OF_OPERATION", "CERTIFICATE_HOLD", "UNSPECIFIED", "OTHER"]) {
      const id = await anchoredRecord(h, org, reason);
      expect((await h.revoke(org, id, { reason })).status).toBe(200);
    }
  });

  test("a second revoke: 409 ALREADY_REVOKED, nothing changes", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const id = await anchoredRecord(h, org);
    expect((await h.revoke(org, id, { reason: "SUPERSEDED" })).status).toBe(200);
    const before = await h.count("ledger_transactions");
    await expectError(await h.revoke(org, id, { reason: "OTHER" }), 409, "ALREADY_REVOKED");
    expect(await h.count("ledger_transactions")).toBe(before);
    expect((await h.row("SELECT revocation_reason FROM records WHERE id = ?", id))).toEqual({ revocation_reason: "SUPERSEDED" });
  });

  test("concurrent revokes: exactly one succeeds", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const id = await anchoredRecord(h, org);
    const responses = await Promise.all(Array.from({ length: 10 }, () => h.revoke(org, id)));
    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(await h.count("ledger_transactions WHERE kind = 'revocation_message'")).toBe(1);
  });

  test("before consensus: 409 ANCHOR_NOT_FINAL for pending and accepted; succeeds once anchored", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH(2) })).json()) as { recordId: string };
    await expectError(await h.revoke(org, recordId), 409, "ANCHOR_NOT_FINAL");
    await h.setAnchorState(recordId, "accepted");
    await expectError(await h.revoke(org, recordId), 409, "ANCHOR_NOT_FINAL");
    await h.markAnchored(recordId);
    expect((await h.revoke(org, recordId)).status).toBe(200);
  });

  test("another key of the same organisation may revoke", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const id = await anchoredRecord(h, org); // created as org/key-1
    const res = await h.revoke(`${org}/key-2`, id);
    expect(res.status).toBe(200);
  });

  test("another organisation's record: 403 NOT_REVOCABLE, nothing changes", async () => {
    const h = await engineHarness();
    const mine = await h.org("Mine");
    const theirs = await h.org("Theirs", "0.0.1002");
    const id = await anchoredRecord(h, theirs);
    const body = await expectError(await h.revoke(mine, id), 403, "NOT_REVOCABLE");
    expect(body.error.message).not.toContain("another");
    // Even when it is already revoked, or not final: the caller learns nothing about it.
    expect((await h.revoke(theirs, id)).status).toBe(200);
    await expectError(await h.revoke(mine, id), 403, "NOT_REVOCABLE");
    const { recordId: pending } = (await (await h.create(theirs, { originalDocHash: HASH(3) })).json()) as { recordId: string };
    await expectError(await h.revoke(mine, pending), 403, "NOT_REVOCABLE");
  });

  test("a person-signed record: 403 NOT_REVOCABLE with the same message as another organisation's", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const other = await h.org("Other", "0.0.1002");
    const person = await personRecord(h, org);
    const personNoOrg = await personRecord(h, null);
    const foreign = await anchoredRecord(h, other);
    const a = await expectError(await h.revoke(org, person), 403, "NOT_REVOCABLE");
    const b = await expectError(await h.revoke(org, personNoOrg), 403, "NOT_REVOCABLE");
    const c = await expectError(await h.revoke(org, foreign), 403, "NOT_REVOCABLE");
    expect(new Set([a.error.message, b.error.message, c.error.message]).size).toBe(1);
  });

  test("unknown, malformed or abandoned id: 404 NOT_FOUND", async () => {
    const h = await engineHarness();
    const org = await h.org();
    const { recordId: abandoned } = (await (await h.create(org, { originalDocHash: HASH(4) })).json()) as { recordId: string };
    await h.setAnchorState(abandoned, "abandoned");
    for (const id of [
      "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
      "not-a-uuid",
      "0190F5A3-7C1E-7D2A-9B4C-3E5F6A7B8C9D",
      "{0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d}",
      "0190f5a37c1e7d2a9b4c3e5f6a7b8c9d",
      "%20",
      abandoned,
    ]) {
      await expectError(await h.revoke(org, id), 404, "NOT_FOUND");
    }
  });

  describe("400 VALIDATION_FAILED with details.reason (before the resource checks)", () => {
    const bodies: [string, unknown][] = [
      ["missing", {}],
      ["lowercase", { reason: "superseded" }],
      ["unknown", { reason: "BORED" }],
      ["a number", { reason: 1 }],
      ["null", { reason: null }],
      ["an array", { reason: ["SUPERSEDED"] }],
    ];
    for (const [name, body] of bodies) {
      test(name, async () => {
        const h = await engineHarness();
        const org = await h.org();
        const id = await anchoredRecord(h, org);
        const res = await h.revoke(org, id, body);
        const err = await expectError(res, 400, "VALIDATION_FAILED");
        expect(Object.keys(err.error.details ?? {})).toEqual(["reason"]);
        expect((await h.row("SELECT revoked_at FROM records WHERE id = ?", id))).toEqual({ revoked_at: null });
      });
    }

    test("a bad reason with an unknown or malformed id is a 400, not a 404", async () => {
      const h = await engineHarness();
      const org = await h.org();
      await expectError(await h.revoke(org, "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", { reason: "NOPE" }), 400, "VALIDATION_FAILED");
      await expectError(await h.revoke(org, "garbage", {}), 400, "VALIDATION_FAILED");
    });

    test("body not a JSON object: details.body", async () => {
      const h = await engineHarness();
      const org = await h.org();
      for (const raw of ["", "[]", "nope", '"SUPERSEDED"']) {
        const err = await expectError(await h.revoke(org, "garbage", raw), 400, "VALIDATION_FAILED");
        expect(err.error.details).toHaveProperty("body");
      }
    });
  });

  test("413 for a body over 4 KiB, before validation and the resource", async () => {
    const h = await engineHarness();
    const org = await h.org();
    await expectError(await h.revoke(org, "garbage", { reason: "SUPERSEDED", pad: "x".repeat(4200) }), 413, "PAYLOAD_TOO_LARGE");
  });

  test("access answers first: without a credential 401 whatever the id and body", async () => {
    const h = await engineHarness();
    const res = await h.request("/v1/records/garbage/revoke", { method: "POST", body: "x".repeat(10_000) });
    await expectError(res, 401, "UNAUTHENTICATED");
    expect(h.access.calls).toEqual([{ operation: "records.revoke", bodyUsed: false }]);
  });

  test("after revocation the organisation holds no active record for the hash: a new create answers 201 with a new record", async () => {
    // Idempotency holds while the organisation holds an *active* record (docs/records.md §1).
    // Revocation is permanent for the revoked record, which stays visible; re-authenticating (for
    // instance after a CERTIFICATE_HOLD is lifted) is a new record, and verification then reports
    // the active one first.
    const h = await engineHarness();
    const org = await h.org();
    const id = await anchoredRecord(h, org, 9);
    expect((await h.revoke(org, id)).status).toBe(200);
    const res = await h.create(org, { originalDocHash: HASH(9) });
    expect(res.status).toBe(201);
    const fresh = ((await res.json()) as { recordId: string }).recordId;
    expect(fresh).not.toBe(id);
    // and the new record is now the one a repeat returns
    const again = await h.create(org, { originalDocHash: HASH(9) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { recordId: string }).recordId).toBe(fresh);
  });
});
