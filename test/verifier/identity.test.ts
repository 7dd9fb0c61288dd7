/**
 * Who made the record (src/verifier/identity.ts, docs/receipts.md §6): the key announcement's
 * names are a claim, confirmed only by a trust file pin, the claimed domain's
 * /.well-known/docverify.json over https, or its `_docverify` TXT record; contradicted (mismatch)
 * when one of them says otherwise; otherwise left a claim. Driven with a fake fetch and a fake
 * TXT resolver, and the TXT record's parser on its own.
 */
import { describe, expect, test } from "bun:test";
import { confirmIdentity, parseTxtRecord, type Identity } from "../../src/verifier/identity.ts";
import type { FetchFn, FetchInit } from "../../src/verifier/mirror.ts";
import { parseTrustFile, type TrustFile } from "../../src/verifier/trust.ts";
import { ORG_ID, pinnedOrganisation, TOPIC, trustFileText } from "./fixtures.ts";

const FP = "ab".repeat(32);
const OTHER_FP = "cd".repeat(32);
const DOMAIN = "acme.example";
const WELL_KNOWN = `https://${DOMAIN}/.well-known/docverify.json`;
const TXT_NAME = `_docverify.${DOMAIN}`;

/** What the domain's web address answers: a document (200), another status, or an error (unreachable). */
type Web = { status: number; body: unknown } | Error;

/** A fetch serving `web` at the well-known URL (anything else is unreachable); the requests are recorded. */
function fakeFetch(web: Web | undefined, asked: [string, FetchInit | undefined][] = []): FetchFn {
  return async (url, init) => {
    asked.push([url, init]);
    if (url !== WELL_KNOWN || web === undefined) throw new Error(`getaddrinfo ENOTFOUND ${new URL(url).hostname}`);
    if (web instanceof Error) throw web;
    return { status: web.status, text: async () => (typeof web.body === "string" ? web.body : JSON.stringify(web.body)) };
  };
}

/** TXT records of `_docverify.DOMAIN` (undefined: no such name, as DNS answers NXDOMAIN); the names asked are recorded. */
function fakeTxt(records: string[][] | undefined, asked: string[] = []): (name: string) => Promise<string[][]> {
  return async (name) => {
    asked.push(name);
    if (name !== TXT_NAME || records === undefined) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return records;
  };
}

/** The document docverify serves at /.well-known/docverify.json, listing `entries`. */
const doc = (...entries: Record<string, unknown>[]) => ({ status: 200, body: { v: 1, service: `https://${DOMAIN}`, organisations: entries, sealKeys: [] } });
const entry = (over: Record<string, unknown> = {}) => ({ orgId: ORG_ID, name: "Acme Certification Ltd", domain: DOMAIN, network: "testnet", topicId: TOPIC, keys: [{ algorithm: "ML-DSA-65", fingerprint: FP, announcedAt: null }], ...over });
const txt = (topic = TOPIC, network = "testnet") => [[`v=docverify1; network=${network}; topic=${topic}`]];
const trustWith = (...organisations: Record<string, unknown>[]): TrustFile => parseTrustFile(trustFileText({ organisations }));
const pin = (over: Record<string, unknown> = {}) => pinnedOrganisation({ keys: [{ algorithm: "ML-DSA-65", fingerprint: FP }], ...over });

interface Case {
  readonly claim?: Partial<{ name: string | null; domain: string | null; orgId: string; personal: boolean }>;
  readonly trust?: TrustFile;
  readonly web?: Web;
  readonly dns?: string[][];
  /** null: the shell cannot consult it (the page has no DNS; --offline). */
  readonly fetch?: null;
  readonly resolveTxt?: null;
}

async function identify(c: Case, asked: { web: [string, FetchInit | undefined][]; dns: string[] } = { web: [], dns: [] }): Promise<Identity> {
  return confirmIdentity({
    network: "testnet",
    topicId: TOPIC,
    keyFingerprint: FP,
    recordSequenceNumber: 2,
    claim: { orgId: ORG_ID, name: "Acme Ltd", domain: DOMAIN, personal: false, ...c.claim },
    trust: c.trust ?? null,
    fetch: c.fetch === null ? null : fakeFetch(c.web, asked.web),
    resolveTxt: c.resolveTxt === null ? null : fakeTxt(c.dns, asked.dns),
    timeoutMs: 1_000,
  });
}

