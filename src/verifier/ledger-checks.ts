/**
 * The ledger's checks of docs/receipts.md §4.1 (verify.ts runs them once the local checks pass and
 * every trusted mirror node was asked): what the mirror nodes agree on about the record's message,
 * its commitments, the key announcement, the topic's submit key and the revocations after the
 * record. Each adds its check and gives what the verdict needs; none asks anything itself.
 */
import { batchRevocation, batchRevokes, committingMessage } from "./batch.ts";
import { bytesToBase64, bytesToHex, equalBytes, jsonObject, utf8 } from "./encoding.ts";
import { consensusToIso } from "./key-checks.ts";
import type { AddCheck } from "./local-checks.ts";
import type { Answer, MirrorMessage, ScanResult, TopicInfo } from "./mirror.ts";
import { sha256Text } from "./payloads.ts";
import { UUID_RE, type Receipt } from "./receipt.ts";
import { DOMAIN_RE } from "./trust.ts";
import type { Report } from "./verify.ts";

/** What all mirror nodes said about one thing: agreed (found or absent), disagreed, or not all answered. */
export type Agreement<T> =
  | { state: "failed" }
  | { state: "disagree" }
  | { state: "absent" }
  | { state: "found"; value: T };

export function agree<T>(answers: readonly { url: string; answer: Answer<T> }[], key: (t: T) => string): Agreement<T> {
  if (answers.length === 0 || answers.some((a) => a.answer.kind === "failed")) return { state: "failed" };
  const keys = answers.map((a) => (a.answer.kind === "found" ? "found:" + key(a.answer.value) : "absent"));
  if (keys.some((k) => k !== keys[0])) return { state: "disagree" };
  const first = answers[0]!.answer;
  return first.kind === "found" ? { state: "found", value: first.value } : { state: "absent" };
}

export const messageKey = (m: MirrorMessage) => `${m.consensusAt}|${bytesToHex(m.message)}|${bytesToHex(m.runningHash)}|${m.runningHashVersion}`;
export const topicKey = (t: TopicInfo) => (t.submitKey === null ? "null" : `${t.submitKey.type}:${t.submitKey.key}`);
export const scanKey = (s: ScanResult) => s.kept.map((m) => `${m.sequenceNumber}:${m.consensusAt}:${bytesToHex(m.message)}`).join(",");

/** Differences between the record message's commitments and the receipt, as `field: expected …` texts. */
function commitmentProblems(receipt: Receipt, message: Uint8Array): string[] {
  const m = jsonObject(message);
  if (m === null) return ["not a JSON object"];
  if (m.v !== 1 || m.type !== "record") return [`not a version-1 record message (v ${JSON.stringify(m.v)}, type ${JSON.stringify(m.type)})`];
  const expected: Record<string, string> = {
    recordId: receipt.recordId,
    originalDocHash: receipt.originalDocHash,
    signedAt: receipt.authenticatedAt,
    signerPublicKeySha256: sha256Text(receipt.signer.publicKey),
    signatureSha256: sha256Text(receipt.signer.signature),
    sealSignatureSha256: sha256Text(receipt.seal.signature),
  };
  return Object.entries(expected)
    .filter(([k, v]) => m[k] !== v)
    .map(([k]) => k);
}

/** A revocation of the record: its own revocation message, or a batch message listing it among its revocations (batch.ts). */
export function isRevocationOf(recordId: string): (m: MirrorMessage) => boolean {
  return (m) => {
    if (m.chunk !== null && m.chunk.total !== 1) return false;
    const v = jsonObject(m.message);
    return v !== null && v.v === 1 && ((v.type === "revocation" && v.recordId === recordId) || batchRevokes(m.message, recordId));
  };
}

export interface MirrorAnswers {
  readonly url: string;
  readonly topic: Answer<TopicInfo>;
  readonly record: Answer<MirrorMessage>;
  readonly announcement: Answer<MirrorMessage>;
  readonly scan: Answer<ScanResult>;
}

const notAllAnswered = "not every mirror node answered (see mirrors)";

/** What every ledger check reads: the receipt, each mirror node's answers, and where checks go. */
export interface LedgerContext {
  readonly receipt: Receipt;
  readonly answers: readonly MirrorAnswers[];
  readonly add: AddCheck;
}

