/**
 * The check (docs/receipts.md §4): every check of §4.1 over a parsed receipt, then the verdict by
 * the rules of §4.2, first rule that applies wins. Fails closed: a mirror node that does not
 * answer, or answers outside the API, makes the verdict `unverifiable`, never `verified`.
 *
 * What it believes comes from its own trust roots (docs/receipts.md, "Trust roots"), never from
 * the receipt: the mirror nodes asked are the user's, the trust file's and the built-in ones for
 * the receipt's network (witnesses.ts), counted by host; the organisation's name on the ledger is
 * a claim until a trust root confirms it (identity.ts).
 *
 * Signatures are verified with @noble/post-quantum (never the appliance's native code), over
 * payloads recomputed here from the receipt's fields (payloads.ts), not over the receipt's copies.
 */
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { bytesToBase64, bytesToHex, equalBytes, utf8 } from "./encoding.ts";
import { confirmIdentity, type Identity } from "./identity.ts";
import { MIRROR_TIMEOUT_MS, mirrorReader, webFetch, type Answer, type FetchFn, type MirrorMessage, type TopicInfo, type ScanResult } from "./mirror.ts";
import { keyFingerprint, recordPayloadV1, sealPayloadV1, sha256Text } from "./payloads.ts";
import { DOC_HASH_RE, UUID_RE, rfc3339MsToMillis, type Network, type Receipt, type SignedPart } from "./receipt.ts";
import { DOMAIN_RE, isPublicNetwork, type TrustFile } from "./trust.ts";
import { nameResolver, planMirrors, resolveWitnesses, type HostResolver, type MirrorSource } from "./witnesses.ts";

export type Verdict = "verified" | "verified_org" | "revoked" | "signature_invalid" | "no_record" | "inconsistent_mirrors" | "unverifiable";

export type CheckName =
  | "documentHash"
  | "kind"
  | "recordPayload"
  | "signerSignature"
  | "sealPayload"
  | "sealSignature"
  | "mirrors"
  | "ledgerMessage"
  | "messageCommitments"
  | "keyAnnouncement"
  | "topicSubmitKey"
  | "revocationScan"
  | "identity"
  | "inclusion";

export interface Check {
  readonly name: CheckName;
  /** `warn`: the identity check only, when the organisation's identity is a claim no trust root confirms. */
  readonly status: "pass" | "fail" | "skipped" | "warn";
  /** One line. */
  readonly detail: string;
  readonly evidence?: Record<string, unknown>;
}

export interface Report {
  readonly verdict: Verdict;
  readonly recordId: string;
  readonly originalDocHash: string;
  /** The receipt's ledger network. */
  readonly network: Network;
  /** false on `local`: a local development ledger proves nothing publicly, whatever the verdict. */
  readonly public: boolean;
  /**
   * Who made the record: confirmed by a trust root, or the key announcement's claim reported as a
   * claim (identity.ts). Null unless the keyAnnouncement check passed.
   */
  readonly identity: Identity | null;
  /** A person-signed record's signer as announced on the ledger (their id, nothing personal); null otherwise. */
  readonly person: { readonly personId: string } | null;
  /** The mirror nodes asked (normalised), in order; empty offline. */
  readonly mirrors: string[];
  /** Where each asked mirror node came from, in the order of `mirrors`. */
  readonly mirrorSources: MirrorSource[];
  /** Distinct hosts among `mirrors`: the independent witnesses. */
  readonly witnesses: number;
  /** The receipt's own `mirrorNodes`: a hint, asked only when the user names them. */
  readonly suggestedMirrors: readonly string[];
  readonly minMirrors: number;
  readonly offline: boolean;
  /** The revocation found on the ledger (never the receipt's own claim). */
  readonly revocation: { readonly reason: string; readonly revokedAt: string; readonly sequenceNumber: number; readonly consensusAt: string } | null;
  readonly checks: Check[];
}