describe("confirmed", () => {
  test("by the trust file: its name and domain as fact, and neither the web nor DNS is asked", async () => {
    const asked = { web: [] as [string, FetchInit | undefined][], dns: [] as string[] };
    const id = await identify({ trust: trustWith(pin({ name: "Acme Certification Ltd", domain: "acme-cert.example" })), web: doc(entry({ topicId: "0.0.7" })), dns: txt("0.0.7") }, asked);
    expect(id).toMatchObject({
      status: "confirmed",
      method: "trust-file",
      domain: "acme-cert.example",
      confirmedName: "Acme Certification Ltd",
      claimedName: "Acme Ltd",
      claimedOrgId: ORG_ID,
      claimedDomain: DOMAIN,
      detail: `the trust file pins topic ${TOPIC} on testnet and this key to "Acme Certification Ltd"`,
    });
    expect(asked).toEqual({ web: [], dns: [] });
  });

  test("by the domain's well-known document, fetched with https-only redirects: the document's name as fact", async () => {
    const asked = { web: [] as [string, FetchInit | undefined][], dns: [] as string[] };
    const id = await identify({ web: doc(entry({ topicId: "0.0.1", keys: [] }), entry()) }, asked);
    expect(id).toMatchObject({ status: "confirmed", method: "https", domain: DOMAIN, confirmedName: "Acme Certification Ltd", claimedName: "Acme Ltd", detail: `${WELL_KNOWN} lists topic ${TOPIC} on testnet and this key` });
    expect(asked.web.map(([url, init]) => [url, init?.redirects])).toEqual([[WELL_KNOWN, "https"]]);
    // DNS is asked too: its contradiction would outweigh the confirmation.
    expect(asked.dns).toEqual([TXT_NAME]);
  });

  test("by DNS: the organisation of the domain, no name (DNS names none)", async () => {
    const id = await identify({ dns: [["v=spf1 -all"], ["v=docverify1; network=testnet; topic=0.0.7"], ...txt()] });
    expect(id).toMatchObject({ status: "confirmed", method: "dns", domain: DOMAIN, confirmedName: null, detail: `DNS TXT ${TXT_NAME} names topic ${TOPIC} on testnet` });
  });

  test("by DNS, the network written in capitals: the same network, not a contradiction", async () => {
    expect(await identify({ dns: txt(TOPIC, "TESTNET") })).toMatchObject({ status: "confirmed", method: "dns" });
  });

  test("by both: https is the method (it names the organisation)", async () => {
    const id = await identify({ web: doc(entry()), dns: txt() });
    expect(id).toMatchObject({ status: "confirmed", method: "https", confirmedName: "Acme Certification Ltd" });
    expect(id.evidence).toMatchObject({ https: { url: WELL_KNOWN }, dns: { name: TXT_NAME } });
  });
});

describe("unconfirmed: no root speaks, the claim stays a claim", () => {
  const cases: [string, Case, string][] = [
    ["no domain claimed, no trust file", { claim: { domain: null } }, "the announcement names no domain, and no trust file pins this topic"],
    ["no domain claimed, a trust file about others", { claim: { domain: null }, trust: trustWith(pin({ orgId: "0190f5a3-0000-7000-8000-0000000000ff", name: "Other Ltd", domain: "other.example", topicId: "0.0.7" })) }, "the announcement names no domain, and no trust file pins this topic"],
    ["a claimed domain that is not a host name", { claim: { domain: "Acme.Example" } }, "the announced domain is not a host name"],
    ["the domain unreachable, no TXT record", {}, `${WELL_KNOWN} could not be read: getaddrinfo ENOTFOUND ${DOMAIN}; DNS TXT ${TXT_NAME}: no such record`],
    ["a certificate not trusted", { web: new Error("unable to verify the first certificate") }, `${WELL_KNOWN} could not be read: unable to verify the first certificate; DNS TXT ${TXT_NAME}: no such record`],
    ["the document missing (404)", { web: { status: 404, body: "not found" } }, `${WELL_KNOWN} answered HTTP 404; DNS TXT ${TXT_NAME}: no such record`],
    ["the document not JSON", { web: { status: 200, body: "<html>" } }, `${WELL_KNOWN} could not be read:`],
    ["the document not docverify's", { web: { status: 200, body: { hello: "world" } } }, `${WELL_KNOWN} is not a docverify identity document`],
    ["TXT records, none docverify's", { dns: [["v=spf1 -all"], ["google-site-verification=x"]] }, `${WELL_KNOWN} could not be read: getaddrinfo ENOTFOUND ${DOMAIN}; DNS TXT ${TXT_NAME} holds no v=docverify1 record`],
    ["nothing can be consulted (no fetch, no DNS)", { fetch: null, resolveTxt: null, web: doc(entry({ topicId: "0.0.7" })) }, "the domain could not be consulted"],
  ];
  for (const [what, c, detail] of cases) {
    test(what, async () => {
      const id = await identify(c);
      expect(id).toMatchObject({ status: "unconfirmed", method: null, confirmedName: null, claimedName: "Acme Ltd", claimedOrgId: ORG_ID });
      expect(id.detail).toStartWith(detail);
    });
  }

  test("the domain reported is the claimed one, or none", async () => {
    expect((await identify({})).domain).toBe(DOMAIN);
    expect((await identify({ claim: { domain: null } })).domain).toBeNull();
  });

  test("a DNS failure other than no record says what it was", async () => {
    const id = await confirmIdentity({
      network: "testnet",
      topicId: TOPIC,
      keyFingerprint: FP,
      recordSequenceNumber: 2,
      claim: { orgId: ORG_ID, name: "Acme Ltd", domain: DOMAIN, personal: false },
      trust: null,
      fetch: null,
      resolveTxt: async () => {
        throw Object.assign(new Error("queryTxt ETIMEOUT _docverify.acme.example"), { code: "ETIMEOUT" });
      },
      timeoutMs: 1_000,
    });
    expect(id).toMatchObject({ status: "unconfirmed", detail: `DNS TXT ${TXT_NAME}: queryTxt ETIMEOUT _docverify.acme.example` });
  });
});

