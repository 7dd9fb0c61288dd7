/**
 * The signer key's place on the topic (docs/receipts.md §4.1, "Key windows and compromise"): a
 * record is judged by the key that was its organisation's (for a person-signed record: its
 * person's) at the record's place on the topic.
 *
 * - `keyWindow`: the record's message follows the announcement of the exact pair (signer key, seal
 *   key) the receipt carries, and no announcement of the same organisation (person) naming another
 *   signer key or another seal key lies between them. A replacement after the record is evidence,
 *   not a failure: the record was made while its key was in force.
 * - `keyCompromise`: a `key_compromise` message for the signer key anywhere on the topic from the
 *   announcement on, whose `since` is at or before the record's signed time, revokes the record
 *   (reason `KEY_COMPROMISE`, revokedAt the message's consensus time).
 *
 * Both read one scan of the topic, which starts at the receipt's key announcement (so a
 * replacement before the record's message is seen), or, on a topic older than announcements
 * where the announcement follows the record, at the topic's first message. The scan keeps only the
 * messages these checks and the revocation scan need (`scanKeeps`); what a message is, is decided
 * from its bytes as every mirror node returned them. A batch message listing the record among its
 * revocations is kept as a revocation (batch.ts).
 */
import { batchRevokes } from "./batch.ts";
import { bytesToHex, jsonObject, utf8 } from "./encoding.ts";
import type { AddCheck } from "./local-checks.ts";
import type { Agreement, LedgerContext } from "./ledger-checks.ts";
import type { MirrorMessage, ScanResult } from "./mirror.ts";
import type { Receipt } from "./receipt.ts";

/** Whose key the record was signed with, as the receipt's announcement names it, and the pair. */
export interface KeySubject {
  readonly recordId: string;
  readonly signerFingerprint: string;
  readonly sealFingerprint: string;
  /** From the receipt's announcement bytes (the keyAnnouncement check holds them to the ledger's); null when unreadable. */
  readonly orgId: string | null;
  /** A person-signed record's person; null for an organisation's record. */
  readonly personId: string | null;
  readonly personal: boolean;
}

/** The consensus time before every message: a scan from it starts at the topic's first message. */
export const TOPIC_START = "0.000000000";

export function keySubject(receipt: Receipt, signerFingerprint: Uint8Array, sealFingerprint: Uint8Array): KeySubject {
  const a = jsonObject(receipt.keyAnnouncement.message);
  const personal = receipt.signerType === "user";
  return {
    recordId: receipt.recordId,
    signerFingerprint: bytesToHex(signerFingerprint),
    sealFingerprint: bytesToHex(sealFingerprint),
    orgId: typeof a?.orgId === "string" ? a.orgId : null,
    personId: personal && typeof a?.personId === "string" ? a.personId : null,
    personal,
  };
}

/** Where the scan starts: the receipt's announcement when it precedes the record, else the topic's first message. */
export function scanStart(receipt: Receipt): string {
  return receipt.keyAnnouncement.sequenceNumber < receipt.anchor.sequenceNumber ? receipt.keyAnnouncement.consensusAt : TOPIC_START;
}

type Kept =
  | { kind: "revocation" }
  | { kind: "compromise"; since: string | null }
  | { kind: "announcement"; keyFingerprint: string; sealKeyFingerprint: string; replaces: string | null }
  | { kind: "restated"; name: string | null; domain: string | null };

const SINCE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What a scanned message is to this record, or null when it is nothing to it. */
export function classify(s: KeySubject, m: MirrorMessage): Kept | null {
  if (m.chunk !== null && m.chunk.total !== 1) return null;
  const v = jsonObject(m.message);
  if (v === null || v.v !== 1) return null;
  if (v.type === "revocation") return v.recordId === s.recordId ? { kind: "revocation" } : null;
  // A batch whose revocation leaves include the record's (batch.ts): kept for the revocation scan.
  if (v.type === "batch") return batchRevokes(m.message, s.recordId) ? { kind: "revocation" } : null;
  if (v.type === "key_compromise") {
    if (v.keyFingerprint !== s.signerFingerprint) return null;
    const since = typeof v.since === "string" && SINCE_RE.test(v.since) && Number.isFinite(Date.parse(v.since)) ? v.since : null;
    return { kind: "compromise", since };
  }
  // The same organisation's key (for a person's record: the same person's) announced with another pair.
  const same = s.orgId !== null && v.orgId === s.orgId && (s.personal ? v.type === "person_key" && v.personId === s.personId : v.type === "key");
  if (!same) return null;
  const key = typeof v.keyFingerprint === "string" ? v.keyFingerprint : "";
  const seal = typeof v.sealKeyFingerprint === "string" ? v.sealKeyFingerprint : "";
  // The same pair announced again: a change of the organisation's domain or name.
  if (key === s.signerFingerprint && seal === s.sealFingerprint) return { kind: "restated", name: typeof v.name === "string" ? v.name : null, domain: typeof v.domain === "string" ? v.domain : null };
  return { kind: "announcement", keyFingerprint: key, sealKeyFingerprint: seal, replaces: typeof v.replaces === "string" ? v.replaces : null };
}

