/**
 * verifyReceipt's key windows and compromises (docs/receipts.md §4.1, "Key windows and
 * compromise") case by case, against two mirror nodes serving a topic with the key's life on it
 * (lifecycle.ts, the messages written byte by byte): which announcements end a window and which do
 * not (a seal rotation does, a repeated announcement of the same pair, another organisation's or
 * another person's does not), a topic older than announcements, a person's key, where the scan
 * starts, which compromise counts (this key's, wherever on the topic, since at or before the
 * signed time, an unreadable since), the earliest revocation winning, a trust file's windows.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { parseReceipt, parseTrustFile, verifyReceipt, type Report, type VerifyOptions } from "../../src/verifier/index.ts";
import { encodeRevocationMessage } from "../../src/records/messages.ts";
import { cleanup } from "../support/env.ts";
import { compromiseMessage, keyMessage, lifecycle, mirrorsFor, OTHER_FINGERPRINT, personKeyMessage, type Lifecycle, type LifecycleOptions } from "./lifecycle.ts";

afterAll(cleanup);

async function verify(l: Lifecycle, options: Partial<VerifyOptions> = {}): Promise<Report> {
  const mirrors = mirrorsFor(l);
  return verifyReceipt(parseReceipt(JSON.stringify(l.receipt)), { docHash: l.record.docHash, mirrors: [...mirrors.urls], builtinMirrors: false, timeoutMs: 5_000, ...options });
}
const check = (r: Report, name: string) => r.checks.find((c) => c.name === name)!;
const failed = (r: Report) => r.checks.filter((c) => c.status === "fail").map((c) => c.name);
const outcome = async (o: LifecycleOptions) => {
  const r = await verify(lifecycle(o));
  return { verdict: r.verdict, failed: failed(r) };
};
const revocationOf = (recordId: string, at: number) => encodeRevocationMessage({ recordId, reason: "SUPERSEDED", revokedAtMs: at });

describe("keyWindow: which announcements end a key's window", () => {
  test("a seal key rotation before the record's message: signature_invalid, naming the other seal key", async () => {
    const l = lifecycle({ before: (x) => [keyMessage(x.claim, x.signerFp, OTHER_FINGERPRINT)] });
    const r = await verify(l);
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["keyWindow"] });
    expect(check(r, "keyWindow").detail).toContain("announces another seal key (5a5a5a5a5a5a5a5a…) for this organisation between the key's announcement #1 and the record's message #3");
  });

  test("the same pair announced again before the record (a change of domain or name): verified_org", async () => {
    expect(await outcome({ before: (x) => [keyMessage({ ...x.claim, name: "Acme Renamed", domain: "acme.example" }, x.signerFp, x.sealFp)] })).toEqual({ verdict: "verified_org", failed: [] });
  });

  test("another organisation's key, a record, a revocation of another record and text that is not JSON before the record: verified_org", async () => {
    expect(
      await outcome({
        before: (x) => [keyMessage({ orgId: randomUUID(), name: "Other" }, OTHER_FINGERPRINT, x.sealFp), revocationOf(randomUUID(), Date.now()), new TextEncoder().encode("not json")],
      }),
    ).toEqual({ verdict: "verified_org", failed: [] });
  });

  test("a person's key announced before an organisation's record does not end the organisation key's window", async () => {
    expect(await outcome({ before: (x) => [personKeyMessage(x.claim.orgId, randomUUID(), OTHER_FINGERPRINT, x.sealFp)] })).toEqual({ verdict: "verified_org", failed: [] });
  });

  test("a receipt carrying the later of two announcements of its pair, the record after both: verified_org, the scan starting at the one carried", async () => {
    const l = lifecycle({ before: (x) => [keyMessage(x.claim, x.signerFp, x.sealFp)], announcementAt: 1 });
    const r = await verify(l);
    expect(r.verdict).toBe("verified_org");
    expect(check(r, "keyWindow").evidence).toMatchObject({ announcementSequenceNumber: 2, recordSequenceNumber: 3, scannedFrom: "message #2" });
  });

  test("a replacement after the record and then a compromise of the new key: verified_org (neither is this key's)", async () => {
    expect(await outcome({ after: (x) => [keyMessage(x.claim, OTHER_FINGERPRINT, x.sealFp, x.signerFp), compromiseMessage(x.claim.orgId, OTHER_FINGERPRINT, x.signedAt)] })).toEqual({ verdict: "verified_org", failed: [] });
  });
});

describe("the organisation's claim announced again after the record", () => {
  test("the same pair announced again with a domain after the record: the identity's claim is the latest (its domain and name), the receipt's announcement still the one before the record", async () => {
    const l = lifecycle({ after: (x) => [keyMessage({ ...x.claim, name: "Acme Renamed", domain: "acme.example" }, x.signerFp, x.sealFp)] });
    const r = await verify(l, { lookupDomain: false });
    expect(r.verdict).toBe("verified_org");
    expect(r.identity).toMatchObject({ status: "unconfirmed", claimedName: "Acme Renamed", claimedDomain: "acme.example" });
    expect(check(r, "identity").evidence).toMatchObject({ claimAnnouncedAgainAt: 3 });
  });

  test("announced again before the record, the receipt carrying the earlier: the claim is the later one too", async () => {
    const r = await verify(lifecycle({ before: (x) => [keyMessage({ ...x.claim, domain: "acme.example" }, x.signerFp, x.sealFp)] }), { lookupDomain: false });
    expect(r.identity).toMatchObject({ claimedDomain: "acme.example" });
  });
});

describe("keyWindow: a topic older than announcements (the announcement after the record)", () => {
  test("the key's first announcement after the record, nothing else announced: verified_org, scanned from the topic's first message", async () => {
    const l = lifecycle({ announceAfterRecord: true, before: () => [new TextEncoder().encode("an older record")] });
    const mirrors = mirrorsFor(l);
    const r = await verifyReceipt(parseReceipt(JSON.stringify(l.receipt)), { docHash: l.record.docHash, mirrors: [...mirrors.urls], builtinMirrors: false, timeoutMs: 5_000 });
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "verified_org", failed: [] });
    expect(check(r, "keyWindow").evidence).toMatchObject({ announcementSequenceNumber: 3, recordSequenceNumber: 2, scannedFrom: "the topic's first message" });
    expect(mirrors.requests.some((q) => q.includes("/messages?timestamp=gt:0.000000000&"))).toBe(true);
  });

  test("another key of the organisation announced before the record, this key's announcement after it: signature_invalid", async () => {
    const r = await verify(lifecycle({ announceAfterRecord: true, before: (x) => [keyMessage(x.claim, OTHER_FINGERPRINT, x.sealFp)] }));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["keyWindow"] });
    expect(check(r, "keyWindow").detail).toContain("before the key's announcement #3");
  });
});

describe("keyWindow and keyCompromise for a person's key", () => {
  const personId = randomUUID();

  test("the same person's new key announced before the record: signature_invalid", async () => {
    const r = await verify(lifecycle({ personId, before: (x) => [personKeyMessage(x.claim.orgId, personId, OTHER_FINGERPRINT, x.sealFp, x.signerFp)] }));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["keyWindow"] });
    expect(check(r, "keyWindow").detail).toContain("for this person");
  });

  test("another person's key and the organisation's key rotated before the record: verified", async () => {
    expect(
      await outcome({ personId, before: (x) => [personKeyMessage(x.claim.orgId, randomUUID(), OTHER_FINGERPRINT, x.sealFp), keyMessage(x.claim, OTHER_FINGERPRINT, x.sealFp, "ab".repeat(32))] }),
    ).toEqual({ verdict: "verified", failed: [] });
  });

  test("a compromise of the person's key (with personId) since the signed time: revoked", async () => {
    const r = await verify(lifecycle({ personId, after: (x) => [compromiseMessage(x.claim.orgId, x.signerFp, x.signedAt, personId)] }));
    expect(r.verdict).toBe("revoked");
    expect(r.revocation?.reason).toBe("KEY_COMPROMISE");
  });
});

describe("keyCompromise: which compromise counts", () => {
  test("a compromise anchored before the record's message, since before its signed time: revoked (anywhere from the announcement on)", async () => {
    const r = await verify(lifecycle({ before: (x) => [compromiseMessage(x.claim.orgId, x.signerFp, new Date(Date.parse(x.signedAt) - 1000).toISOString())] }));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "revoked", failed: ["keyCompromise"] });
    expect(r.revocation).toMatchObject({ reason: "KEY_COMPROMISE", sequenceNumber: 2 });
  });

  test("a compromise of another key: verified_org", async () => {
    expect(await outcome({ after: (x) => [compromiseMessage(x.claim.orgId, OTHER_FINGERPRINT, x.signedAt)] })).toEqual({ verdict: "verified_org", failed: [] });
  });

  test("a compromise whose since cannot be read covers every record: revoked", async () => {
    const r = await verify(lifecycle({ after: (x) => [compromiseMessage(x.claim.orgId, x.signerFp, "yesterday")] }));
    expect(r.verdict).toBe("revoked");
    expect(check(r, "keyCompromise").detail).toContain("since an unreadable time");
  });

  test("two compromises, the later covering: the one that covers is reported; the other in the evidence", async () => {
    const r = await verify(lifecycle({ after: (x) => [compromiseMessage(x.claim.orgId, x.signerFp, new Date(Date.parse(x.signedAt) + 5).toISOString()), compromiseMessage(x.claim.orgId, x.signerFp, x.signedAt)] }));
    expect(r.revocation).toMatchObject({ reason: "KEY_COMPROMISE", sequenceNumber: 4 });
    expect((check(r, "keyCompromise").evidence!.compromises as unknown[]).length).toBe(2);
  });
});

describe("the receipt's revocation is a hint", () => {
  test("a receipt naming a KEY_COMPROMISE the ledger lacks: verified_org, the claim reported under keyCompromise only", async () => {
    const l = lifecycle();
    l.receipt.revocation = {
      reason: "KEY_COMPROMISE",
      revokedAt: "2026-01-16T09:30:00.123Z",
      anchor: { network: "testnet", topicId: l.topic.topicId, sequenceNumber: 9, consensusAt: "1999999999.000000001", transactionId: "0.0.2@1999999998.000000001", message: l.receipt.anchor.message, runningHash: l.receipt.anchor.runningHash, inclusion: null },
    };
    const r = await verify(l);
    expect({ verdict: r.verdict, revocation: r.revocation }).toEqual({ verdict: "verified_org", revocation: null });
    expect(check(r, "keyCompromise").detail).toContain("the receipt names one; the ledger does not have it");
    expect(check(r, "keyCompromise").evidence!.receiptRevocation).toEqual({ revokedAt: "2026-01-16T09:30:00.123Z", sequenceNumber: 9 });
    expect(check(r, "revocationScan").detail).not.toContain("the receipt names one");
  });
});

describe("the earliest revocation wins", () => {
  test("the record revoked individually, then its key's compromise: revoked, reason SUPERSEDED, both checks failing", async () => {
    const r = await verify(lifecycle({ after: (x) => [revocationOf(x.recordId, Date.now()), compromiseMessage(x.claim.orgId, x.signerFp, x.signedAt)] }));
    expect({ verdict: r.verdict, reason: r.revocation?.reason, seq: r.revocation?.sequenceNumber, failed: failed(r) }).toEqual({ verdict: "revoked", reason: "SUPERSEDED", seq: 3, failed: ["revocationScan", "keyCompromise"] });
  });

  test("the key's compromise, then the record's own revocation: reason KEY_COMPROMISE", async () => {
    const r = await verify(lifecycle({ after: (x) => [compromiseMessage(x.claim.orgId, x.signerFp, x.signedAt), revocationOf(x.recordId, Date.now())] }));
    expect({ reason: r.revocation?.reason, seq: r.revocation?.sequenceNumber }).toEqual({ reason: "KEY_COMPROMISE", seq: 3 });
  });

  test("a revocation of the record before its own message (impossible on a real topic) revokes nothing", async () => {
    expect(await outcome({ before: (x) => [revocationOf(x.recordId, Date.now())] })).toEqual({ verdict: "verified_org", failed: [] });
  });
});

describe("a trust file's key windows", () => {
  const trustFor = (l: Lifecycle, keys: Record<string, unknown>[]) =>
    parseTrustFile(JSON.stringify({ v: 1, networks: {}, organisations: [{ orgId: l.claim.orgId, name: "Acme Lifecycle Ltd", domain: null, network: "testnet", topicId: l.topic.topicId, keys }] }));

  test("a trust file from before windows (the key alone): confirmed", async () => {
    const l = lifecycle();
    const r = await verify(l, { trust: trustFor(l, [{ algorithm: "ML-DSA-65", fingerprint: l.signerFp }]) });
    expect({ verdict: r.verdict, identity: r.identity?.status, method: r.identity?.method }).toEqual({ verdict: "verified_org", identity: "confirmed", method: "trust-file" });
  });

  test("several keys, this one pinned from #1 and replaced by #40: confirmed for the record at #2", async () => {
    const l = lifecycle();
    const keys = [
      { algorithm: "ML-DSA-65", fingerprint: l.signerFp, announcedAt: l.announced.consensusAt, sequenceNumber: 1, replacedAt: "1999999999.000000001", replacedBySequenceNumber: 40 },
      { algorithm: "ML-DSA-65", fingerprint: OTHER_FINGERPRINT, announcedAt: "1999999999.000000001", sequenceNumber: 40 },
    ];
    const r = await verify(l, { trust: trustFor(l, keys) });
    expect({ verdict: r.verdict, identity: r.identity?.status }).toEqual({ verdict: "verified_org", identity: "confirmed" });
  });

  test("the record after the pinned key's replacement: mismatch, signature_invalid", async () => {
    const l = lifecycle({ before: () => [new TextEncoder().encode("a"), new TextEncoder().encode("b")] });
    const keys = [
      { algorithm: "ML-DSA-65", fingerprint: OTHER_FINGERPRINT, sequenceNumber: 2 },
      { algorithm: "ML-DSA-65", fingerprint: l.signerFp, sequenceNumber: 1, replacedBySequenceNumber: 2 },
    ];
    const r = await verify(l, { trust: trustFor(l, keys) });
    expect({ verdict: r.verdict, identity: r.identity?.status }).toEqual({ verdict: "signature_invalid", identity: "mismatch" });
    expect(r.identity?.detail).toContain("this key was replaced by message #2, before the record's message #4");
  });

  test("the record before the pinned key's own announcement, which replaced another pinned key: mismatch; a key that replaced none has no lower bound", async () => {
    const l = lifecycle();
    const keys = [
      { algorithm: "ML-DSA-65", fingerprint: OTHER_FINGERPRINT, sequenceNumber: 1, replacedBySequenceNumber: 9 },
      { algorithm: "ML-DSA-65", fingerprint: l.signerFp, sequenceNumber: 9 },
    ];
    const r = await verify(l, { trust: trustFor(l, keys) });
    expect(r.identity?.status).toBe("mismatch");
    expect(r.identity?.detail).toContain("first announced by message #9, after the record's message #2, replacing another key in force there");
    const first = await verify(l, { trust: trustFor(l, [{ algorithm: "ML-DSA-65", fingerprint: l.signerFp, sequenceNumber: 9 }]) });
    expect(first.identity?.status).toBe("confirmed");
  });
});