export interface VerifyOptions {
  /** The document's DocHash (`sha256:<64 hex>`), computed by the caller from the document or given. */
  readonly docHash: string;
  /** Mirror nodes the user names (`--mirror`, the page's field), asked first. */
  readonly mirrors: readonly string[];
  /** Whether the built-in mirror nodes of the receipt's network are asked too (default true). */
  readonly builtinMirrors?: boolean;
  /** The user's trust file: mirror nodes per network, pinned organisations. */
  readonly trust?: TrustFile | null;
  /** Resolves mirror hosts to compare them (default: host names compared as written, the page's way). */
  readonly resolveHost?: HostResolver;
  /** TXT records of a DNS name, for identity (command-line shells); absent: not consulted. */
  readonly resolveTxt?: (name: string) => Promise<string[][]>;
  /** Whether the claimed domain's web address is consulted for identity (default true). */
  readonly lookupDomain?: boolean;
  /** How the user names a mirror node, in the words of the shell (default `with --mirror URL`; the page: `in the mirror node field`). */
  readonly howToAddMirror?: string;
  /** Distinct mirror nodes required (default 2, at least 1). */
  readonly minMirrors?: number;
  /** Check the signatures only; the verdict is then at best `unverifiable`. */
  readonly offline?: boolean;
  readonly fetch?: FetchFn;
  /** Progress of long topic scans, one line at a time. */
  readonly onProgress?: (text: string) => void;
  /** Per-request timeout (default 10 s). */
  readonly timeoutMs?: number;
  /** Pages of 100 messages the revocation scan reads per mirror node at most (default 10,000). */
  readonly maxScanPages?: number;
}

export const DEFAULT_MIN_MIRRORS = 2;
export const DEFAULT_MAX_SCAN_PAGES = 10_000;
const ML_DSA_65 = { publicKeyLength: 1952, signatureLength: 3309 };

/** ML-DSA-65 Verify with an empty context; false, never a throw, for malformed bytes. */
function verifySignature(part: SignedPart, message: Uint8Array): boolean {
  if (part.publicKey.length !== ML_DSA_65.publicKeyLength || part.signature.length !== ML_DSA_65.signatureLength) return false;
  try {
    // @noble/post-quantum 0.7.1: verify(signature, message, publicKey).
    return ml_dsa65.verify(part.signature, message, part.publicKey);
  } catch {
    return false;
  }
}

/** What all mirror nodes said about one thing: agreed (found or absent), disagreed, or not all answered. */
type Agreement<T> =
  | { state: "failed" }
  | { state: "disagree" }
  | { state: "absent" }
  | { state: "found"; value: T };

function agree<T>(answers: readonly { url: string; answer: Answer<T> }[], key: (t: T) => string): Agreement<T> {
  if (answers.length === 0 || answers.some((a) => a.answer.kind === "failed")) return { state: "failed" };
  const keys = answers.map((a) => (a.answer.kind === "found" ? "found:" + key(a.answer.value) : "absent"));
  if (keys.some((k) => k !== keys[0])) return { state: "disagree" };
  const first = answers[0]!.answer;
  return first.kind === "found" ? { state: "found", value: first.value } : { state: "absent" };
}

const messageKey = (m: MirrorMessage) => `${m.consensusAt}|${bytesToHex(m.message)}|${bytesToHex(m.runningHash)}|${m.runningHashVersion}`;
const topicKey = (t: TopicInfo) => (t.submitKey === null ? "null" : `${t.submitKey.type}:${t.submitKey.key}`);
const scanKey = (s: ScanResult) => s.kept.map((m) => `${m.sequenceNumber}:${m.consensusAt}:${bytesToHex(m.message)}`).join(",");

