/**
 * The shape of a match (docs/verification.md): what a verification answers about one anchored
 * record, from the row, the disclosure tier, the hash asked about, its signature checks and its
 * signer's standing.
 */
import { createConsensusTexts, rfc3339Ms, type ConsensusTexts } from "../lib/formats.ts";
import { revocationOf, type KeyCompromise } from "./revocation.ts";
import type { SignatureChecks } from "./checks.ts";
import type { HeadRow, OrgStanding, VerifyRow } from "./ports.ts";
import type { DisclosureTier, Match } from "./types.ts";

export interface VerificationLinks {
  /** The public mirror node's topic-message URL (docs/records.md, "3. Ledger messages"). */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}

/** A record as a match is shaped from: read whole, or without its signatures (the record memo answered). */
export type ShownRow = HeadRow | VerifyRow;

/** The match of one anchored record; a pure function of its arguments. */
export function shapeMatch(
  links: VerificationLinks,
  consensus: ConsensusTexts,
  row: ShownRow,
  tier: DisclosureTier,
  requested: string,
  sig: SignatureChecks,
  org: OrgStanding | null,
  personSuspended: boolean,
  compromise?: KeyCompromise,
): Match {
  if (row.sequence_number === null || row.consensus_at === null) {
    // The anchor columns are written with the state in one transaction; an anchored row without
    // them is corruption. Refuse to answer (500) rather than vouch for or hide the record.
    throw new Error(`record ${row.id} is anchored without sequence number or consensus time`);
  }
  const signerType = row.signer_type;
  // hashBinding: the stored hash is the one asked about, and the signature over the payload
  // rebuilt from it verifies (which implies the key row resolved and the payload encoded).
  const hashBinding = row.doc_hash === requested && sig.signatureOk;
  const revocation = revocationOf(row, compromise);
  const match: Match = {
    recordId: row.id,
    kind: row.kind,
    status: revocation === null ? "active" : "revoked",
    recordIssuedAt: rfc3339Ms(row.signed_at_ms),
    signerType,
    signerStanding: (org !== null && org.suspended !== 0) || personSuspended ? "suspended" : "good_standing",
    ...(signerType === "user" && row.signer_hint !== null ? { signerHint: row.signer_hint } : {}),
    // The signing organisation, or the organisation a person signed within (docs/persons.md, "Person-signed records").
    ...(tier === "organisation" && org !== null ? { signerOrg: org.name } : {}),
    ...(revocation !== null ? { revocation: { reason: revocation.reason, revokedAt: rfc3339Ms(revocation.revokedAtMs) } } : {}),
    checksPerformed: {
      hashBinding: hashBinding ? "pass" : "fail",
      userSignature: sig.signatureOk ? "pass" : "fail",
      serverSeal: sig.sealOk ? "pass" : "fail",
      anchorStatus: row.anchor_state,
    },
    anchor: {
      topicId: row.topic_id,
      transactionId: row.transaction_id,
      sequenceNumber: row.sequence_number,
      consensusAt: consensus.format(row.consensus_at),
      mirrorNodeUrl: links.topicMessageUrl(row.topic_id, row.sequence_number),
    },
  };
  return match;
}

export type MatchOf = (row: ShownRow, tier: DisclosureTier, requested: string, sig: SignatureChecks, org: OrgStanding | null, personSuspended: boolean, compromise?: KeyCompromise) => Match;

/**
 * `shapeMatch`, or the match it gave for identical inputs. Shaping is a pure function of the row,
 * the tier, the hash asked about, the signature checks, the standing and the person's
 * suspension; rows, checks (the record memo's entries) and standing (kept under the change
 * counter) are the same objects while nothing they were read from has changed, so an identical
 * set of inputs gives the identical match, kept rather than built again. Any input that differs,
 * by identity, shapes it afresh. The verdict is still decided over the matches on every request.
 */
export function createMatchShaper(links: VerificationLinks, consensus: ConsensusTexts = createConsensusTexts()): MatchOf {
  /** The match last shaped from each row object, with the inputs it was shaped from. */
  const shaped = new WeakMap<ShownRow, { tier: DisclosureTier; requested: string; sig: SignatureChecks; org: OrgStanding | null; personSuspended: boolean; compromise: KeyCompromise | undefined; match: Match }>();
  return (row, tier, requested, sig, org, personSuspended, compromise) => {
    const prev = shaped.get(row);
    if (
      prev !== undefined &&
      prev.sig === sig &&
      prev.org === org &&
      prev.tier === tier &&
      prev.requested === requested &&
      prev.personSuspended === personSuspended &&
      prev.compromise === compromise
    ) {
      return prev.match;
    }
    const match = shapeMatch(links, consensus, row, tier, requested, sig, org, personSuspended, compromise);
    shaped.set(row, { tier, requested, sig, org, personSuspended, compromise, match });
    return match;
  };
}
