/**
 * Who made the record (docs/receipts.md, "Identity"): the key announcement on the ledger names an
 * organisation, but on a public ledger anyone can open a topic and announce any name, so that
 * name is a claim. It is confirmed only by a root the verifier trusts:
 *
 * - `trust-file`: the user's trust file pins this network and topic (and, for an organisation's
 *   key, this key's fingerprint);
 * - `https`: `https://DOMAIN/.well-known/docverify.json`, fetched with ordinary certificate
 *   validation, lists this network, topic and key fingerprint, DOMAIN being the one the
 *   announcement claims;
 * - `dns` (command-line shells): a `_docverify.DOMAIN` TXT record
 *   `v=docverify1; network=NAME; topic=0.0.N` names this network and topic.
 *
 * `mismatch` when a root contradicts the claim: the trust file pins the claimed organisation (by
 * id, name or domain) elsewhere, or pins this topic to other keys; the claimed domain's document
 * or TXT records name other topics. Anything a root does not say (unreachable, no record, no
 * domain claimed) leaves the identity `unconfirmed`: the claim is reported as a claim.
 */
import type { FetchFn } from "./mirror.ts";
import type { Network } from "./receipt.ts";
import { DOMAIN_RE, outsideWindow, type TrustFile } from "./trust.ts";

export type IdentityStatus = "confirmed" | "unconfirmed" | "mismatch";
export type IdentityMethod = "https" | "dns" | "trust-file";

/** What the key announcement on the ledger claims. */
export interface Claim {
  readonly orgId: string;
  /** The organisation's name; null in a person's key announcement (ids only). */
  readonly name: string | null;
  /** The announced domain, or null when none was announced (or it is not a host name). */
  readonly domain: string | null;
  /** A person's key: pinned keys are the organisation's, so only the topic is compared. */
  readonly personal: boolean;
}

export interface Identity {
  readonly status: IdentityStatus;
  /** How it was confirmed; null unless confirmed. */
  readonly method: IdentityMethod | null;
  /** The domain that confirmed it (or the trust file's), else the claimed domain, else null. */
  readonly domain: string | null;
  /** The organisation's name as a trust root gives it (trust file, or the domain's document); null unless confirmed by one that names it. */
  readonly confirmedName: string | null;
  /** The name the key announcement claims (null for a person's key). Never fact unless confirmed. */
  readonly claimedName: string | null;
  readonly claimedOrgId: string | null;
  readonly claimedDomain: string | null;
  /** One line for people. */
  readonly detail: string;
  readonly evidence: Record<string, unknown>;
}

export interface IdentityOptions {
  readonly network: Network;
  readonly topicId: string;
  /** The signer key's fingerprint, 64 lowercase hex digits. */
  readonly keyFingerprint: string;
  /** The record's message's sequence number: a key pinned with a window must be in force there. */
  readonly recordSequenceNumber: number;
  readonly claim: Claim;
  readonly trust: TrustFile | null;
  /** For the domain's well-known document; null: not consulted (offline). */
  readonly fetch: FetchFn | null;
  /** TXT records of a name; null where DNS cannot be read (the page). */
  readonly resolveTxt: ((name: string) => Promise<string[][]>) | null;
  readonly timeoutMs: number;
}

type Outcome = { status: IdentityStatus; detail: string; confirmedName?: string | null; evidence: Record<string, unknown> };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** `v=docverify1; network=NAME; topic=0.0.N` → its fields; null for a record that is not docverify's. */
export function parseTxtRecord(strings: readonly string[]): { network: string; topic: string } | null {
  // A TXT record may come split into several strings: they are one text.
  const text = strings.join("");
  const fields = new Map<string, string>();
  const parts = text.split(";").map((p) => p.trim());
  if (parts[0]?.toLowerCase() !== "v=docverify1") return null;
  for (const p of parts.slice(1)) {
    if (p === "") continue;
    const eq = p.indexOf("=");
    if (eq <= 0) continue;
    fields.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
  }
  // Network names are lowercase; `network=Testnet` names testnet, not another network to contradict this one.
  const network = fields.get("network")?.toLowerCase();
  const topic = fields.get("topic");
  return network === undefined || topic === undefined ? null : { network, topic };
}