function json(bytes: Uint8Array): Record<string, unknown> | null {
  const text = utf8(bytes);
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Differences between the record message's commitments and the receipt, as `field: expected …` texts. */
function commitmentProblems(receipt: Receipt, message: Uint8Array): string[] {
  const m = json(message);
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

function isRevocationOf(recordId: string): (m: MirrorMessage) => boolean {
  return (m) => {
    if (m.chunk !== null && m.chunk.total !== 1) return false;
    const v = json(m.message);
    return v !== null && v.v === 1 && v.type === "revocation" && v.recordId === recordId;
  };
}

interface MirrorAnswers {
  readonly url: string;
  readonly topic: Answer<TopicInfo>;
  readonly record: Answer<MirrorMessage>;
  readonly announcement: Answer<MirrorMessage>;
  readonly scan: Answer<ScanResult>;
}

const notAllAnswered = "not every mirror node answered (see mirrors)";

/** Verifies a receipt for a document. Never throws for anything a receipt or a mirror node holds. */
export async function verifyReceipt(receipt: Receipt, options: VerifyOptions): Promise<Report> {
  const minMirrors = options.minMirrors ?? DEFAULT_MIN_MIRRORS;
  if (!Number.isSafeInteger(minMirrors) || minMirrors < 1) throw new TypeError("minMirrors must be an integer ≥ 1");
  const docHash = typeof options.docHash === "string" ? options.docHash.toLowerCase() : "";
  if (!DOC_HASH_RE.test(docHash)) throw new TypeError("docHash must be sha256: and 64 hex digits");
  const offline = options.offline === true;
  const checks: Check[] = [];
  const add = (name: CheckName, status: Check["status"], detail: string, evidence?: Record<string, unknown>) => checks.push(evidence === undefined ? { name, status, detail } : { name, status, detail, evidence });

  // ---- Local checks: the document, the kind, the payloads, the signatures.
  const documentOk = docHash === receipt.originalDocHash;
  add("documentHash", documentOk ? "pass" : "fail", documentOk ? "the document's SHA-256 is the receipt's" : "the document's SHA-256 is not the receipt's: this receipt is for another document", { document: docHash, receipt: receipt.originalDocHash });
  // `kind` is in no signature: it is bound to the signer's type, which the key announcement's type binds in turn.
  const expectedKind = receipt.signerType === "user" ? "pdf_embedded" : "record_only";
  const kindOk = receipt.kind === expectedKind;
  add("kind", kindOk ? "pass" : "fail", kindOk ? `${receipt.kind}, as every record signed by ${receipt.signerType === "user" ? "a person" : "an organisation"} is` : `${receipt.kind} does not go with signerType ${receipt.signerType} (expected ${expectedKind}): the receipt was altered`, { kind: receipt.kind, signerType: receipt.signerType });

  const signerFingerprint = keyFingerprint(receipt.signer.algorithm, receipt.signer.publicKey);
  const sealFingerprint = keyFingerprint(receipt.seal.algorithm, receipt.seal.publicKey);
  const recordPayload = recordPayloadV1({ recordId: receipt.recordId, docHash: receipt.originalDocHash, signedAtMs: rfc3339MsToMillis(receipt.authenticatedAt)!, signerFingerprint });
  const recordPayloadOk = equalBytes(recordPayload, receipt.signer.payload);
  add("recordPayload", recordPayloadOk ? "pass" : "fail", recordPayloadOk ? "recomputed from the record's id, hash, time and signer key: equal" : "the receipt's signer.payload is not the record payload of its own fields", {
    signerKeyFingerprint: bytesToHex(signerFingerprint),
    recomputedSha256: sha256Text(recordPayload),
    receiptSha256: sha256Text(receipt.signer.payload),
  });
  const signerOk = verifySignature(receipt.signer, recordPayload);
  add("signerSignature", signerOk ? "pass" : "fail", signerOk ? `${receipt.signer.algorithm} signature of the ${receipt.signerType === "org" ? "organisation" : "signer"}'s key verifies` : "the signer's signature does not verify over the record payload", {
    algorithm: receipt.signer.algorithm,
    signatureSha256: sha256Text(receipt.signer.signature),
  });
  const sealPayload = sealPayloadV1(recordPayload, receipt.signer.signature, sealFingerprint);
  const sealPayloadOk = equalBytes(sealPayload, receipt.seal.payload);
  add("sealPayload", sealPayloadOk ? "pass" : "fail", sealPayloadOk ? "recomputed from the record payload, the signature and the seal key: equal" : "the receipt's seal.payload is not the seal payload of its own fields", {
    sealKeyFingerprint: bytesToHex(sealFingerprint),
    recomputedSha256: sha256Text(sealPayload),
    receiptSha256: sha256Text(receipt.seal.payload),
  });
  const sealOk = verifySignature(receipt.seal, sealPayload);
  add("sealSignature", sealOk ? "pass" : "fail", sealOk ? "the seal signature verifies (whose seal key it is, the key announcement and the identity say)" : "the seal signature does not verify over the seal payload", { algorithm: receipt.seal.algorithm, signatureSha256: sha256Text(receipt.seal.signature) });
  const localOk = documentOk && kindOk && recordPayloadOk && signerOk && sealPayloadOk && sealOk;

  // ---- The ledger.
  const ledgerChecks: CheckName[] = ["mirrors", "ledgerMessage", "messageCommitments", "keyAnnouncement", "topicSubmitKey", "revocationScan", "identity"];
  const inclusionOk = receipt.anchor.inclusion === null;
  const network = receipt.anchor.network;
  const isPublic = isPublicNetwork(network);
  // The user's and the trust file's mirror nodes, then the built-in ones: never the receipt's own.
  const planned = planMirrors(network, options.mirrors, options.trust ?? null, options.builtinMirrors !== false);
  type Rest = Pick<Report, "identity" | "person" | "mirrors" | "mirrorSources" | "witnesses" | "revocation">;
  const finish = (verdict: Verdict, rest: Rest): Report => {
    add("inclusion", inclusionOk ? "pass" : "fail", inclusionOk ? "none: the record is its own ledger message" : "an inclusion proof this verifier cannot check", inclusionOk ? undefined : { inclusion: receipt.anchor.inclusion });
    // The order of docs/receipts.md §4.3.
    return {
      verdict,
      recordId: receipt.recordId,
      originalDocHash: receipt.originalDocHash,
      network,
      public: isPublic,
      identity: rest.identity,
      person: rest.person,
      mirrors: rest.mirrors,
      mirrorSources: rest.mirrorSources,
      witnesses: rest.witnesses,
      suggestedMirrors: receipt.mirrorNodes,
      minMirrors,
      offline,
      revocation: rest.revocation,
      checks,
    };
  };

  if (!localOk || offline) {
    const why = offline ? "offline: the ledger was not consulted" : "not consulted: a check above failed";
    for (const name of ledgerChecks) add(name, "skipped", why);
    const verdict: Verdict = !documentOk ? "no_record" : !localOk ? "signature_invalid" : "unverifiable";
    return finish(verdict, { identity: null, person: null, mirrors: [], mirrorSources: [], witnesses: 0, revocation: null });
  }

  const resolved = await resolveWitnesses(planned, options.resolveHost ?? nameResolver);
  const chosen = resolved.mirrors.map((m) => m.url);
  const doFetch: FetchFn = options.fetch ?? webFetch;
  const maxPages = options.maxScanPages ?? DEFAULT_MAX_SCAN_PAGES;
  const { anchor, keyAnnouncement: ka } = receipt;
  const unanswered = (reason: string): Answer<never> => ({ kind: "failed", reason });
  const answers: MirrorAnswers[] = await Promise.all(
    resolved.mirrors.map(async (m) => {
      const url = m.url;
      if (m.failed !== null) {
        const failed = unanswered(`its host does not resolve (${m.failed})`);
        return { url, topic: failed, record: failed, announcement: failed, scan: failed };
      }
      const r = mirrorReader(url, { fetch: doFetch, timeoutMs: options.timeoutMs, addresses: m.addresses });
      const [topic, record, announcement, scan] = await Promise.all([
        r.topic(anchor.topicId),
        r.message(anchor.topicId, anchor.sequenceNumber),
        r.message(ka.topicId, ka.sequenceNumber),
        r.scanAfter(anchor.topicId, anchor.consensusAt, {
          maxPages,
          keep: isRevocationOf(receipt.recordId),
          onPage: (pages, scanned) => {
            if (pages >= 2) options.onProgress?.(`${url}: revocation scan of ${anchor.topicId}, page ${pages}, ${scanned} messages`);
          },
        }),
      ]);
      return { url: r.url, topic, record, announcement, scan };
    }),
  );

  // mirrors
  const failures = answers.flatMap((a) =>
    (["topic", "record", "announcement", "scan"] as const).flatMap((what) => {
      const ans = a[what];
      return ans.kind === "failed" ? [{ mirror: a.url, request: what, reason: ans.reason }] : [];
    }),
  );
  const hosts = resolved.hosts;
  const enough = hosts >= minMirrors;
  const mirrorsOk = enough && failures.length === 0;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  add(
    "mirrors",
    mirrorsOk ? "pass" : "fail",
    !enough
      ? tooFewWitnesses(network, resolved.mirrors, hosts, minMirrors, receipt.mirrorNodes.length > 0, options.howToAddMirror ?? "with --mirror URL")
      : failures.length > 0
        ? `${failures[0]!.mirror} did not answer as a mirror node: ${failures[0]!.reason}${failures.length > 1 ? ` (and ${failures.length - 1} more)` : ""}`
        : `${plural(chosen.length, "mirror node")} on ${plural(hosts, "distinct host")} asked, every one answered${minMirrors < DEFAULT_MIN_MIRRORS ? ` (minimum lowered to ${minMirrors}: a weakened check)` : ""}`,
    {
      chosen,
      sources: Object.fromEntries(resolved.mirrors.map((m) => [m.url, m.source])),
      addresses: Object.fromEntries(resolved.mirrors.map((m) => [m.url, m.failed === null ? m.addresses : m.failed])),
      distinctHosts: hosts,
      minMirrors,
      failures,
    },
  );

  const pick = <T>(what: "topic" | "record" | "announcement" | "scan") => answers.map((a) => ({ url: a.url, answer: a[what] as Answer<T> }));
  const record = agree(pick<MirrorMessage>("record"), messageKey);
  const announcement = agree(pick<MirrorMessage>("announcement"), messageKey);
  const topic = agree(pick<TopicInfo>("topic"), topicKey);
  const scan = agree(pick<ScanResult>("scan"), scanKey);
  const perMirror = <T>(what: "record" | "announcement", show: (m: MirrorMessage) => T) =>
    Object.fromEntries(answers.map((a) => [a.url, a[what].kind === "found" ? show((a[what] as { value: MirrorMessage }).value) : a[what].kind]));
  const showMessage = (m: MirrorMessage) => ({ consensusAt: m.consensusAt, messageSha256: sha256Text(m.message), runningHash: bytesToBase64(m.runningHash) });

  // ledgerMessage
  let ledgerMismatch = false;
  let ledgerRecord: MirrorMessage | null = null;
  if (record.state === "failed") add("ledgerMessage", "skipped", notAllAnswered);
  else if (record.state === "disagree") add("ledgerMessage", "fail", `mirror nodes disagree on message #${anchor.sequenceNumber} of ${anchor.topicId}`, { mirrors: perMirror("record", showMessage) });
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

  // messageCommitments: over the ledger's bytes, the authority.
  let commitmentsOk = false;
  if (ledgerRecord === null) add("messageCommitments", "skipped", "no ledger message that every mirror node agrees on");
  else {
    const problems = commitmentProblems(receipt, ledgerRecord.message);
    commitmentsOk = problems.length === 0;
    add("messageCommitments", commitmentsOk ? "pass" : "fail", commitmentsOk ? "the message commits to this record's id, hash, signed time, key and both signatures" : `the ledger message does not commit to this record: ${problems.join(", ")}`, {
      message: utf8(ledgerRecord.message) ?? bytesToBase64(ledgerRecord.message),
    });
  }

  // keyAnnouncement
  let announcementOk = false;
  let claim: { orgId: string; name: string | null; domain: string | null } | null = null;
  let person: Report["person"] = null;
  if (ka.topicId !== anchor.topicId) add("keyAnnouncement", "fail", `the announcement is on topic ${ka.topicId}, the record on ${anchor.topicId}`);
  else if (announcement.state === "failed") add("keyAnnouncement", "skipped", notAllAnswered);
  else if (announcement.state === "disagree") add("keyAnnouncement", "fail", `mirror nodes disagree on the announcement, message #${ka.sequenceNumber}`, { mirrors: perMirror("announcement", showMessage) });
  else if (announcement.state === "absent") add("keyAnnouncement", "fail", `no mirror node has the announcement, message #${ka.sequenceNumber} on ${ka.topicId}`);
  else {
    const m = announcement.value;
    const problems: string[] = [];
    if (!equalBytes(m.message, ka.message)) problems.push("its bytes are not the receipt's");
    if (m.consensusAt !== ka.consensusAt) problems.push("its consensus time is not the receipt's");
    const a = json(m.message);
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

  // topicSubmitKey
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

  // revocationScan
  let revocation: Report["revocation"] = null;
  const claimed = receipt.revocation === null ? null : { reason: receipt.revocation.reason, revokedAt: receipt.revocation.revokedAt, sequenceNumber: receipt.revocation.anchor.sequenceNumber };
  if (scan.state === "failed") add("revocationScan", "skipped", notAllAnswered);
  else if (scan.state === "disagree") {
    const counts = Object.fromEntries(answers.map((a) => [a.url, a.scan.kind === "found" ? a.scan.value.kept.map((m) => m.sequenceNumber) : a.scan.kind]));
    add("revocationScan", "fail", "mirror nodes disagree on the revocations of this record", { revocationsByMirror: counts });
  } else {
    const kept = scan.state === "found" ? scan.value.kept : [];
    const scanned = Object.fromEntries(answers.map((a) => [a.url, a.scan.kind === "found" ? a.scan.value.scanned : 0]));
    const first = kept[0];
    if (first === undefined) {
      add("revocationScan", "pass", `no revocation of this record on ${anchor.topicId} after its message${claimed !== null ? " (the receipt names one; the ledger does not have it)" : ""}`, { scannedByMirror: scanned, receiptRevocation: claimed });
    } else {
      const r = json(first.message)!;
      revocation = { reason: typeof r.reason === "string" ? r.reason : "", revokedAt: typeof r.revokedAt === "string" ? r.revokedAt : "", sequenceNumber: first.sequenceNumber, consensusAt: first.consensusAt };
      add("revocationScan", "fail", `revoked: ${revocation.reason} at ${revocation.revokedAt} (message #${first.sequenceNumber}, consensus ${first.consensusAt})`, {
        revocations: kept.map((m) => ({ sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, message: utf8(m.message) })),
        scannedByMirror: scanned,
        receiptRevocation: claimed,
      });
    }
  }

  // identity: only once the announcement is established on the ledger; its names are claims.
  let identity: Identity | null = null;
  if (!announcementOk || claim === null) add("identity", "skipped", "no key announcement established on the ledger, so no claim to confirm");
  else {
    identity = await confirmIdentity({
      network,
      topicId: anchor.topicId,
      keyFingerprint: bytesToHex(signerFingerprint),
      claim: { ...claim, personal: receipt.signerType === "user" },
      trust: options.trust ?? null,
      fetch: options.lookupDomain === false ? null : doFetch,
      resolveTxt: options.resolveTxt ?? null,
      timeoutMs: options.timeoutMs ?? MIRROR_TIMEOUT_MS,
    });
    const status = identity.status === "confirmed" ? "pass" : identity.status === "mismatch" ? "fail" : "warn";
    add("identity", status, `${identity.status}${identity.method === null ? "" : ` (${identity.method})`}: ${identity.detail}`, identity.evidence);
  }

  const disagree = [record, announcement, topic, scan].some((a) => a.state === "disagree");
  const verdict: Verdict =
    !mirrorsOk || !inclusionOk
      ? "unverifiable"
      : disagree
        ? "inconsistent_mirrors"
        : record.state === "absent"
          ? "no_record"
          : ledgerMismatch || !commitmentsOk || !announcementOk || !submitKeyOk || identity?.status === "mismatch"
            ? "signature_invalid"
            : revocation !== null
              ? "revoked"
              : receipt.signerType === "user"
                ? "verified"
                : "verified_org";
  return finish(verdict, {
    identity,
    person: announcementOk ? person : null,
    mirrors: chosen,
    mirrorSources: resolved.mirrors.map((m) => m.source),
    witnesses: hosts,
    revocation,
  });
}

/** The mirrors check's detail when there are fewer distinct hosts than the minimum: what is missing, and how to add it. */
function tooFewWitnesses(network: Network, mirrors: readonly { url: string; host: number }[], hosts: number, minMirrors: number, receiptSuggests: boolean, how: string): string {
  if (mirrors.length === 0) {
    if (network === "local") return `network local has no built-in mirror nodes: name the local ledger's ${how} (a local development ledger proves nothing publicly)`;
    return `no mirror node to ask for a minimum of ${minMirrors}: add one ${how}${receiptSuggests ? " (the receipt suggests some; they are asked only when you name them)" : ""}`;
  }
  const shared = mirrors.filter((m, i) => mirrors.findIndex((o) => o.host === m.host) !== i).map((m) => `${m.url} is on the same host as ${mirrors.find((o) => o.host === m.host)!.url}`);
  return `only ${hosts} distinct host${hosts === 1 ? "" : "s"} among the mirror nodes for a minimum of ${minMirrors}${shared.length > 0 ? ` (${shared.join("; ")})` : ""}: add a mirror node on another host ${how}`;
}
