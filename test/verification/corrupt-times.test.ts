/**
 * Stored times that verification and the verify page meet (src/lib/formats.ts): one behaviour for
 * both readers of a record. A time that cannot be spelled (a consensus time that is not
 * `seconds.nanoseconds` with nine digits, a year past 9999) is corruption: both refuse to answer,
 * as verification does for an anchored row without consensus time, and neither pads nor echoes it.
 * A time that can be spelled but is wrong (a tampered signed time) is spelled as stored, and
 * verification's recomputed checks fail: signature_invalid.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { records } from "../../src/storage/schema.ts";
import { createVerifier } from "../../src/verification/verify.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { HASH, harness, type Harness } from "../records/fixtures.ts";
import { sqliteStore } from "../../src/storage/store.ts";

let h: Harness;
beforeAll(() => {
  h = harness();
});
afterAll(cleanup);

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };

let n = 0;

/** An anchored organisation-signed record created through the API, and a verifier over the same database. */
async function anchoredRecord() {
  const docHash = HASH(`corrupt times ${++n}`);
  const res = await h.create(await h.org(), { originalDocHash: docHash });
  expect(res.status).toBe(201);
  const { recordId } = (await res.json()) as { recordId: string };
  h.markAnchored(recordId, 7);
  const verifier = createVerifier({ ...verificationDrivers(sqliteStore(h.core.db)), signer: h.core.signer, clock: h.clock, links });
  expect(verifier.verify({ docHash, tier: "public" }).verdict).toBe("verified_org");
  const set = (values: Partial<typeof records.$inferInsert>) => h.core.db.update(records).set(values).where(eq(records.id, recordId)).run();
  return { recordId, docHash, verifier, set };
}

describe("a stored consensus time that cannot be spelled", () => {
  for (const corrupt of ["1768469403.42", "1768469403", "1768469403.0000000420", "1768469403.000000042 ", "garbage", "", "253402300800.000000000"]) {
    test(`${JSON.stringify(corrupt)}: verification and the verify page both refuse to answer (500); the text is neither padded nor echoed`, async () => {
      const { recordId, docHash, verifier, set } = await anchoredRecord();
      set({ consensusAt: corrupt });
      expect(() => verifier.verify({ docHash, tier: "public" })).toThrow();
      expect(() => verifier.verify({ docHash, tier: "organisation" })).toThrow();
      await expect(h.records.publicRecord(recordId)).rejects.toThrow();
      const res = await h.request(`/verify/${recordId}`);
      expect(res.status).toBe(500);
      const body = await res.text();
      if (corrupt.trim() !== "") expect(body).not.toContain(corrupt.trim());
      expect(body).not.toContain("1768469403.420000000");
      expect(body).not.toContain("09:30:03.42");
    });
  }

  test("the same record with its consensus time restored answers again", async () => {
    const { recordId, docHash, verifier, set } = await anchoredRecord();
    set({ consensusAt: "1768469403.42" });
    expect(() => verifier.verify({ docHash, tier: "public" })).toThrow();
    set({ consensusAt: "1768469403.420000000" });
    const match = verifier.verify({ docHash, tier: "public" }).matches[0]!;
    expect(match.anchor.consensusAt).toBe("2026-01-15T09:30:03.420000000Z");
    expect((await h.records.publicRecord(recordId))!.anchor.consensusAt).toBe("2026-01-15T09:30:03.420000000Z");
  });
});

describe("a stored signed or revocation time", () => {
  test("tampered but spellable (before 1970): spelled as stored by both; verification's checks fail", async () => {
    const { recordId, docHash, verifier, set } = await anchoredRecord();
    const tampered = -1_057_125_951; // what flipping a bit of the signed time with JavaScript's `^` gives
    set({ signedAtMs: tampered });
    const result = verifier.verify({ docHash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    expect(result.matches[0]!.checksPerformed).toEqual({ hashBinding: "fail", userSignature: "fail", serverSeal: "fail", anchorStatus: "anchored" });
    expect(result.matches[0]!.recordIssuedAt).toBe("1969-12-19T18:21:14.049Z");
    expect(new Date(tampered).toISOString()).toBe("1969-12-19T18:21:14.049Z");
    expect((await h.records.publicRecord(recordId))!.authenticatedAt).toBe("1969-12-19T18:21:14.049Z");
    expect((await h.request(`/verify/${recordId}`)).status).toBe(200);
  });

  test("past 9999 (RFC 3339 cannot write it): both refuse to answer", async () => {
    const { recordId, docHash, verifier, set } = await anchoredRecord();
    set({ signedAtMs: 253402300800000 });
    expect(() => verifier.verify({ docHash, tier: "public" })).toThrow(RangeError);
    await expect(h.records.publicRecord(recordId)).rejects.toThrow(RangeError);
    expect((await h.request(`/verify/${recordId}`)).status).toBe(500);
  });

  test("a revocation time past 9999: both refuse to answer", async () => {
    const { recordId, docHash, verifier, set } = await anchoredRecord();
    set({ revokedAt: 253402300800000, revocationReason: "OTHER" });
    expect(() => verifier.verify({ docHash, tier: "public" })).toThrow(RangeError);
    await expect(h.records.publicRecord(recordId)).rejects.toThrow(RangeError);
  });
});