/** Each mirror node's answer about the record's message or the announcement, for a check's evidence. */
function perMirror<T>(answers: readonly MirrorAnswers[], what: "record" | "announcement", show: (m: MirrorMessage) => T) {
  return Object.fromEntries(answers.map((a) => [a.url, a[what].kind === "found" ? show((a[what] as { value: MirrorMessage }).value) : a[what].kind]));
}
const showMessage = (m: MirrorMessage) => ({ consensusAt: m.consensusAt, messageSha256: sha256Text(m.message), runningHash: bytesToBase64(m.runningHash) });

/** ledgerMessage: the record's message as every mirror node returns it, against the receipt's; `message` when they agree on one. */
export function checkLedgerMessage(c: LedgerContext, record: Agreement<MirrorMessage>): { readonly mismatch: boolean; readonly message: MirrorMessage | null } {
  const { add, answers } = c;
  const { anchor } = c.receipt;
  let ledgerMismatch = false;
  let ledgerRecord: MirrorMessage | null = null;
  if (record.state === "failed") add("ledgerMessage", "skipped", notAllAnswered);
  else if (record.state === "disagree") add("ledgerMessage", "fail", `mirror nodes disagree on message #${anchor.sequenceNumber} of ${anchor.topicId}`, { mirrors: perMirror(answers, "record", showMessage) });
  else if (record.state === "absent") add("ledgerMessage", "fail", `no mirror node has message #${anchor.sequenceNumber} on topic ${anchor.topicId}`, { topicId: anchor.topicId, sequenceNumber: anchor.sequenceNumber });
  else {
    ledgerRecord = record.value;
    const differs = [
      ...(equalBytes(record.value.message, anchor.message) ? [] : ["message"]),
      ...(record.value.consensusAt === anchor.consensusAt ? [] : ["consensusAt"]),
      ...(equalBytes(record.value.runningHash, anchor.runningHash) ? [] : ["runningHash"]),
    ];
    ledgerMismatch = differs.length > 0;
    add(
      "ledgerMessage",
      ledgerMismatch ? "fail" : "pass",
      ledgerMismatch ? `the ledger's message #${anchor.sequenceNumber} differs from the receipt's: ${differs.join(", ")}` : `every mirror node returns the receipt's message #${anchor.sequenceNumber} on ${anchor.topicId}, consensus ${anchor.consensusAt}`,
      { topicId: anchor.topicId, sequenceNumber: anchor.sequenceNumber, ledger: showMessage(record.value), receipt: { consensusAt: anchor.consensusAt, messageSha256: sha256Text(anchor.message), runningHash: bytesToBase64(anchor.runningHash) } },
    );
  }
  return { mismatch: ledgerMismatch, message: ledgerRecord };
}

/**
 * messageCommitments: over the ledger's bytes, the authority; for a batched record over its leaf
 * message, which the inclusion check proves in the batch the ledger holds.
 */
export function checkCommitments(c: LedgerContext, ledgerRecord: MirrorMessage | null): boolean {
  const { add, receipt } = c;
  let commitmentsOk = false;
  if (ledgerRecord === null) add("messageCommitments", "skipped", "no ledger message that every mirror node agrees on");
  else {
    const message = committingMessage(receipt, ledgerRecord.message);
    const what = receipt.anchor.inclusion === null ? "the message" : "the leaf message (inclusion.leafMessage)";
    const problems = commitmentProblems(receipt, message);
    commitmentsOk = problems.length === 0;
    add("messageCommitments", commitmentsOk ? "pass" : "fail", commitmentsOk ? `${what} commits to this record's id, hash, signed time, key and both signatures` : `${receipt.anchor.inclusion === null ? "the ledger message" : what} does not commit to this record: ${problems.join(", ")}`, {
      message: utf8(message) ?? bytesToBase64(message),
    });
  }
  return commitmentsOk;
}

/** What an established key announcement claims: the organisation (a claim until identity.ts confirms it), and a person-signed record's person. */
export interface AnnouncementResult {
  readonly ok: boolean;
  readonly claim: { orgId: string; name: string | null; domain: string | null } | null;
  readonly person: Report["person"];
}

