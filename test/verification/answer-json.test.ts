/**
 * The verification answer written as JSON text (src/verification/answer-json.ts) is exactly what
 * JSON.stringify makes of the same answer as an object: over every kind of match and both tiers.
 */
import { afterAll, expect, test } from "bun:test";
import { createAnswerWriter, type AnswerFields } from "../../src/verification/answer-json.ts";
import { createVerifier } from "../../src/verification/verify.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

afterAll(cleanup);

test("answerJson and matchJson write what JSON.stringify writes, key for key, for every kind of match, tier and optional field", async () => {
  const fx = createRecordsFixture();
  const acme = await fx.createOrg('Acme "Quoted" \\ Ltd \u2028');
  const person = fx.createPerson();
  const verifier = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `https://mirror.test/api/v1/topics/${t}/messages/${n}` } });
  const { answerJson, matchJson } = createAnswerWriter();
  const hashes: string[] = [];
  const add = (f: (h: string) => unknown) => {
    const h = docHashOf(`answer ${hashes.length}`);
    f(h);
    hashes.push(h);
  };
  add((h) => fx.addOrgRecord(acme, { docHash: h }));
  add((h) => fx.addPersonRecord(person, { docHash: h, hint: 'Alice "A." <b>', orgId: acme.id }));
  add((h) => fx.addOrgRecord(acme, { docHash: h, revoked: { reason: "SUPERSEDED" } }));
  add((h) => fx.addOrgRecord(acme, { docHash: h, anchorState: "accepted" }));
  add((h) => fx.tamper.seal(fx.addOrgRecord(acme, { docHash: h })));
  add((h) => (fx.addOrgRecord(acme, { docHash: h }), fx.addPersonRecord(person, { docHash: h })));
  add(() => undefined);
  let seen = 0;
  for (const tier of ["public", "organisation"] as const) {
    for (const h of hashes) {
      const result = verifier.verify({ docHash: h, tier });
      for (const m of result.matches) expect(matchJson(m)).toBe(JSON.stringify(m));
      const variants: AnswerFields[] = [
        { verdict: result.verdict, disclosureTier: "public", assuranceLevel: "basic", mode: "partial", originalDocHash: h, verifiedAt: "2026-01-15T09:30:00.123Z", matches: result.matches },
        {
          verificationId: "01900000-0000-7000-8000-000000000001",
          verdict: result.verdict,
          disclosureTier: "organisation",
          assuranceLevel: "basic",
          mode: "partial",
          environment: "live",
          originalDocHash: h,
          verifiedAt: "2026-01-15T09:30:00.123Z",
          reference: 'ref "quoted" \\ \u0007? no: \u00e9 \ud83d\ude42',
          matches: result.matches,
          ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
        },
      ];
      for (const v of variants) {
        expect(answerJson(v)).toBe(JSON.stringify(v));
        seen++;
      }
    }
  }
  expect(seen).toBe(28);
});