describe("mismatch: a root contradicts the claim", () => {
  const cases: [string, Case, string][] = [
    ["the trust file pins the claimed orgId on another topic", { trust: trustWith(pin({ name: "Renamed Ltd", domain: null, topicId: "0.0.7" })) }, `the trust file pins "Renamed Ltd" to topic 0.0.7 on testnet, not ${TOPIC} on testnet`],
    ["the trust file pins the claimed orgId on another network", { trust: trustWith(pin({ network: "mainnet" })) }, `the trust file pins "Acme Ltd" to topic ${TOPIC} on mainnet, not ${TOPIC} on testnet`],
    ["the trust file pins the claimed name on another topic", { trust: trustWith(pin({ orgId: "0190f5a3-0000-7000-8000-0000000000ff", domain: null, topicId: "0.0.7" })) }, `the trust file pins "Acme Ltd" to topic 0.0.7 on testnet`],
    ["the trust file pins the claimed domain on another topic", { trust: trustWith(pin({ orgId: "0190f5a3-0000-7000-8000-0000000000ff", name: "Acme Holdings", topicId: "0.0.7" })) }, `the trust file pins "Acme Holdings" to topic 0.0.7 on testnet`],
    ["the trust file pins this topic with other keys", { trust: trustWith(pin({ keys: [{ algorithm: "ML-DSA-65", fingerprint: OTHER_FP }] })), web: doc(entry()), dns: txt() }, `the trust file pins topic ${TOPIC} on testnet to "Acme Ltd" with other keys than this record's`],
    ["the document lists other topics only", { web: doc(entry({ topicId: "0.0.7" }), entry({ topicId: "0.0.8", network: "mainnet" })) }, `${DOMAIN} lists 0.0.7 on testnet, 0.0.8 on mainnet, not ${TOPIC} on testnet`],
    ["the document lists no topic at all", { web: doc() }, `${DOMAIN} lists no topic, not ${TOPIC} on testnet`],
    ["the document lists this topic on another network", { web: doc(entry({ network: "mainnet" })) }, `${DOMAIN} lists ${TOPIC} on mainnet, not ${TOPIC} on testnet`],
    ["the document lists this topic with other keys", { web: doc(entry({ keys: [{ algorithm: "ML-DSA-65", fingerprint: OTHER_FP, announcedAt: null }] })) }, `${DOMAIN} lists topic ${TOPIC} with other keys than this record's`],
    ["the TXT record names another topic", { dns: txt("0.0.7") }, `DNS TXT ${TXT_NAME} names 0.0.7 on testnet, not ${TOPIC} on testnet`],
    ["the TXT record names this topic on another network", { dns: txt(TOPIC, "mainnet") }, `DNS TXT ${TXT_NAME} names ${TOPIC} on mainnet, not ${TOPIC} on testnet`],
    ["https confirms but DNS contradicts", { web: doc(entry()), dns: txt("0.0.7") }, `DNS TXT ${TXT_NAME} names 0.0.7 on testnet, not ${TOPIC} on testnet`],
    ["DNS confirms but https contradicts", { web: doc(entry({ topicId: "0.0.7" })), dns: txt() }, `${DOMAIN} lists 0.0.7 on testnet, not ${TOPIC} on testnet`],
  ];
  for (const [what, c, detail] of cases) {
    test(what, async () => {
      const id = await identify(c);
      expect(id).toMatchObject({ status: "mismatch", method: null, confirmedName: null, claimedName: "Acme Ltd", claimedOrgId: ORG_ID, claimedDomain: DOMAIN });
      // The detail names the root that contradicts, not one that confirms.
      expect(id.detail).toStartWith(detail);
      if (what.includes("confirms but")) expect(id.detail).not.toContain("lists topic");
    });
  }
});