/**
 * The organisation's latest claim about itself for this pair on the topic: the last announcement of
 * the same pair the scan saw (a change of domain or name announces the key again, after records the
 * receipt's announcement preceded), or null when none followed the receipt's. Its words are claims,
 * like the receipt's announcement's, and confirmed the same way (identity.ts).
 */
export function restatedClaim(s: KeySubject, scan: Agreement<ScanResult>, after: number): { readonly sequenceNumber: number; readonly name: string | null; readonly domain: string | null } | null {
  const kept = scan.state === "found" ? scan.value.kept : [];
  let last: { sequenceNumber: number; name: string | null; domain: string | null } | null = null;
  for (const m of kept) {
    const k = classify(s, m);
    if (k?.kind === "restated" && m.sequenceNumber > after) last = { sequenceNumber: m.sequenceNumber, name: k.name, domain: k.domain };
  }
  return last;
}

/** The scan's filter: revocations of the record, compromises of its key, its organisation's (person's) announcements. */
export const scanKeeps = (s: KeySubject) => (m: MirrorMessage) => classify(s, m) !== null;

/** `seconds.nanoseconds` → RFC 3339 UTC with milliseconds (the nanoseconds below a millisecond dropped). */
export function consensusToIso(consensusAt: string): string {
  const [s, n] = consensusAt.split(".") as [string, string];
  return new Date(Number(s) * 1000 + Math.floor(Number(n) / 1e6)).toISOString();
}

const notAllAnswered = "not every mirror node answered (see mirrors)";
const short = (fp: string) => (fp.length > 16 ? `${fp.slice(0, 16)}…` : fp || "(none)");

function announcementsOf(s: KeySubject, scan: Agreement<ScanResult>) {
  const kept = scan.state === "found" ? scan.value.kept : [];
  return kept.flatMap((m) => {
    const k = classify(s, m);
    return k?.kind === "announcement" ? [{ sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, keyFingerprint: k.keyFingerprint, sealKeyFingerprint: k.sealKeyFingerprint, replaces: k.replaces }] : [];
  });
}

