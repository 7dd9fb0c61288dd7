/**
 * A verification's answer as JSON text, written field by field: the response is serialised
 * without JSON.stringify walking an object graph per request (docs/benchmarks.md "How the figures
 * moved"). The text is exactly
 * `JSON.stringify` of the object the route would build, key for key in the same order; a test
 * compares the two over every kind of match. Every string that comes from storage or the caller
 * goes through JSON.stringify, so nothing is ever emitted unescaped.
 */
import { jsonString } from "../lib/json.ts";
import type { Match, Verdict } from "./types.ts";

/** A string (through jsonString) or a number, as JSON. */
const q = (v: string | number): string => (typeof v === "string" ? jsonString(v) : JSON.stringify(v));

function writeMatch(m: Match): string {
  let out = `{"recordId":${q(m.recordId)},"kind":${q(m.kind)},"status":${q(m.status)},"recordIssuedAt":${q(m.recordIssuedAt)},"signerType":${q(m.signerType)},"signerStanding":${q(m.signerStanding)}`;
  if (m.signerHint !== undefined) out += `,"signerHint":${q(m.signerHint)}`;
  if (m.signerOrg !== undefined) out += `,"signerOrg":${q(m.signerOrg)}`;
  if (m.revocation !== undefined) out += `,"revocation":{"reason":${q(m.revocation.reason)},"revokedAt":${q(m.revocation.revokedAt)}}`;
  const c = m.checksPerformed;
  const a = m.anchor;
  return (
    out +
    `,"checksPerformed":{"hashBinding":${q(c.hashBinding)},"userSignature":${q(c.userSignature)},"serverSeal":${q(c.serverSeal)},"anchorStatus":${q(c.anchorStatus)}}` +
    `,"anchor":{"topicId":${q(a.topicId)},"transactionId":${q(a.transactionId)},"sequenceNumber":${q(a.sequenceNumber)},"consensusAt":${q(a.consensusAt)},"mirrorNodeUrl":${q(a.mirrorNodeUrl)}}}`
  );
}

export interface AnswerFields {
  readonly verificationId?: string;
  readonly verdict: Verdict;
  readonly disclosureTier: "public" | "organisation";
  readonly assuranceLevel: string;
  readonly mode: string;
  readonly environment?: string;
  readonly originalDocHash: string;
  readonly verifiedAt: string;
  readonly reference?: string;
  readonly matches: readonly Match[];
  readonly retryAfterSeconds?: number;
}

/** The answer's text, each match's kept by match object: one per verifier (verify.ts `answerJson`). */
export interface AnswerWriter {
  /** `JSON.stringify(match)`, for a Match as match.ts shapes it. */
  matchJson(m: Match): string;
  /** `JSON.stringify(answer)` for an answer whose keys are in the order of `AnswerFields` (absent ones left out). */
  answerJson(f: AnswerFields): string;
}

export function createAnswerWriter(): AnswerWriter {
  /**
   * Each match's text, by match object: the verifier hands out the same Match object again only for
   * identical inputs (match.ts `createMatchShaper`), and nothing changes a Match once shaped.
   */
  const matchTexts = new WeakMap<Match, string>();
  function matchJson(m: Match): string {
    let text = matchTexts.get(m);
    if (text === undefined) matchTexts.set(m, (text = writeMatch(m)));
    return text;
  }
  return {
    matchJson,
    answerJson(f) {
      let out = "{";
      if (f.verificationId !== undefined) out += `"verificationId":${q(f.verificationId)},`;
      out += `"verdict":${q(f.verdict)},"disclosureTier":${q(f.disclosureTier)},"assuranceLevel":${q(f.assuranceLevel)},"mode":${q(f.mode)}`;
      if (f.environment !== undefined) out += `,"environment":${q(f.environment)}`;
      out += `,"originalDocHash":${q(f.originalDocHash)},"verifiedAt":${q(f.verifiedAt)}`;
      if (f.reference !== undefined) out += `,"reference":${q(f.reference)}`;
      out += `,"matches":[`;
      for (let i = 0; i < f.matches.length; i++) out += (i === 0 ? "" : ",") + matchJson(f.matches[i]!);
      out += "]";
      if (f.retryAfterSeconds !== undefined) out += `,"retryAfterSeconds":${q(f.retryAfterSeconds)}`;
      return out + "}";
    },
  };
}