async function byHttps(o: IdentityOptions, domain: string): Promise<Outcome | null> {
  if (o.fetch === null) return null;
  const url = `https://${domain}/.well-known/docverify.json`;
  let body: unknown;
  try {
    const res = await o.fetch(url, { signal: AbortSignal.timeout(o.timeoutMs), headers: { accept: "application/json" }, redirects: "https" });
    if (res.status !== 200) return { status: "unconfirmed", detail: `${url} answered HTTP ${res.status}`, evidence: { url, status: res.status } };
    body = JSON.parse(await res.text());
  } catch (e) {
    return { status: "unconfirmed", detail: `${url} could not be read: ${e instanceof Error ? e.message : String(e)}`, evidence: { url } };
  }
  if (!isObject(body) || !Array.isArray(body.organisations)) return { status: "unconfirmed", detail: `${url} is not a docverify identity document`, evidence: { url } };
  const entries = body.organisations.filter(isObject);
  const here = entries.filter((e) => e.network === o.network && e.topicId === o.topicId);
  const listed = (e: Record<string, unknown>) => Array.isArray(e.keys) && e.keys.some((k) => isObject(k) && k.fingerprint === o.keyFingerprint);
  const topics = entries.map((e) => `${String(e.topicId)} on ${String(e.network)}`);
  if (here.length === 0) return { status: "mismatch", detail: `${domain} lists ${topics.length === 0 ? "no topic" : topics.join(", ")}, not ${o.topicId} on ${o.network}`, evidence: { url, topics } };
  const match = o.claim.personal ? here[0] : here.find(listed);
  if (match === undefined) return { status: "mismatch", detail: `${domain} lists topic ${o.topicId} with other keys than this record's`, evidence: { url, topicId: o.topicId, keyFingerprint: o.keyFingerprint } };
  // A key listed with its window (docs/receipts.md §5) must be in force at the record's place.
  if (!o.claim.personal && Array.isArray(match.keys)) {
    const seq = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) ? v : null);
    const keys = match.keys.filter(isObject).map((k) => ({ fingerprint: String(k.fingerprint), sequenceNumber: seq(k.sequenceNumber), replacedBySequenceNumber: seq(k.replacedBySequenceNumber) }));
    const outside = outsideWindow(keys, o.keyFingerprint, o.recordSequenceNumber);
    if (outside !== null) return { status: "mismatch", detail: `${domain} lists topic ${o.topicId} with this key, but ${outside}`, evidence: { url, entry: match } };
  }
  const name = typeof match.name === "string" ? match.name : null;
  return { status: "confirmed", detail: `${url} lists topic ${o.topicId} on ${o.network}${o.claim.personal ? "" : " and this key"}`, confirmedName: name, evidence: { url, entry: match } };
}

async function byDns(o: IdentityOptions, domain: string): Promise<Outcome | null> {
  if (o.resolveTxt === null) return null;
  const name = `_docverify.${domain}`;
  let records: string[][];
  try {
    records = await o.resolveTxt(name);
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    const why = code === "ENOTFOUND" || code === "ENODATA" ? "no such record" : e instanceof Error ? e.message : String(e);
    return { status: "unconfirmed", detail: `DNS TXT ${name}: ${why}`, evidence: { name } };
  }
  const ours = records.map(parseTxtRecord).filter((r) => r !== null);
  if (ours.length === 0) return { status: "unconfirmed", detail: `DNS TXT ${name} holds no v=docverify1 record`, evidence: { name, records } };
  if (ours.some((r) => r.network === o.network && r.topic === o.topicId)) return { status: "confirmed", detail: `DNS TXT ${name} names topic ${o.topicId} on ${o.network}`, evidence: { name, records } };
  return { status: "mismatch", detail: `DNS TXT ${name} names ${ours.map((r) => `${r.topic} on ${r.network}`).join(", ")}, not ${o.topicId} on ${o.network}`, evidence: { name, records } };
}