/** keyAnnouncement: the announcement every mirror node returns binds the signer's and the seal key, for the record's signer type. */
export function checkKeyAnnouncement(c: LedgerContext, announcement: Agreement<MirrorMessage>, keys: { readonly signerFingerprint: Uint8Array; readonly sealFingerprint: Uint8Array }): AnnouncementResult {
  const { add, answers, receipt } = c;
  const { anchor, keyAnnouncement: ka } = receipt;
  const { signerFingerprint, sealFingerprint } = keys;
  let announcementOk = false;
  let claim: { orgId: string; name: string | null; domain: string | null } | null = null;
  let person: Report["person"] = null;
  if (ka.topicId !== anchor.topicId) add("keyAnnouncement", "fail", `the announcement is on topic ${ka.topicId}, the record on ${anchor.topicId}`);
  else if (announcement.state === "failed") add("keyAnnouncement", "skipped", notAllAnswered);
  else if (announcement.state === "disagree") add("keyAnnouncement", "fail", `mirror nodes disagree on the announcement, message #${ka.sequenceNumber}`, { mirrors: perMirror(answers, "announcement", showMessage) });
  else if (announcement.state === "absent") add("keyAnnouncement", "fail", `no mirror node has the announcement, message #${ka.sequenceNumber} on ${ka.topicId}`);
  else {
    const m = announcement.value;
    const problems: string[] = [];
    if (!equalBytes(m.message, ka.message)) problems.push("its bytes are not the receipt's");
    if (m.consensusAt !== ka.consensusAt) problems.push("its consensus time is not the receipt's");
    const a = jsonObject(m.message);
    const signerFp = bytesToHex(signerFingerprint);
    const sealFp = bytesToHex(sealFingerprint);
    // An organisation's key is announced as `key` with its name; a person's as `person_key`, by
    // organisation id and person id (docs/receipts.md §1). The kind must be the record's signer
    // type's.
    const personal = receipt.signerType === "user";
    const expected = personal ? "person_key" : "key";
    if (a === null || a.v !== 1 || a.type !== expected) problems.push(`not a version-1 ${personal ? "person key" : "key"} announcement`);
    else {
      if (a.algorithm !== receipt.signer.algorithm) problems.push("algorithm");
      if (a.keyFingerprint !== signerFp) problems.push("keyFingerprint is not the signer key's");
      if (a.sealKeyFingerprint !== sealFp) problems.push("sealKeyFingerprint is not the seal key's");
      if (typeof a.orgId !== "string" || !UUID_RE.test(a.orgId)) problems.push("orgId malformed");
      if (personal ? typeof a.personId !== "string" || !UUID_RE.test(a.personId) : typeof a.name !== "string") problems.push(personal ? "personId malformed" : "name malformed");
    }
    announcementOk = problems.length === 0;
    if (announcementOk) {
      // `domain` is optional (announcements made before an organisation had one lack it); one that
      // is not a host name is no claim at all.
      const domain = typeof a!.domain === "string" && DOMAIN_RE.test(a!.domain) ? a!.domain : null;
      claim = { orgId: a!.orgId as string, name: personal ? null : (a!.name as string), domain };
      if (personal) person = { personId: a!.personId as string };
    }
    add(
      "keyAnnouncement",
      announcementOk ? "pass" : "fail",
      announcementOk
        ? personal
          ? `message #${ka.sequenceNumber} announces the signer's key for person ${person!.personId} of organisation ${claim!.orgId}, and the seal key`
          : `message #${ka.sequenceNumber} announces the signer's key for an organisation calling itself ${JSON.stringify(claim!.name)}${claim!.domain === null ? "" : ` (domain ${claim!.domain})`}, and the seal key`
        : `the announcement does not bind this key: ${problems.join("; ")}`,
      { sequenceNumber: ka.sequenceNumber, consensusAt: m.consensusAt, message: utf8(m.message) ?? bytesToBase64(m.message), keyFingerprint: signerFp, sealKeyFingerprint: sealFp },
    );
  }
  return { ok: announcementOk, claim, person };
}

