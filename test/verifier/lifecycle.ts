/**
 * A topic with a key's life on it, for every shell of the verifier: the organisation's key
 * announcement, a record signed with that key, and, before or after the record's message, the
 * lifecycle messages of docs/receipts.md §1 written here byte by byte (an announcement of a new
 * signer or seal key, with `replaces`; a `key_compromise`), so these tests do not depend on the
 * appliance's encoders. The topic's running hashes are chained as Hedera's are
 * (test/support/forgery.ts), served by two mirror nodes on two loopback addresses with CORS, so the
 * page can ask them too.
 */
import { randomUUID } from "node:crypto";
import { keyFingerprint } from "../../src/crypto/index.ts";
import { announcementBytes, forgerKeys, forgeTopic, receiptOf, signRecord, startForgerMirrors, type Claim, type ForgedTopic, type ForgerKeys, type ForgerMirrors, type SignedRecord, type TopicMessage } from "../support/forgery.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fp = (publicKey: Uint8Array) => hex(keyFingerprint({ algorithm: "ML-DSA-65", publicKey }));
const utf8 = (text: string) => new TextEncoder().encode(text);

/** Another key's fingerprint (a replacement's), 64 hex digits. */
export const OTHER_FINGERPRINT = "5a".repeat(32);

/** `{"v":1,"type":"key",…}` with an optional `replaces` after `keyFingerprint`, as docs/receipts.md §1 fixes the order. */
export function keyMessage(claim: Claim, keyFp: string, sealFp: string, replaces?: string): Uint8Array {
  const domain = claim.domain === undefined ? "" : `,"domain":${JSON.stringify(claim.domain)}`;
  const rep = replaces === undefined ? "" : `,"replaces":"${replaces}"`;
  return utf8(`{"v":1,"type":"key","orgId":"${claim.orgId}","name":${JSON.stringify(claim.name)}${domain},"algorithm":"ML-DSA-65","keyFingerprint":"${keyFp}"${rep},"sealKeyFingerprint":"${sealFp}"}`);
}

/** `{"v":1,"type":"person_key",…}`. */
export function personKeyMessage(orgId: string, personId: string, keyFp: string, sealFp: string, replaces?: string): Uint8Array {
  const rep = replaces === undefined ? "" : `,"replaces":"${replaces}"`;
  return utf8(`{"v":1,"type":"person_key","orgId":"${orgId}","personId":"${personId}","algorithm":"ML-DSA-65","keyFingerprint":"${keyFp}"${rep},"sealKeyFingerprint":"${sealFp}"}`);
}

/** `{"v":1,"type":"key_compromise","orgId","personId"?,"keyFingerprint","since"}`. */
export function compromiseMessage(orgId: string, keyFp: string, since: string, personId?: string): Uint8Array {
  const person = personId === undefined ? "" : `,"personId":"${personId}"`;
  return utf8(`{"v":1,"type":"key_compromise","orgId":"${orgId}"${person},"keyFingerprint":"${keyFp}","since":"${since}"}`);
}

export interface Lifecycle {
  readonly receipt: Record<string, any>;
  readonly document: Uint8Array;
  readonly record: SignedRecord;
  readonly keys: ForgerKeys;
  readonly claim: Claim;
  readonly topic: ForgedTopic;
  /** The signer's and the seal key's fingerprints (hex). */
  readonly signerFp: string;
  readonly sealFp: string;
  /** The record's message and the announcement the receipt carries. */
  readonly anchored: TopicMessage;
  readonly announced: TopicMessage;
  /** A compromise message covering the record (since = its signed time) and one after it (1 ms later). */
  readonly covering: Uint8Array;
  readonly later: Uint8Array;
}

/** What the messages around the record may name: the organisation, the pair, the record's id and signed time. */
export interface Context {
  readonly claim: Claim;
  readonly signerFp: string;
  readonly sealFp: string;
  readonly signedAt: string;
  readonly recordId: string;
}

export interface LifecycleOptions {
  readonly network?: "mainnet" | "testnet" | "previewnet" | "local";
  /** Messages between the announcement and the record's; a function gets the fingerprints. */
  readonly before?: (l: Context) => Uint8Array[];
  /** Messages after the record's. */
  readonly after?: (l: Context) => Uint8Array[];
  /** A topic anyone may write to (its submit key null). */
  readonly noSubmitKey?: boolean;
  /** A person-signed record: the key announced as this person's (`person_key`), the receipt's signerType `user`. */
  readonly personId?: string;
  /** The receipt carries the announcement at this index of the topic (0-based) instead of the first message. */
  readonly announcementAt?: number;
  /** The first message is not the announcement: it goes after `before` and the record (a topic older than announcements). */
  readonly announceAfterRecord?: boolean;
}