/** keyWindow: the record's message lies in its key pair's window on the topic. Returns whether it does. */
export function checkKeyWindow(c: LedgerContext, scan: Agreement<ScanResult>, s: KeySubject): boolean {
  const add: AddCheck = c.add;
  const { anchor, keyAnnouncement: ka } = c.receipt;
  if (scan.state === "failed") {
    add("keyWindow", "skipped", notAllAnswered);
    return false;
  }
  if (scan.state === "disagree") {
    add("keyWindow", "fail", "mirror nodes disagree on the messages of the topic that bear on this record's key");
    return false;
  }
  const A = ka.sequenceNumber;
  const R = anchor.sequenceNumber;
  const legacy = A > R;
  const others = announcementsOf(s, scan);
  // Before the record: between the announcement and the record's message, or, on a topic older
  // than announcements (the announcement after the record), anywhere before the announcement.
  const between = others.filter((o) => (legacy ? o.sequenceNumber < A : o.sequenceNumber > A && o.sequenceNumber < R));
  const after = others.filter((o) => o.sequenceNumber > Math.max(A, R));
  const show = (o: (typeof others)[number]) => ({ sequenceNumber: o.sequenceNumber, consensusAt: o.consensusAt, keyFingerprint: o.keyFingerprint, sealKeyFingerprint: o.sealKeyFingerprint, replaces: o.replaces });
  const evidence = {
    announcementSequenceNumber: A,
    recordSequenceNumber: R,
    scannedFrom: legacy ? "the topic's first message" : `message #${A}`,
    keyFingerprint: s.signerFingerprint,
    sealKeyFingerprint: s.sealFingerprint,
    otherKeysBefore: between.map(show),
    replacedBy: after.length === 0 ? null : show(after[0]!),
  };
  const whose = s.personal ? "this person" : "this organisation";
  const first = between[0];
  if (first !== undefined) {
    const what = first.keyFingerprint !== s.signerFingerprint ? `another signer key (${short(first.keyFingerprint)})` : `another seal key (${short(first.sealKeyFingerprint)})`;
    const where = legacy ? `before the key's announcement #${A}` : `between the key's announcement #${A} and the record's message #${R}`;
    add("keyWindow", "fail", `outside its key's window: message #${first.sequenceNumber} (consensus ${first.consensusAt}) announces ${what} for ${whose} ${where}: the key was not in force at the record's place on the topic`, evidence);
    return false;
  }
  const replaced = after[0] === undefined ? "" : `; replaced by message #${after[0].sequenceNumber} (consensus ${after[0].consensusAt}) after the record, which does not affect it`;
  add(
    "keyWindow",
    "pass",
    legacy
      ? `the record's message #${R} precedes the first announcement of its key and seal key (#${A}, a topic older than announcements) and no other key of ${whose} was announced before it${replaced}`
      : `the record's message #${R} follows the announcement of its key and seal key (#${A}) with no other key of ${whose} announced between${replaced}`,
    evidence,
  );
  return true;
}

export interface Compromise {
  readonly reason: "KEY_COMPROMISE";
  readonly revokedAt: string;
  readonly sequenceNumber: number;
  readonly consensusAt: string;
}

/** keyCompromise: a compromise of the signer key covering the record's signed time; the earliest such, or null. */
export function checkKeyCompromise(c: LedgerContext, scan: Agreement<ScanResult>, s: KeySubject): Compromise | null {
  const { add, receipt } = c;
  if (scan.state === "failed") {
    add("keyCompromise", "skipped", notAllAnswered);
    return null;
  }
  if (scan.state === "disagree") {
    add("keyCompromise", "fail", "mirror nodes disagree on the messages of the topic that bear on this record's key");
    return null;
  }
  const signedAt = Date.parse(receipt.authenticatedAt);
  const kept = scan.state === "found" ? scan.value.kept : [];
  const found = kept.flatMap((m) => {
    const k = classify(s, m);
    if (k?.kind !== "compromise") return [];
    // A `since` that is not a time covers every record: the key is declared compromised, and when
    // from cannot be read.
    const covers = k.since === null || Date.parse(k.since) <= signedAt;
    return [{ sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, since: k.since, covers, message: utf8(m.message) }];
  });
  // What the receipt says of a compromise (a hint, as known when issued): reported, never believed.
  const r = receipt.revocation;
  const claimed = r === null || r.reason !== "KEY_COMPROMISE" ? null : { revokedAt: r.revokedAt, sequenceNumber: r.anchor.sequenceNumber };
  const evidence = { keyFingerprint: s.signerFingerprint, signedAt: receipt.authenticatedAt, compromises: found, receiptRevocation: claimed };
  const hit = found.find((f) => f.covers);
  if (hit !== undefined) {
    const compromise: Compromise = { reason: "KEY_COMPROMISE", revokedAt: consensusToIso(hit.consensusAt), sequenceNumber: hit.sequenceNumber, consensusAt: hit.consensusAt };
    add(
      "keyCompromise",
      "fail",
      `revoked: KEY_COMPROMISE: message #${hit.sequenceNumber} (consensus ${hit.consensusAt}) declares the signer key compromised since ${hit.since ?? "an unreadable time"}, at or before the record's signed time ${receipt.authenticatedAt}`,
      evidence,
    );
    return compromise;
  }
  const later = found[0];
  add(
    "keyCompromise",
    "pass",
    later === undefined
      ? `no compromise of the signer key on ${receipt.anchor.topicId} from its announcement on${claimed !== null ? " (the receipt names one; the ledger does not have it)" : ""}`
      : `the signer key was declared compromised since ${later.since} (message #${later.sequenceNumber}), after the record's signed time ${receipt.authenticatedAt}: this record is unaffected`,
    evidence,
  );
  return null;
}