describe("a person's key", () => {
  const personal = { name: null, personal: true };

  test("confirmed by the trust file on the topic alone: a trust file pins the organisation's keys, not its people's", async () => {
    const id = await identify({ claim: personal, trust: trustWith(pin({ keys: [{ algorithm: "ML-DSA-65", fingerprint: OTHER_FP }] })) });
    expect(id).toMatchObject({ status: "confirmed", method: "trust-file", confirmedName: "Acme Ltd", claimedName: null, detail: `the trust file pins topic ${TOPIC} on testnet to "Acme Ltd"` });
  });

  test("confirmed by the document on the topic alone", async () => {
    const id = await identify({ claim: personal, web: doc(entry({ keys: [{ algorithm: "ML-DSA-65", fingerprint: OTHER_FP, announcedAt: null }] })) });
    expect(id).toMatchObject({ status: "confirmed", method: "https", confirmedName: "Acme Certification Ltd", detail: `${WELL_KNOWN} lists topic ${TOPIC} on testnet` });
  });

  test("still contradicted by a pin or a document naming another topic", async () => {
    expect((await identify({ claim: personal, trust: trustWith(pin({ topicId: "0.0.7" })) })).status).toBe("mismatch");
    expect((await identify({ claim: personal, web: doc(entry({ topicId: "0.0.7" })) })).status).toBe("mismatch");
  });
});

describe("parseTxtRecord", () => {
  const cases: [string, string[], { network: string; topic: string } | null][] = [
    ["the documented record", ["v=docverify1; network=testnet; topic=0.0.5012345"], { network: "testnet", topic: "0.0.5012345" }],
    ["split into several strings (one text)", ["v=docverify1; netw", "ork=testnet; topic=0.0.50", "12345"], { network: "testnet", topic: "0.0.5012345" }],
    ["without spaces", ["v=docverify1;network=mainnet;topic=0.0.7"], { network: "mainnet", topic: "0.0.7" }],
    ["with spaces around everything and a trailing ;", ["  v=docverify1 ;  network = previewnet ;topic =  0.0.7 ; "], { network: "previewnet", topic: "0.0.7" }],
    ["the version, the field names and the network in any case", ["V=DocVerify1; NETWORK=Testnet; Topic=0.0.7"], { network: "testnet", topic: "0.0.7" }],
    ["the fields in another order, with one it does not know", ["v=docverify1; topic=0.0.7; comment=hello; network=testnet"], { network: "testnet", topic: "0.0.7" }],
    ["empty parts and a part without =", ["v=docverify1;; network=testnet; junk; topic=0.0.7"], { network: "testnet", topic: "0.0.7" }],
    ["another service's record", ["v=spf1 include:_spf.example -all"], null],
    ["another version", ["v=docverify2; network=testnet; topic=0.0.7"], null],
    ["the version not first", ["network=testnet; v=docverify1; topic=0.0.7"], null],
    ["no network", ["v=docverify1; topic=0.0.7"], null],
    ["no topic", ["v=docverify1; network=testnet"], null],
    ["empty", [""], null],
    ["no strings", [], null],
  ];
  for (const [what, strings, expected] of cases) {
    test(what, () => {
      expect(parseTxtRecord(strings)).toEqual(expected);
    });
  }
});

describe("a key's window, as a root gives it (the record's message is #2 here)", () => {
  test("the domain's document lists this key replaced by #1: mismatch, saying so; replaced by #3: confirmed", async () => {
    const replaced = (by: number) => doc(entry({ keys: [{ algorithm: "ML-DSA-65", fingerprint: FP, announcedAt: null, sequenceNumber: 1, replacedAt: "1768469400.000000001", replacedBySequenceNumber: by }] }));
    const early = await identify({ web: replaced(1), dns: txt() });
    expect(early).toMatchObject({ status: "mismatch", detail: `${DOMAIN} lists topic ${TOPIC} with this key, but this key was replaced by message #1, before the record's message #2` });
    expect(await identify({ web: replaced(3), dns: txt() })).toMatchObject({ status: "confirmed", method: "https" });
  });

  test("the trust file pins this key from #5, replacing a key pinned until #5: mismatch; a person's key is held to the topic alone", async () => {
    const keys = [
      { algorithm: "ML-DSA-65", fingerprint: "aa".repeat(32), sequenceNumber: 1, replacedBySequenceNumber: 5 },
      { algorithm: "ML-DSA-65", fingerprint: FP, sequenceNumber: 5 },
    ];
    expect(await identify({ trust: trustWith(pin({ keys })) })).toMatchObject({ status: "mismatch", detail: `the trust file pins this key to "Acme Ltd" on topic ${TOPIC}, but this key was first announced by message #5, after the record's message #2, replacing another key in force there` });
    expect(await identify({ trust: trustWith(pin({ keys })), claim: { personal: true, name: null } })).toMatchObject({ status: "confirmed", method: "trust-file" });
  });
});