/** The announcement (#1), `before`, the record, `after`; the receipt as issued with the record (no revocation known). */
export function lifecycle(options: LifecycleOptions = {}): Lifecycle {
  const keys = forgerKeys();
  const record = signRecord(keys);
  const claim: Claim = { orgId: randomUUID(), name: "Acme Lifecycle Ltd" };
  const signerFp = fp(keys.signer.publicKey);
  const sealFp = fp(keys.seal.publicKey);
  const ctx: Context = { claim, signerFp, sealFp, signedAt: record.authenticatedAt, recordId: record.recordId };
  const before = options.before?.(ctx) ?? [];
  const after = options.after?.(ctx) ?? [];
  const topicId = `0.0.${6_000_000 + Math.floor(Math.random() * 1_000_000)}`;
  const announcement = options.personId === undefined ? announcementBytes(claim, keys) : personKeyMessage(claim.orgId, options.personId, signerFp, sealFp);
  const messages = options.announceAfterRecord ? [...before, record.message, announcement, ...after] : [announcement, ...before, record.message, ...after];
  let topic = forgeTopic(topicId, messages);
  if (options.noSubmitKey) topic = { ...topic, submitKey: null as unknown as ForgedTopic["submitKey"] };
  const announced = topic.messages[options.announcementAt ?? (options.announceAfterRecord ? before.length + 1 : 0)]!;
  const anchored = topic.messages[options.announceAfterRecord ? before.length : 1 + before.length]!;
  const receipt = receiptOf(record, options.network ?? "testnet", topicId, anchored, announced, []);
  if (options.personId !== undefined) Object.assign(receipt, { kind: "pdf_embedded", signerType: "user" });
  const laterSince = new Date(Date.parse(record.authenticatedAt) + 1).toISOString();
  return {
    receipt,
    document: record.document,
    record,
    keys,
    claim,
    topic,
    signerFp,
    sealFp,
    anchored,
    announced,
    covering: compromiseMessage(claim.orgId, signerFp, record.authenticatedAt),
    later: compromiseMessage(claim.orgId, signerFp, laterSince),
  };
}

/** The scenarios every shell is run through, by name. */
export const SCENARIOS = {
  /** Replaced after the record: verified_org, the replacement in keyWindow's evidence. */
  "replaced after": () => lifecycle({ after: (l) => [keyMessage(l.claim, OTHER_FINGERPRINT, l.sealFp, l.signerFp)] }),
  /** The record's message after a replacement (a topic a mirror forged): signature_invalid. */
  "replaced before": () => lifecycle({ before: (l) => [keyMessage(l.claim, OTHER_FINGERPRINT, l.sealFp, l.signerFp)] }),
  /** A compromise since the signed time, anchored after the receipt was issued: revoked, KEY_COMPROMISE. */
  "compromised since signedAt": () => lifecycle({ after: (l) => [compromiseMessage(l.claim.orgId, l.signerFp, l.signedAt)] }),
  /** A compromise since 1 ms after the signed time: verified_org. */
  "compromised later": () => lifecycle({ after: (l) => [compromiseMessage(l.claim.orgId, l.signerFp, new Date(Date.parse(l.signedAt) + 1).toISOString())] }),
  /** A compromise on a topic anyone may write to: signature_invalid (topicSubmitKey), never revoked by it. */
  "compromise without submit key": () => lifecycle({ noSubmitKey: true, after: (l) => [compromiseMessage(l.claim.orgId, l.signerFp, l.signedAt)] }),
  /** 150 messages after the record: past a scan bound of one page. */
  "long topic": () => lifecycle({ after: () => Array.from({ length: 150 }, (_, i) => utf8(`filler ${i}`)) }),
} as const;

export type ScenarioName = keyof typeof SCENARIOS;

/** Two mirror nodes on 127.0.0.2 and 127.0.0.3 serving the topic, with CORS. */
export function mirrorsFor(l: Lifecycle): ForgerMirrors {
  return startForgerMirrors([l.topic], "two-hosts");
}
