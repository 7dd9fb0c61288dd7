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
 * The local checks are local-checks.ts's (signatures verified with @noble/post-quantum over
 * payloads recomputed from the receipt's fields), the ledger's ledger-checks.ts's, a batched
 * record's inclusion proof batch.ts's; this file asks the mirror nodes, runs the checks in the
 * report's order and gives the verdict (`verdictOf`).
 */
import { announcedOrgId, proveInclusion } from "./batch.ts";
import { bytesToHex } from "./encoding.ts";
import { confirmIdentity, type Identity } from "./identity.ts";
import { checkKeyCompromise, checkKeyWindow, keySubject, restatedClaim, scanKeeps, scanStart } from "./key-checks.ts";
import { agree, checkCommitments, checkKeyAnnouncement, checkLedgerMessage, checkRevocationScan, checkTopicSubmitKey, messageKey, scanKey, topicKey, type MirrorAnswers } from "./ledger-checks.ts";
import { localChecks } from "./local-checks.ts";
import { compareConsensus, MIRROR_TIMEOUT_MS, mirrorReader, webFetch, type Answer, type FetchFn, type MirrorMessage, type TopicInfo, type ScanResult } from "./mirror.ts";
import { DOC_HASH_RE, type Network, type Receipt } from "./receipt.ts";
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
  | "keyWindow"
  | "revocationScan"
  | "keyCompromise"
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
  /**
   * The revocation found on the ledger (never the receipt's own claim): the record's own, or a
   * compromise of its key covering its signed time (reason `KEY_COMPROMISE`, revokedAt the
   * compromise message's consensus time); the earlier of the two by consensus when both are there.
   * A batch message listing the record among its revocations revokes it too: `reason` null and
   * `revokedAt` the batch message's consensus time unless the receipt's `revocation` proves its
   * revocation leaf in that batch (batch.ts).
   */
  readonly revocation: { readonly reason: string | null; readonly revokedAt: string; readonly sequenceNumber: number; readonly consensusAt: string } | null;
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
  /** Pages of 100 messages the topic scan reads per mirror node at most (default 10,000). */
  readonly maxScanPages?: number;
  /** How the user raises that bound, in the words of the shell (default `with --max-scan-pages N`). */
  readonly howToRaiseScan?: string;
}

export const DEFAULT_MIN_MIRRORS = 2;
export const DEFAULT_MAX_SCAN_PAGES = 10_000;
/** What the checks found that the verdict turns on (docs/receipts.md §4.2). */
interface Findings {
  readonly mirrorsOk: boolean;
  /** The anchor stands alone, or its inclusion proof puts the record's leaf in the batch message's tree (batch.ts). */
  readonly inclusionOk: boolean;
  /** Mirror nodes disagree on the record's message, the announcement, the topic or the revocations. */
  readonly disagree: boolean;
  readonly recordAbsent: boolean;
  readonly ledgerMismatch: boolean;
  readonly commitmentsOk: boolean;
  readonly announcementOk: boolean;
  readonly submitKeyOk: boolean;
  /** The record's message lies in its key pair's window on the topic (key-checks.ts). */
  readonly windowOk: boolean;
  readonly identityMismatch: boolean;
  /** A revocation of the record, or a compromise of its key covering its signed time, is on the topic. */
  readonly revoked: boolean;
  readonly signerType: Receipt["signerType"];
}