/** Confirms the claim, or says why not. Never throws. */
export async function confirmIdentity(o: IdentityOptions): Promise<Identity> {
  const { claim } = o;
  const claimed = { claimedName: claim.name, claimedOrgId: claim.orgId, claimedDomain: claim.domain };
  const result = (status: IdentityStatus, method: IdentityMethod | null, domain: string | null, confirmedName: string | null, detail: string, evidence: Record<string, unknown>): Identity => ({
    status,
    method,
    domain,
    confirmedName,
    ...claimed,
    detail,
    evidence,
  });

  // 1. The trust file: the user's own record of who is where.
  const pins = o.trust?.organisations ?? [];
  const here = pins.filter((p) => p.network === o.network && p.topicId === o.topicId);
  if (here.length > 0) {
    const pin = claim.personal ? here[0]! : here.find((p) => p.keys.some((k) => k.fingerprint === o.keyFingerprint));
    if (pin === undefined) {
      return result("mismatch", null, here[0]!.domain ?? claim.domain, null, `the trust file pins topic ${o.topicId} on ${o.network} to ${JSON.stringify(here[0]!.name)} with other keys than this record's`, { pinned: here });
    }
    const outside = claim.personal ? null : outsideWindow(pin.keys, o.keyFingerprint, o.recordSequenceNumber);
    if (outside !== null) {
      return result("mismatch", null, pin.domain ?? claim.domain, null, `the trust file pins this key to ${JSON.stringify(pin.name)} on topic ${o.topicId}, but ${outside}`, { pinned: pin });
    }
    return result("confirmed", "trust-file", pin.domain, pin.name, `the trust file pins topic ${o.topicId} on ${o.network}${claim.personal ? "" : " and this key"} to ${JSON.stringify(pin.name)}`, { pinned: pin });
  }
  const elsewhere = pins.filter((p) => p.orgId === claim.orgId || (claim.name !== null && p.name === claim.name) || (claim.domain !== null && p.domain === claim.domain));
  if (elsewhere.length > 0) {
    const p = elsewhere[0]!;
    return result("mismatch", null, claim.domain, null, `the trust file pins ${JSON.stringify(p.name)} to topic ${p.topicId} on ${p.network}, not ${o.topicId} on ${o.network}`, { pinned: elsewhere });
  }

  // 2. The claimed domain, by its web address and by DNS.
  if (claim.domain === null) {
    return result("unconfirmed", null, null, null, "the announcement names no domain, and no trust file pins this topic", {});
  }
  if (!DOMAIN_RE.test(claim.domain)) return result("unconfirmed", null, null, null, "the announced domain is not a host name", { domain: claim.domain });
  const [https, dns] = await Promise.all([byHttps(o, claim.domain), byDns(o, claim.domain)]);
  const outcomes = [https, dns].filter((x) => x !== null);
  const evidence = { https: https?.evidence ?? null, dns: dns?.evidence ?? null };
  const details = outcomes.map((x) => x.detail).join("; ");
  // A contradiction from either root outweighs a confirmation from the other.
  const contradictions = outcomes.filter((x) => x.status === "mismatch");
  if (contradictions.length > 0) return result("mismatch", null, claim.domain, null, contradictions.map((x) => x.detail).join("; "), evidence);
  if (https?.status === "confirmed") return result("confirmed", "https", claim.domain, https.confirmedName ?? null, https.detail, evidence);
  if (dns?.status === "confirmed") return result("confirmed", "dns", claim.domain, null, dns.detail, evidence);
  return result("unconfirmed", null, claim.domain, null, outcomes.length === 0 ? "the domain could not be consulted" : details, evidence);
}
