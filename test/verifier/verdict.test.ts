/**
 * The verdict once the ledger was consulted (src/verifier/verify.ts, `verdictOf`): the rules of
 * docs/receipts.md §4.2 in their order, the first that applies wins, as a pure function of what
 * the checks found. verify.test.ts reaches each verdict through whole receipts and mirror nodes.
 */
import { expect, test } from "bun:test";
import { verdictOf } from "../../src/verifier/verify.ts";

const ALL_GOOD = {
  mirrorsOk: true,
  inclusionOk: true,
  disagree: false,
  recordAbsent: false,
  ledgerMismatch: false,
  commitmentsOk: true,
  announcementOk: true,
  submitKeyOk: true,
  windowOk: true,
  identityMismatch: false,
  revoked: false,
  signerType: "org" as const,
};

test("verified_org for an organisation's record, verified for a person's, when every check holds", () => {
  expect(verdictOf(ALL_GOOD)).toBe("verified_org");
  expect(verdictOf({ ...ALL_GOOD, signerType: "user" })).toBe("verified");
});

test("each rule in its order: unverifiable, inconsistent_mirrors, no_record, signature_invalid, revoked", () => {
  const worst = { ...ALL_GOOD, mirrorsOk: false, disagree: true, recordAbsent: true, ledgerMismatch: true, revoked: true };
  expect(verdictOf(worst)).toBe("unverifiable");
  expect(verdictOf({ ...worst, mirrorsOk: true })).toBe("inconsistent_mirrors");
  expect(verdictOf({ ...worst, mirrorsOk: true, disagree: false })).toBe("no_record");
  expect(verdictOf({ ...worst, mirrorsOk: true, disagree: false, recordAbsent: false })).toBe("signature_invalid");
  expect(verdictOf({ ...worst, mirrorsOk: true, disagree: false, recordAbsent: false, ledgerMismatch: false })).toBe("revoked");
  expect(verdictOf({ ...worst, inclusionOk: false })).toBe("unverifiable");
});

test("signature_invalid for any binding that fails on the ledger, a batched record's inclusion proof, a key used outside its window and the identity's mismatch included", () => {
  for (const broken of [{ commitmentsOk: false }, { inclusionOk: false }, { announcementOk: false }, { submitKeyOk: false }, { windowOk: false }, { identityMismatch: true }, { ledgerMismatch: true }]) {
    expect(verdictOf({ ...ALL_GOOD, ...broken, revoked: true })).toBe("signature_invalid");
  }
});