/** The verdict once the ledger was consulted: the rules of docs/receipts.md §4.2, the first that applies wins. */
export function verdictOf(f: Findings): Verdict {
  return !f.mirrorsOk
    ? "unverifiable"
    : f.disagree
      ? "inconsistent_mirrors"
      : f.recordAbsent
        ? "no_record"
        : f.ledgerMismatch || !f.commitmentsOk || !f.inclusionOk || !f.announcementOk || !f.submitKeyOk || !f.windowOk || f.identityMismatch
          ? "signature_invalid"
          : f.revoked
            ? "revoked"
            : f.signerType === "user"
              ? "verified"
              : "verified_org";
}

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
  const { documentOk, localOk, signerFingerprint, sealFingerprint } = localChecks(receipt, docHash, add);

  // ---- The ledger.
  const ledgerChecks: CheckName[] = ["mirrors", "ledgerMessage", "messageCommitments", "keyAnnouncement", "topicSubmitKey", "keyWindow", "revocationScan", "keyCompromise", "identity"];
  // A batched record's proof, checked against the receipt's batch message (ledgerMessage holds it
  // to the ledger's) for the organisation of the receipt's announcement (keyAnnouncement holds
  // that to the ledger's): local arithmetic, so it is reported offline too.
  const inclusion = proveInclusion(receipt.anchor.message, receipt.anchor.inclusion, announcedOrgId(receipt));
  const inclusionOk = inclusion.ok;
  const network = receipt.anchor.network;
  const isPublic = isPublicNetwork(network);
  // The user's and the trust file's mirror nodes, then the built-in ones: never the receipt's own.
  const planned = planMirrors(network, options.mirrors, options.trust ?? null, options.builtinMirrors !== false);
  type Rest = Pick<Report, "identity" | "person" | "mirrors" | "mirrorSources" | "witnesses" | "revocation">;
  const finish = (verdict: Verdict, rest: Rest): Report => {
    add("inclusion", inclusion.ok ? "pass" : "fail", inclusion.detail, inclusion.evidence);
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
  const subject = keySubject(receipt, signerFingerprint, sealFingerprint);
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
        // From the key's announcement (key-checks.ts), so a replacement before the record is seen.
        r.scanAfter(anchor.topicId, scanStart(receipt), {
          maxPages,
          keep: scanKeeps(subject),
          onPage: (pages, scanned) => {
            if (pages >= 2) options.onProgress?.(`${url}: topic scan of ${anchor.topicId} (revocations, key windows, compromises), page ${pages}, ${scanned} messages`);
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
      return ans.kind === "failed" ? [{ mirror: a.url, request: what, reason: ans.reason, ...(ans.limit ? { scanLimit: true } : {}) }] : [];
    }),
  );
  const scanLimit = failures.find((f) => "scanLimit" in f);
  const hosts = resolved.hosts;
  const enough = hosts >= minMirrors;
  const mirrorsOk = enough && failures.length === 0;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  add(
    "mirrors",
    mirrorsOk ? "pass" : "fail",
    !enough
      ? tooFewWitnesses(network, resolved.mirrors, hosts, minMirrors, receipt.mirrorNodes.length > 0, options.howToAddMirror ?? "with --mirror URL")
      : scanLimit !== undefined
        ? `${scanLimit.mirror}: ${scanLimit.reason}; nothing can be concluded without the rest of the topic: raise the bound ${options.howToRaiseScan ?? "with --max-scan-pages N"} (now ${maxPages} pages of 100 messages)`
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
  const ledger = { receipt, answers, add };
  const { mismatch: ledgerMismatch, message: ledgerRecord } = checkLedgerMessage(ledger, record);
  const commitmentsOk = checkCommitments(ledger, ledgerRecord);
  const { ok: announcementOk, claim, person } = checkKeyAnnouncement(ledger, announcement, { signerFingerprint, sealFingerprint });
  const submitKeyOk = checkTopicSubmitKey(ledger, topic);
  const windowOk = checkKeyWindow(ledger, scan, subject);
  const individual = checkRevocationScan(ledger, scan);
  const compromise = checkKeyCompromise(ledger, scan, subject);
  // The earliest revocation wins: the record's own, or the compromise of its key.
  const revocation = compromise === null || (individual !== null && compareConsensus(individual.consensusAt, compromise.consensusAt) <= 0) ? individual : compromise;

  // identity: only once the announcement is established on the ledger; its names are claims.
  let identity: Identity | null = null;
  // A change of domain or name after the receipt's announcement announced the same pair again: the
  // organisation's claim is its latest on the topic.
  const restated = announcementOk && windowOk ? restatedClaim(subject, scan, receipt.keyAnnouncement.sequenceNumber) : null;
  const claimNow = claim === null || restated === null ? claim : { orgId: claim.orgId, name: receipt.signerType === "user" ? null : restated.name, domain: restated.domain !== null && DOMAIN_RE.test(restated.domain) ? restated.domain : null };
  if (!announcementOk || claim === null || claimNow === null) add("identity", "skipped", "no key announcement established on the ledger, so no claim to confirm");
  else {
    identity = await confirmIdentity({
      network,
      topicId: anchor.topicId,
      keyFingerprint: bytesToHex(signerFingerprint),
      recordSequenceNumber: anchor.sequenceNumber,
      claim: { ...claimNow, personal: receipt.signerType === "user" },
      trust: options.trust ?? null,
      fetch: options.lookupDomain === false ? null : doFetch,
      resolveTxt: options.resolveTxt ?? null,
      timeoutMs: options.timeoutMs ?? MIRROR_TIMEOUT_MS,
    });
    const status = identity.status === "confirmed" ? "pass" : identity.status === "mismatch" ? "fail" : "warn";
    const evidence = restated === null ? identity.evidence : { ...identity.evidence, claimAnnouncedAgainAt: restated.sequenceNumber };
    add("identity", status, `${identity.status}${identity.method === null ? "" : ` (${identity.method})`}: ${identity.detail}`, evidence);
  }

  const verdict = verdictOf({
    mirrorsOk,
    inclusionOk,
    disagree: [record, announcement, topic, scan].some((a) => a.state === "disagree"),
    recordAbsent: record.state === "absent",
    ledgerMismatch,
    commitmentsOk,
    announcementOk,
    submitKeyOk,
    windowOk,
    identityMismatch: identity?.status === "mismatch",
    revoked: revocation !== null,
    signerType: receipt.signerType,
  });
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