/** topicSubmitKey: the record's topic accepts only messages signed by its submit key. */
export function checkTopicSubmitKey(c: LedgerContext, topic: Agreement<TopicInfo>): boolean {
  const { add, answers } = c;
  const { anchor } = c.receipt;
  let submitKeyOk = false;
  if (topic.state === "failed") add("topicSubmitKey", "skipped", notAllAnswered);
  else if (topic.state === "disagree") add("topicSubmitKey", "fail", `mirror nodes disagree on topic ${anchor.topicId}'s submit key`, {
      mirrors: Object.fromEntries(answers.map((a) => [a.url, a.topic.kind === "found" ? a.topic.value.submitKey : a.topic.kind])),
    });
  else if (topic.state === "absent") add("topicSubmitKey", "fail", `no mirror node knows topic ${anchor.topicId}`);
  else if (topic.value.submitKey === null) add("topicSubmitKey", "fail", `topic ${anchor.topicId} has no submit key: anyone could have written on it`);
  else {
    submitKeyOk = true;
    add("topicSubmitKey", "pass", `topic ${anchor.topicId} accepts only messages signed by its submit key`, { submitKey: topic.value.submitKey });
  }
  return submitKeyOk;
}

/** revocationScan: the revocations of this record on its topic after its message (never the receipt's own claim). */
export function checkRevocationScan(c: LedgerContext, scan: Agreement<ScanResult>): Report["revocation"] {
  const { add, answers, receipt } = c;
  const { anchor } = receipt;
  let revocation: Report["revocation"] = null;
  // A receipt's KEY_COMPROMISE is the key's, not the record's own: keyCompromise reports it.
  const claimed = receipt.revocation === null || receipt.revocation.reason === "KEY_COMPROMISE" ? null : { reason: receipt.revocation.reason, revokedAt: receipt.revocation.revokedAt, sequenceNumber: receipt.revocation.anchor.sequenceNumber };
  if (scan.state === "failed") add("revocationScan", "skipped", notAllAnswered);
  else if (scan.state === "disagree") {
    const counts = Object.fromEntries(answers.map((a) => [a.url, a.scan.kind === "found" ? a.scan.value.kept.map((m) => m.sequenceNumber) : a.scan.kind]));
    add("revocationScan", "fail", "mirror nodes disagree on the messages of the topic that bear on this record (revocations, its key's announcements and compromises)", { keptByMirror: counts });
  } else {
    // The scan also keeps what the key checks need (key-checks.ts), and starts at the key's
    // announcement: only revocations of this record after its message count, and a batch listing
    // it at its message (created and revoked in one batch).
    const isOurs = isRevocationOf(receipt.recordId);
    const kept = (scan.state === "found" ? scan.value.kept : []).filter((m) => (m.sequenceNumber > anchor.sequenceNumber || (m.sequenceNumber === anchor.sequenceNumber && batchRevokes(m.message, receipt.recordId))) && isOurs(m));
    const scanned = Object.fromEntries(answers.map((a) => [a.url, a.scan.kind === "found" ? a.scan.value.scanned : 0]));
    const first = kept[0];
    const evidence = () => ({
      revocations: kept.map((m) => ({ sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, message: utf8(m.message) })),
      scannedByMirror: scanned,
      receiptRevocation: claimed,
    });
    if (first === undefined) {
      add("revocationScan", "pass", `no revocation of this record on ${anchor.topicId} after its message${claimed !== null ? " (the receipt names one; the ledger does not have it)" : ""}`, { scannedByMirror: scanned, receiptRevocation: claimed });
    } else if (batchRevokes(first.message, receipt.recordId)) {
      // Revoked whether or not the receipt can say why: the batch message on the topic is the appliance's word.
      const b = batchRevocation(receipt, first);
      revocation = { reason: b.proven?.reason ?? null, revokedAt: b.proven?.revokedAt ?? consensusToIso(first.consensusAt), sequenceNumber: first.sequenceNumber, consensusAt: first.consensusAt };
      const where = `batch ${b.batch ?? "(malformed)"}, message #${first.sequenceNumber}, consensus ${first.consensusAt}`;
      add("revocationScan", "fail", b.proven === null ? `revoked in ${where}; ${b.how}` : `revoked: ${b.proven.reason} at ${b.proven.revokedAt} (${where}; ${b.how})`, evidence());
    } else {
      const r = jsonObject(first.message)!;
      revocation = { reason: typeof r.reason === "string" ? r.reason : "", revokedAt: typeof r.revokedAt === "string" ? r.revokedAt : "", sequenceNumber: first.sequenceNumber, consensusAt: first.consensusAt };
      add("revocationScan", "fail", `revoked: ${revocation.reason} at ${revocation.revokedAt} (message #${first.sequenceNumber}, consensus ${first.consensusAt})`, evidence());
    }
  }
  return revocation;
}
