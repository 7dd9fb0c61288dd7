/**
 * verifyReceipt against fake mirror nodes served over HTTP in the real REST shapes (fixtures.ts):
 * every verdict rule of docs/receipts.md §4.2, their order, one byte flipped in each signed
 * thing, mirrors that lie, fail or are down, offline, a lowered minimum, and a paged scan; which
 * mirror nodes are asked (never the receipt's own unless named) and how many hosts they are; the
 * kind bound to the signer's type; the identity, confirmed or a claim; a local ledger's receipt.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { parseReceipt, parseTrustFile, renderReport, verifyReceipt, type FetchFn, type Report, type VerifyOptions } from "../../src/verifier/index.ts";
import { cleanup } from "../support/env.ts";
import {
  buildReceipt,
  deadUrl,
  DOC_HASH,
  fakeMirror,
  OTHER_HASH,
  revocationBytes,
  consensusOf,
  announcementBytes,
  ORG_ID,
  PERSON_ID,
  pinnedOrganisation,
  SIGNER_FINGERPRINT,
  TOPIC,
  trustFileText,
  type Built,
  type FakeMirror,
} from "./fixtures.ts";

afterAll(cleanup);

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

function flip(base64: string, at = 0.5): string {
  const bytes = Buffer.from(base64, "base64");
  bytes[Math.floor(bytes.length * at)]! ^= 0x01;
  return bytes.toString("base64");
}

async function verify(built: Built, mirrors: (FakeMirror | string)[], options: Partial<VerifyOptions> = {}): Promise<Report> {
  const receipt = parseReceipt(JSON.stringify(built.receipt));
  return verifyReceipt(receipt, { docHash: DOC_HASH, mirrors: mirrors.map((m) => (typeof m === "string" ? m : m.url)), builtinMirrors: false, timeoutMs: 2_000, ...options });
}

const check = (r: Report, name: string) => r.checks.find((c) => c.name === name)!;
const statuses = (r: Report) => Object.fromEntries(r.checks.map((c) => [c.name, c.status]));

/** Two honest mirrors over the built ledger. */
function pair(built: Built): [FakeMirror, FakeMirror] {
  return [fakeMirror(built.ledger), fakeMirror(built.ledger)];
}

const lines = (text: string) => text.trimEnd().split("\n");

describe("an honest ledger", () => {
  test("an organisation's record: verified_org, every check passes, the name from the announcement reported as a claim", async () => {
    const built = buildReceipt({ fillers: 4 });
    const [a, b] = pair(built);
    const r = await verify(built, [a, b]);
    expect(r.verdict).toBe("verified_org");
    expect(r.checks.map((c) => c.name)).toEqual(["documentHash", "kind", "recordPayload", "signerSignature", "sealPayload", "sealSignature", "mirrors", "ledgerMessage", "messageCommitments", "keyAnnouncement", "topicSubmitKey", "keyWindow", "revocationScan", "keyCompromise", "identity", "inclusion"]);
    // Nothing the verifier trusts names the organisation: the one check short of a pass is identity's warning.
    expect(r.checks.filter((c) => c.status !== "pass").map((c) => [c.name, c.status])).toEqual([["identity", "warn"]]);
    expect(r.identity).toEqual({
      status: "unconfirmed",
      method: null,
      domain: null,
      confirmedName: null,
      claimedName: "Acme Ltd",
      claimedOrgId: ORG_ID,
      claimedDomain: null,
      detail: "the announcement names no domain, and no trust file pins this topic",
      evidence: {},
    });
    expect(r).toMatchObject({ network: "testnet", public: true, mirrorSources: ["--mirror", "--mirror"], witnesses: 2, suggestedMirrors: ["https://testnet.mirrornode.hedera.com"] });
    expect(r.mirrors).toEqual([a.url, b.url]);
    expect(r.minMirrors).toBe(2);
    expect(r.offline).toBe(false);
    expect(r.revocation).toBeNull();
    // Every mirror was asked for everything.
    for (const m of [a, b]) {
      expect(m.requests).toContain("/api/v1/topics/0.0.5012345");
      expect(m.requests).toContain("/api/v1/topics/0.0.5012345/messages/2");
      expect(m.requests).toContain("/api/v1/topics/0.0.5012345/messages/1");
      // The topic scan starts at the key's announcement (#1), not at the record's message.
      expect(m.requests).toContain(`/api/v1/topics/0.0.5012345/messages?timestamp=gt:${consensusOf(1)}&limit=100&order=asc`);
    }
    // JSON-safe: the report survives a round trip unchanged.
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    const text = lines(renderReport(r));
    expect(text[0]).toStartWith("Verdict: verified_org");
    // The claimed name is never shown as fact.
    expect(text[1]).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "Acme Ltd", id ${ORG_ID}; nothing this verifier trusts confirms it`);
    expect(text).toContain(`Mirror nodes: ${a.url} (--mirror), ${b.url} (--mirror) on 2 distinct hosts (minimum 2)`);
    expect(text).toContain("Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): https://testnet.mirrornode.hedera.com");
    expect(text.join("\n")).not.toContain("WARNING");
    expect(text.join("\n")).not.toContain("Ledger: local");
  });

  test("a person's record: verified, its key announced by ids only (person_key); an organisation's kind of announcement does not bind it", async () => {
    const built = buildReceipt({ signerType: "user" });
    const report = await verify(built, pair(built));
    expect(report.verdict).toBe("verified");
    expect(report.identity).toMatchObject({ status: "unconfirmed", claimedName: null, claimedOrgId: ORG_ID });
    expect(report.person).toEqual({ personId: PERSON_ID });
    expect(renderReport(report)).toContain(`Signed by: person ${PERSON_ID}`);
    expect(renderReport(report)).toContain(`Identity: UNCONFIRMED claim: the ledger announcement claims id ${ORG_ID};`);
    // An organisation's record (kind and signer type both relabelled) whose announcement is a person's: not bound.
    const swapped = buildReceipt({ signerType: "user" });
    swapped.receipt.signerType = "org";
    swapped.receipt.kind = "record_only";
    const r = await verify(swapped, pair(swapped));
    expect(r.verdict).toBe("signature_invalid");
    expect(statuses(r)).toMatchObject({ kind: "pass", keyAnnouncement: "fail" });
    expect(check(r, "keyAnnouncement").detail).toContain("not a version-1 key announcement");
  });

  test("the receipt's mirror nodes are never asked unless the user names them", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const c = fakeMirror(built.ledger);
    const spelledOtherwise = a.url.replace("http://", "HTTP://") + "/";
    built.receipt.mirrorNodes = [spelledOtherwise, b.url, c.url];
    const r = await verify(built, [a.url.replace("http://", "Http://")]);
    expect(r.mirrors).toEqual([a.url]);
    expect(r.suggestedMirrors).toEqual([spelledOtherwise, b.url, c.url]);
    // One witness of the user's is fewer than two: the receipt's suggestions do not make up the number.
    expect(r.verdict).toBe("unverifiable");
    expect(check(r, "mirrors").detail).toBe(`only 1 distinct host among the mirror nodes for a minimum of 2: add a mirror node on another host with --mirror URL`);
    expect(b.requests).toEqual([]);
    expect(c.requests).toEqual([]);
    // The ones not asked are listed as suggestions; the one the user named (spelled otherwise) is not.
    expect(renderReport(r)).toContain(`Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): ${b.url}, ${c.url}\n`);
    // Named, they are asked, all of them, even past the minimum, in the user's order, without duplicates.
    const all = await verify(built, [c, a, b, a.url + "/"]);
    expect(all.mirrors).toEqual([c.url, a.url, b.url]);
    expect(all.verdict).toBe("verified_org");
    expect(b.requests.length).toBeGreaterThan(0);
    expect(c.requests.length).toBeGreaterThan(0);
    expect(renderReport(all)).not.toContain("Suggested by the receipt");
  });

  test("the built-in mirror node of the receipt's network is asked after the user's, unless turned off", async () => {
    const built = buildReceipt();
    const [a, builtin] = pair(built);
    // The built-in testnet mirror node, served here by a fake one.
    const routed: FetchFn = (url, init) => fetch(url.replace("https://testnet.mirrornode.hedera.com", builtin.url), init);
    const r = await verify(built, [a], { builtinMirrors: true, fetch: routed });
    expect(r.verdict).toBe("verified_org");
    expect(r.mirrors).toEqual([a.url, "https://testnet.mirrornode.hedera.com"]);
    expect(r.mirrorSources).toEqual(["--mirror", "built-in"]);
    expect(builtin.requests.length).toBeGreaterThan(0);
    // Asked because it is built in, it is no longer a mere suggestion of the receipt.
    expect(renderReport(r)).not.toContain("Suggested by the receipt");
    const before = builtin.requests.length;
    const off = await verify(built, [a], { builtinMirrors: false, fetch: routed });
    expect(off.mirrors).toEqual([a.url]);
    expect(off.verdict).toBe("unverifiable");
    expect(builtin.requests.length).toBe(before);
  });

  test("a trust file's mirror nodes for the receipt's network come after the user's; another network's are not asked", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const c = fakeMirror(built.ledger);
    const trust = parseTrustFile(trustFileText({ networks: { testnet: { mirrors: [b.url + "/", a.url] }, mainnet: { mirrors: [c.url] } }, organisations: [] }));
    const r = await verify(built, [a], { trust });
    expect(r.verdict).toBe("verified_org");
    expect(r.mirrors).toEqual([a.url, b.url]);
    expect(r.mirrorSources).toEqual(["--mirror", "trust file"]);
    expect(check(r, "mirrors").evidence!.sources).toEqual({ [a.url]: "--mirror", [b.url]: "trust file" });
    expect(renderReport(r)).toContain(`Mirror nodes: ${a.url} (--mirror), ${b.url} (trust file) on 2 distinct hosts (minimum 2)`);
    expect(c.requests).toEqual([]);
  });

  test("a name with control characters is shown escaped, never raw, in the human output", async () => {
    const name = "Acme\u001b[2J\u202eLtd\u0085\u2066x\u200f";
    const built = buildReceipt({ orgName: name });
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("verified_org");
    expect(r.identity!.claimedName).toBe(name);
    const text = renderReport(r);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    const escaped = String.raw`"Acme\u001b[2J\u{202e}Ltd\u{85}\u{2066}x\u{200f}"`;
    expect(lines(text)[1]).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims ${escaped}, id ${ORG_ID};`);
    expect(text).toContain(`an organisation calling itself ${escaped}`);

    // The same name in the identity check's detail (a trust file pinning that name on another topic).
    const trust = parseTrustFile(trustFileText({ organisations: [pinnedOrganisation({ orgId: "0190f5a3-0000-7000-8000-0000000000ff", name, topicId: "0.0.7" })] }));
    const mismatch = await verify(built, pair(built), { trust });
    expect(mismatch.identity!.detail).toBe(`the trust file pins ${JSON.stringify(name)} to topic 0.0.7 on testnet, not ${TOPIC} on testnet`);
    const shown = renderReport(mismatch);
    expect(shown).not.toMatch(/[\u001b\u0085\u200f\u202e\u2066]/);
    expect(lines(shown).find((l) => l.startsWith("  fail  identity "))).toContain(`mismatch: the trust file pins ${escaped} to topic 0.0.7 on testnet`);
    expect(lines(shown)[1]).toStartWith(`Identity: MISMATCH: the ledger announcement claims ${escaped}, id ${ORG_ID}, but the trust file pins ${escaped} to topic 0.0.7`);
  });
});

describe("rule 1 and 2: the document and the signatures, before anything else", () => {
  test("another document: no_record, and no mirror node is asked", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const r = await verify(built, [a, b], { docHash: OTHER_HASH });
    expect(r.verdict).toBe("no_record");
    expect(check(r, "documentHash")).toMatchObject({ status: "fail", evidence: { document: OTHER_HASH, receipt: DOC_HASH } });
    expect(check(r, "mirrors").status).toBe("skipped");
    expect(a.requests).toEqual([]);
    expect(r.mirrors).toEqual([]);
  });

  test("the document's hash in upper case is the same hash", async () => {
    const built = buildReceipt();
    expect((await verify(built, pair(built), { docHash: DOC_HASH.toUpperCase().replace("SHA256", "sha256") })).verdict).toBe("verified_org");
  });

  const signed: [string, string, string][] = [
    ["signer", "publicKey", "recordPayload"],
    ["signer", "payload", "recordPayload"],
    ["signer", "signature", "signerSignature"],
    ["seal", "publicKey", "sealPayload"],
    ["seal", "payload", "sealPayload"],
    ["seal", "signature", "sealSignature"],
  ];
  for (const [part, field, failing] of signed) {
    for (const at of [0, 0.5, 0.999]) {
      test(`one byte of ${part}.${field} flipped (at ${at}): signature_invalid, ${failing} fails`, async () => {
        const built = buildReceipt();
        const [a, b] = pair(built);
        built.receipt[part][field] = flip(built.receipt[part][field], at);
        const r = await verify(built, [a, b]);
        expect(r.verdict).toBe("signature_invalid");
        expect(check(r, failing).status).toBe("fail");
        expect(a.requests).toEqual([]);
      });
    }
  }

  const kinds: [string, "org" | "user", string][] = [
    ["an organisation's record relabelled pdf_embedded", "org", "pdf_embedded"],
    ["a person's signed PDF relabelled record_only", "user", "record_only"],
  ];
  for (const [what, signerType, kind] of kinds) {
    test(`${what}: signature_invalid, kind fails, and no mirror node is asked`, async () => {
      const built = buildReceipt({ signerType });
      const [a, b] = pair(built);
      built.receipt.kind = kind;
      const r = await verify(built, [a, b]);
      expect(r.verdict).toBe("signature_invalid");
      expect(check(r, "kind")).toMatchObject({ status: "fail", evidence: { kind, signerType } });
      expect(check(r, "kind").detail).toContain(`${kind} does not go with signerType ${signerType}`);
      // The signatures hold (kind is in none of them): only the kind check catches it.
      expect(statuses(r)).toMatchObject({ documentHash: "pass", recordPayload: "pass", signerSignature: "pass", sealPayload: "pass", sealSignature: "pass", mirrors: "skipped", identity: "skipped" });
      expect([a.requests, b.requests]).toEqual([[], []]);
      expect(r.identity).toBeNull();
    });
  }

  test("a changed signed time or record id: signature_invalid", async () => {
    for (const change of [(r: Built["receipt"]) => (r.authenticatedAt = "2026-01-15T09:30:00.124Z"), (r: Built["receipt"]) => (r.recordId = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9e")]) {
      const built = buildReceipt();
      change(built.receipt);
      const r = await verify(built, pair(built));
      expect(r.verdict).toBe("signature_invalid");
      expect(check(r, "recordPayload").status).toBe("fail");
    }
  });

  test("precedence: another document with a bad signature is no_record; a bad signature offline is signature_invalid", async () => {
    const built = buildReceipt();
    built.receipt.seal.signature = flip(built.receipt.seal.signature);
    expect((await verify(built, [], { docHash: OTHER_HASH })).verdict).toBe("no_record");
    expect((await verify(built, [], { offline: true })).verdict).toBe("signature_invalid");
  });
});

describe("rule 3: offline", () => {
  test("never verified: unverifiable, signatures shown, the ledger's checks skipped, nothing asked", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const r = await verify(built, [a, b], { offline: true });
    expect(r.verdict).toBe("unverifiable");
    expect(r.offline).toBe(true);
    expect(r.mirrors).toEqual([]);
    expect(statuses(r)).toMatchObject({ documentHash: "pass", signerSignature: "pass", sealSignature: "pass", mirrors: "skipped", ledgerMessage: "skipped", revocationScan: "skipped" });
    expect(a.requests).toEqual([]);
    expect(renderReport(r)).toContain("Mirror nodes: none (offline)");
  });
});

describe("rule 4: unverifiable", () => {
  test("one mirror down: unverifiable, the mirrors check names it", async () => {
    const built = buildReceipt();
    const a = fakeMirror(built.ledger);
    const dead = deadUrl();
    const r = await verify(built, [a.url, dead]);
    expect(r.verdict).toBe("unverifiable");
    expect(check(r, "mirrors").status).toBe("fail");
    expect(check(r, "mirrors").detail).toContain(dead);
    expect(check(r, "ledgerMessage").status).toBe("skipped");
  });

  for (const mode of ["garbage", "hang", "error500", "html404"] as const) {
    test(`one mirror answering outside the API (${mode}): unverifiable`, async () => {
      const built = buildReceipt();
      const [a, b] = pair(built);
      b.mode = mode;
      const r = await verify(built, [a, b], { timeoutMs: 300 });
      expect(r.verdict).toBe("unverifiable");
      expect((check(r, "mirrors").evidence!.failures as unknown[]).length).toBeGreaterThan(0);
      if (mode === "hang") expect(check(r, "mirrors").detail).toContain("no answer within 0.3 s");
    });
  }

  test("a message of the wrong shape (running_hash not base64): unverifiable", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const bad = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => fetch(b.url + new URL(req.url).pathname + new URL(req.url).search).then(async (res) => new Response((await res.text()).replace(/"running_hash":"[^"]*"/g, '"running_hash":"%%"'), { status: res.status })) });
    try {
      const r = await verify(built, [a.url, `http://127.0.0.1:${bad.port}`]);
      expect(r.verdict).toBe("unverifiable");
      expect(check(r, "mirrors").detail).toContain("running_hash is not base64");
    } finally {
      bad.stop(true);
    }
  });

  test("fewer distinct mirrors than the minimum: unverifiable, even when the one answers", async () => {
    const built = buildReceipt();
    built.receipt.mirrorNodes = [];
    const a = fakeMirror(built.ledger);
    const r = await verify(built, [a.url, a.url + "/"]);
    expect(r.verdict).toBe("unverifiable");
    expect(r.mirrors).toEqual([a.url]);
    expect(check(r, "mirrors").detail).toBe("only 1 distinct host among the mirror nodes for a minimum of 2: add a mirror node on another host with --mirror URL");
    const none = await verify(built, []);
    expect(none.verdict).toBe("unverifiable");
    expect(none.mirrors).toEqual([]);
    expect(check(none, "mirrors").detail).toBe("no mirror node to ask for a minimum of 2: add one with --mirror URL");
    // The receipt's suggestions are pointed at, not asked.
    built.receipt.mirrorNodes = [a.url];
    const suggested = await verify(built, []);
    expect(check(suggested, "mirrors").detail).toBe("no mirror node to ask for a minimum of 2: add one with --mirror URL (the receipt suggests some; they are asked only when you name them)");
  });

  test("two mirror nodes on two ports of one address are one host: unverifiable, and the detail says which share it", async () => {
    const built = buildReceipt();
    const a = fakeMirror(built.ledger);
    const same = fakeMirror(built.ledger, new URL(a.url).hostname);
    expect(same.url).not.toBe(a.url);
    const r = await verify(built, [a, same]);
    expect(r.verdict).toBe("unverifiable");
    expect(r.witnesses).toBe(1);
    expect(check(r, "mirrors")).toMatchObject({ status: "fail", evidence: { distinctHosts: 1, minMirrors: 2 } });
    expect(check(r, "mirrors").detail).toBe(`only 1 distinct host among the mirror nodes for a minimum of 2 (${same.url} is on the same host as ${a.url}): add a mirror node on another host with --mirror URL`);
    expect(renderReport(r)).toContain(`Mirror nodes: ${a.url} (--mirror), ${same.url} (--mirror) on 1 distinct host (minimum 2)`);
    // A third on another address makes two hosts.
    const other = fakeMirror(built.ledger);
    const three = await verify(built, [a, same, other]);
    expect(three.verdict).toBe("verified_org");
    expect(three.witnesses).toBe(2);
    expect(check(three, "mirrors").detail).toBe("3 mirror nodes on 2 distinct hosts asked, every one answered");
  });

  test("a scan longer than the page limit: unverifiable, never a pass", async () => {
    const built = buildReceipt({ fillers: 10 });
    const [a, b] = pair(built);
    a.pageSize = b.pageSize = 3;
    const r = await verify(built, [a, b], { maxScanPages: 2 });
    expect(r.verdict).toBe("unverifiable");
    expect(check(r, "mirrors").detail).toContain("stopped after 2 pages");
  });

  test("precedence: a mirror down and the others disagreeing is unverifiable", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    b.ledger.messages[1]!.message[5]! ^= 1;
    expect((await verify(built, [a.url, b.url, deadUrl()])).verdict).toBe("unverifiable");
  });
});

describe("one byte flipped anywhere: never a pass", () => {
  const FIELDS = ["signer.publicKey", "signer.payload", "signer.signature", "seal.publicKey", "seal.payload", "seal.signature", "anchor.message", "anchor.runningHash", "keyAnnouncement.message"];
  const POSITIONS = [0, 0.13, 0.29, 0.41, 0.5, 0.67, 0.83, 0.999];

  test("in the receipt: signature_invalid, every time", async () => {
    const base = buildReceipt();
    const [a, b] = pair(base);
    const verdicts: string[] = [];
    for (const path of FIELDS) {
      for (const at of POSITIONS) {
        const built = buildReceipt();
        const [part, field] = path.split(".") as [string, string];
        built.receipt[part][field] = flip(built.receipt[part][field], at);
        const r = await verify(built, [a, b]);
        verdicts.push(`${path}@${at}: ${r.verdict}`);
      }
    }
    expect(verdicts.filter((v) => !v.endsWith(": signature_invalid"))).toEqual([]);
    expect(verdicts).toHaveLength(FIELDS.length * POSITIONS.length);
  });

  test("on the ledger: on every mirror signature_invalid, on one of them inconsistent_mirrors", async () => {
    const verdicts: string[] = [];
    for (const index of [0, 1]) {
      for (const at of POSITIONS) {
        for (const where of ["both", "one"] as const) {
          const built = buildReceipt();
          const [a, b] = pair(built);
          for (const m of where === "both" ? [a, b] : [b]) {
            const bytes = m.ledger.messages[index]!.message;
            bytes[Math.floor(bytes.length * at)]! ^= 0x01;
          }
          const r = await verify(built, [a, b]);
          verdicts.push(`${index === 0 ? "announcement" : "record"}@${at} on ${where}: ${r.verdict}`);
        }
      }
    }
    expect(verdicts.filter((v) => !(v.includes(" on both: ") ? v.endsWith(": signature_invalid") : v.endsWith(": inconsistent_mirrors")))).toEqual([]);
    expect(verdicts).toHaveLength(2 * POSITIONS.length * 2);
  });
});

describe("rule 5: one mirror lies", () => {
  const lies: [string, (m: FakeMirror) => void, string][] = [
    ["the record message's bytes", (m) => void (m.ledger.messages[1]!.message[10]! ^= 1), "ledgerMessage"],
    ["the record message's consensus time", (m) => void (m.ledger.messages[1]!.consensusAt = "1768469410.000000010"), "ledgerMessage"],
    ["the record message's running hash", (m) => void (m.ledger.messages[1]!.runningHash[0]! ^= 1), "ledgerMessage"],
    ["the record message missing", (m) => void m.ledger.messages.splice(1, 1), "ledgerMessage"],
    ["the announcement's bytes", (m) => void (m.ledger.messages[0]!.message = announcementBytes("Evil Corp")), "keyAnnouncement"],
    ["the topic's submit key", (m) => void (m.ledger.submitKey = { _type: "ED25519", key: "cd".repeat(32) }), "topicSubmitKey"],
    ["a hidden revocation", (m) => void m.ledger.messages.pop(), "revocationScan"],
    ["an invented revocation", (m) => void m.ledger.messages.push({ sequenceNumber: 99, consensusAt: consensusOf(99), message: revocationBytes(undefined, "ISSUED_IN_ERROR"), runningHash: new Uint8Array(48) }), "revocationScan"],
  ];
  for (const [what, lie, failing] of lies) {
    test(`${what}: inconsistent_mirrors, ${failing} fails`, async () => {
      const built = buildReceipt({ revoked: what === "a hidden revocation", fillers: 2 });
      const [a, b] = pair(built);
      lie(b);
      const r = await verify(built, [a, b]);
      expect(r.verdict).toBe("inconsistent_mirrors");
      expect(check(r, failing).status).toBe("fail");
      expect(check(r, failing).detail).toContain("disagree");
    });
  }

  test("the evidence shows what each mirror said", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    b.ledger.submitKey = null;
    b.ledger.messages[1]!.consensusAt = "1768469410.000000010";
    const r = await verify(built, [a, b]);
    expect(r.verdict).toBe("inconsistent_mirrors");
    expect(check(r, "topicSubmitKey").evidence).toEqual({ mirrors: { [a.url]: { type: "ED25519", key: "ab".repeat(32) }, [b.url]: null } });
    const shown = check(r, "ledgerMessage").evidence!.mirrors as Record<string, { consensusAt: string }>;
    expect([shown[a.url]!.consensusAt, shown[b.url]!.consensusAt]).toEqual([consensusOf(2), "1768469410.000000010"]);
  });

  test("the liar may be either mirror, and a third honest one does not outvote it", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    const c = fakeMirror(built.ledger);
    a.ledger.messages[1]!.message[3]! ^= 1;
    expect((await verify(built, [a, b, c])).verdict).toBe("inconsistent_mirrors");
  });
});

describe("rule 6: the record's message is not on the ledger", () => {
  test("every mirror says not found: no_record", async () => {
    const built = buildReceipt();
    built.ledger.messages.splice(1, 1);
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("no_record");
    expect(check(r, "ledgerMessage")).toMatchObject({ status: "fail" });
    expect(check(r, "ledgerMessage").detail).toContain("no mirror node has message #2");
  });

  test("an unknown topic on every mirror: no_record", async () => {
    const built = buildReceipt();
    const [a, b] = pair(built);
    for (const m of [a, b]) m.ledger.topicId = "0.0.999";
    expect((await verify(built, [a, b])).verdict).toBe("no_record");
  });
});

describe("rule 7: the ledger does not back the receipt", () => {
  const cases: [string, (b: Built) => void, string][] = [
    ["one byte of anchor.message flipped", (b) => (b.receipt.anchor.message = flip(b.receipt.anchor.message)), "ledgerMessage"],
    ["anchor.consensusAt changed", (b) => (b.receipt.anchor.consensusAt = "1768469410.000000010"), "ledgerMessage"],
    ["one byte of anchor.runningHash flipped", (b) => (b.receipt.anchor.runningHash = flip(b.receipt.anchor.runningHash)), "ledgerMessage"],
    ["one byte of keyAnnouncement.message flipped", (b) => (b.receipt.keyAnnouncement.message = flip(b.receipt.keyAnnouncement.message)), "keyAnnouncement"],
    ["keyAnnouncement.consensusAt changed", (b) => (b.receipt.keyAnnouncement.consensusAt = "1768469390.000000001"), "keyAnnouncement"],
    ["the announcement on another topic", (b) => (b.receipt.keyAnnouncement.topicId = "0.0.7"), "keyAnnouncement"],
    ["the announcement's number pointing at the record message", (b) => (b.receipt.keyAnnouncement.sequenceNumber = 2), "keyAnnouncement"],
    ["no announcement at that number", (b) => (b.receipt.keyAnnouncement.sequenceNumber = 50), "keyAnnouncement"],
    ["a topic anyone may write to", (b) => (b.ledger.submitKey = null), "topicSubmitKey"],
    ["the record's message pointing at the announcement", (b) => {
      b.receipt.anchor.sequenceNumber = 1;
      b.receipt.anchor.message = b.receipt.keyAnnouncement.message;
      b.receipt.anchor.consensusAt = b.receipt.keyAnnouncement.consensusAt;
      b.receipt.anchor.runningHash = b64(b.ledger.messages[0]!.runningHash);
    }, "messageCommitments"],
  ];
  for (const [what, change, failing] of cases) {
    test(`${what}: signature_invalid, ${failing} fails`, async () => {
      const built = buildReceipt();
      change(built);
      const r = await verify(built, pair(built));
      expect(r.verdict).toBe("signature_invalid");
      expect(check(r, failing).status).toBe("fail");
      // No identity without an announcement established on the ledger.
      if (failing === "keyAnnouncement") {
        expect(r.identity).toBeNull();
        expect(check(r, "identity").status).toBe("skipped");
        expect(renderReport(r)).toContain("Identity: not established (no key announcement confirmed on the ledger)");
      }
    });
  }

  test("the ledger and the receipt agree on a message that commits to another signature: signature_invalid", async () => {
    const built = buildReceipt();
    const text = Buffer.from(built.ledger.messages[1]!.message).toString().replace(/"signatureSha256":"sha256:./, '"signatureSha256":"sha256:0');
    built.ledger.messages[1]!.message = new TextEncoder().encode(text);
    built.receipt.anchor.message = b64(built.ledger.messages[1]!.message);
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("signature_invalid");
    expect(check(r, "messageCommitments").detail).toContain("signatureSha256");
  });

  test("an announcement of another key, on ledger and receipt alike: signature_invalid", async () => {
    const built = buildReceipt();
    built.ledger.messages[0]!.message = announcementBytes("Acme Ltd", { keyFingerprint: "00".repeat(32) });
    built.receipt.keyAnnouncement.message = b64(built.ledger.messages[0]!.message);
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("signature_invalid");
    expect(check(r, "keyAnnouncement").detail).toContain("keyFingerprint");
    expect(r.identity).toBeNull();
  });
});

describe("rule 8: revoked", () => {
  test("a revocation on the ledger wins over the receipt's null: revoked, with its reason and place", async () => {
    const built = buildReceipt({ revoked: true, fillers: 3 });
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("revoked");
    expect(r.revocation).toEqual({ reason: "SUPERSEDED", revokedAt: "2026-01-16T09:30:00.123Z", sequenceNumber: 6, consensusAt: consensusOf(6) });
    // For people: the times to the second, in UTC (--json keeps the exact values, above).
    expect(renderReport(r)).toContain(`Revoked: SUPERSEDED on 16 January 2026, 09:30:00 UTC (ledger message #6, consensus 15 January 2026, 09:30:50 UTC)`);
    expect(renderReport(r)).not.toContain(consensusOf(6));
  });

  test("a revocation the receipt claims but the ledger lacks does not revoke", async () => {
    const built = buildReceipt();
    built.receipt.revocation = {
      reason: "SUPERSEDED",
      revokedAt: "2026-01-16T09:30:00.123Z",
      anchor: { network: "testnet", topicId: "0.0.5012345", sequenceNumber: 3, consensusAt: consensusOf(3), transactionId: "0.0.1234@1768469500.000000000", message: b64(revocationBytes()), runningHash: b64(new Uint8Array(48)), inclusion: null },
    };
    const r = await verify(built, pair(built));
    expect(r.verdict).toBe("verified_org");
    expect(check(r, "revocationScan").detail).toContain("the receipt names one; the ledger does not have it");
  });

  test("the scan pages through links.next, relative to the mirror's origin, and reports progress", async () => {
    const built = buildReceipt({ fillers: 20, revoked: true });
    const [a, b] = pair(built);
    a.pageSize = b.pageSize = 4;
    const progress: string[] = [];
    const r = await verify(built, [a, b], { onProgress: (t) => progress.push(t) });
    expect(r.verdict).toBe("revoked");
    expect(r.revocation!.sequenceNumber).toBe(23);
    const pages = a.requests.filter((p) => p.startsWith("/api/v1/topics/0.0.5012345/messages?"));
    // From the key's announcement (#1): the record and the 21 messages after it, 4 a page.
    expect(pages.length).toBe(6);
    expect(pages[0]).toBe(`/api/v1/topics/0.0.5012345/messages?timestamp=gt:${consensusOf(1)}&limit=100&order=asc`);
    expect(pages[1]).toBe(`/api/v1/topics/0.0.5012345/messages?timestamp=gt:${consensusOf(5)}&limit=100&order=asc`);
    expect(progress.some((t) => t.includes(a.url) && t.includes("page 6"))).toBe(true);
    expect(check(r, "revocationScan").evidence!.scannedByMirror).toEqual({ [a.url]: 22, [b.url]: 22 });
  });

  test("a links.next to another origin is not followed: unverifiable", async () => {
    const built = buildReceipt({ fillers: 5 });
    const [a] = pair(built);
    const other = fakeMirror(built.ledger);
    const redirecting = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const u = new URL(req.url);
        const res = await fetch(a.url + u.pathname + u.search);
        const text = (await res.text()).replace(/"next":"\//, `"next":"${other.url}/`);
        return new Response(text, { status: res.status });
      },
    });
    a.pageSize = 2;
    try {
      const r = await verify(built, [a.url, `http://127.0.0.1:${redirecting.port}`]);
      expect(r.verdict).toBe("unverifiable");
      expect(check(r, "mirrors").detail).toContain("links.next to another origin");
      expect(other.requests).toEqual([]);
    } finally {
      redirecting.stop(true);
    }
  });
});

describe("--min-mirrors 1", () => {
  test("one mirror suffices, and the report says the check was weakened", async () => {
    const built = buildReceipt();
    built.receipt.mirrorNodes = [];
    const a = fakeMirror(built.ledger);
    const r = await verify(built, [a], { minMirrors: 1 });
    expect(r.verdict).toBe("verified_org");
    expect(r.minMirrors).toBe(1);
    expect(check(r, "mirrors").detail).toContain("weakened");
    expect(renderReport(r)).toContain("WARNING: --min-mirrors 1 is a weakened check");
  });

  test("a bad minimum is refused", async () => {
    const built = buildReceipt();
    await expect(verify(built, [], { minMirrors: 0 })).rejects.toThrow("minMirrors");
    await expect(verify(built, [], { docHash: "sha256:00" })).rejects.toThrow("docHash");
    await expect(verify(built, ["ftp://x"])).rejects.toThrow("not a mirror node URL");
  });
});

describe("identity: the announcement's names are a claim until a trust root confirms them", () => {
  const WELL_KNOWN = "https://acme.example/.well-known/docverify.json";
  /** The global fetch, with the domain's document served from `document` (undefined: unreachable). */
  function withDomain(document: unknown, asked: string[] = []): FetchFn {
    return async (url, init) => {
      if (!url.startsWith("https://")) return fetch(url, init);
      asked.push(url);
      if (url !== WELL_KNOWN || document === undefined) throw new Error(`getaddrinfo ENOTFOUND ${new URL(url).hostname}`);
      return new Response(JSON.stringify(document), { status: 200 });
    };
  }
  const listed = (over: Record<string, unknown> = {}) => ({ v: 1, organisations: [{ orgId: ORG_ID, name: "Acme Certification Ltd", domain: "acme.example", network: "testnet", topicId: TOPIC, keys: [{ algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT, announcedAt: consensusOf(1) }], ...over }] });
  const noTxt = async (): Promise<string[][]> => {
    throw Object.assign(new Error("queryTxt ENOTFOUND"), { code: "ENOTFOUND" });
  };

  test("pinned by the trust file: confirmed, the trust file's name as fact, verified_org", async () => {
    const built = buildReceipt();
    const trust = parseTrustFile(trustFileText({ organisations: [pinnedOrganisation({ name: "Acme Certification Ltd" })] }));
    const r = await verify(built, pair(built), { trust });
    expect(r.verdict).toBe("verified_org");
    expect(r.identity).toMatchObject({ status: "confirmed", method: "trust-file", domain: "acme.example", confirmedName: "Acme Certification Ltd", claimedName: "Acme Ltd" });
    expect(check(r, "identity").status).toBe("pass");
    expect(lines(renderReport(r))[1]).toBe(`Identity: confirmed by trust-file: "Acme Certification Ltd" (acme.example); the trust file pins topic ${TOPIC} on testnet and this key to "Acme Certification Ltd"`);
  });

  test("by the announced domain's well-known document over https: confirmed, its name as fact", async () => {
    const built = buildReceipt({ domain: "acme.example" });
    const asked: string[] = [];
    const r = await verify(built, pair(built), { fetch: withDomain(listed(), asked), resolveTxt: noTxt });
    expect(asked).toEqual([WELL_KNOWN]);
    expect(r.verdict).toBe("verified_org");
    expect(r.identity).toMatchObject({ status: "confirmed", method: "https", domain: "acme.example", confirmedName: "Acme Certification Ltd", claimedDomain: "acme.example" });
    expect(check(r, "keyAnnouncement").detail).toContain('calling itself "Acme Ltd" (domain acme.example)');
    expect(lines(renderReport(r))[1]).toBe(`Identity: confirmed by https: "Acme Certification Ltd" (acme.example); ${WELL_KNOWN} lists topic ${TOPIC} on testnet and this key`);
  });

  test("by the domain's DNS TXT record: confirmed, the organisation of the domain (DNS names no organisation)", async () => {
    const built = buildReceipt({ domain: "acme.example" });
    const txt = async (name: string) => (name === "_docverify.acme.example" ? [["v=docverify1; network=testnet; topic=", TOPIC]] : noTxt());
    const r = await verify(built, pair(built), { fetch: withDomain(undefined), resolveTxt: txt });
    expect(r.verdict).toBe("verified_org");
    expect(r.identity).toMatchObject({ status: "confirmed", method: "dns", domain: "acme.example", confirmedName: null });
    expect(lines(renderReport(r))[1]).toBe(`Identity: confirmed by dns: the organisation of acme.example; DNS TXT _docverify.acme.example names topic ${TOPIC} on testnet`);
  });

  test("a domain that does not answer: the verdict stands, the identity stays a claim", async () => {
    const built = buildReceipt({ domain: "acme.example" });
    const r = await verify(built, pair(built), { fetch: withDomain(undefined), resolveTxt: noTxt });
    expect(r.verdict).toBe("verified_org");
    expect(r.identity).toMatchObject({ status: "unconfirmed", method: null, confirmedName: null, claimedName: "Acme Ltd", claimedDomain: "acme.example" });
    expect(check(r, "identity").status).toBe("warn");
    expect(lines(renderReport(r))[1]).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "Acme Ltd", id ${ORG_ID}, domain acme.example; nothing this verifier trusts confirms it (${WELL_KNOWN} could not be read: getaddrinfo ENOTFOUND acme.example; DNS TXT _docverify.acme.example: no such record)`);
  });

  const mismatches: [string, () => Partial<VerifyOptions>, string][] = [
    ["the trust file pins the claimed organisation on another topic", () => ({ trust: parseTrustFile(trustFileText({ organisations: [pinnedOrganisation({ topicId: "0.0.7" })] })) }), `the trust file pins "Acme Ltd" to topic 0.0.7 on testnet, not ${TOPIC} on testnet`],
    ["the trust file pins this topic with other keys", () => ({ trust: parseTrustFile(trustFileText({ organisations: [pinnedOrganisation({ keys: [{ algorithm: "ML-DSA-65", fingerprint: "cd".repeat(32) }] })] })) }), `the trust file pins topic ${TOPIC} on testnet to "Acme Ltd" with other keys than this record's`],
    ["the domain's document lists another topic", () => ({ fetch: withDomain(listed({ topicId: "0.0.7" })), resolveTxt: noTxt }), `acme.example lists 0.0.7 on testnet, not ${TOPIC} on testnet`],
    ["the domain's TXT record names another topic", () => ({ fetch: withDomain(undefined), resolveTxt: async () => [["v=docverify1; network=testnet; topic=0.0.7"]] }), `DNS TXT _docverify.acme.example names 0.0.7 on testnet, not ${TOPIC} on testnet`],
  ];
  for (const [what, options, detail] of mismatches) {
    test(`mismatch, ${what}: signature_invalid, the identity check fails`, async () => {
      const built = buildReceipt({ domain: "acme.example" });
      const r = await verify(built, pair(built), options());
      expect(r.verdict).toBe("signature_invalid");
      expect(r.identity).toMatchObject({ status: "mismatch", method: null, confirmedName: null, claimedName: "Acme Ltd" });
      expect(r.identity!.detail).toContain(detail);
      expect(check(r, "identity").status).toBe("fail");
      // Everything the ledger shows holds: the contradiction alone decides.
      expect(r.checks.filter((c) => c.status !== "pass").map((c) => c.name)).toEqual(["identity"]);
      const text = lines(renderReport(r));
      expect(text[0]).toStartWith("Verdict: signature_invalid");
      expect(text[1]).toStartWith(`Identity: MISMATCH: the ledger announcement claims "Acme Ltd", id ${ORG_ID}, domain acme.example, but `);
      expect(text[1]).toEndWith(". Do not trust this receipt.");
    });
  }

  test("the domain is not consulted when the shell says not to (lookupDomain false)", async () => {
    const built = buildReceipt({ domain: "acme.example" });
    const asked: string[] = [];
    const r = await verify(built, pair(built), { fetch: withDomain(listed(), asked), lookupDomain: false });
    expect(asked).toEqual([]);
    expect(r.identity).toMatchObject({ status: "unconfirmed", detail: "the domain could not be consulted" });
  });
});

describe("a local development ledger's receipt", () => {
  /** The fixture's receipt, its network relabelled local. */
  function local(): Built {
    const built = buildReceipt();
    built.receipt.anchor.network = "local";
    return built;
  }

  test("against the mirror nodes named: verified_org, but public false, and the text says it proves nothing publicly", async () => {
    const built = local();
    const [a, b] = pair(built);
    const r = await verify(built, [a, b], { builtinMirrors: false });
    expect(r.verdict).toBe("verified_org");
    expect(r).toMatchObject({ network: "local", public: false, mirrors: [a.url, b.url] });
    const text = lines(renderReport(r));
    expect(text[0]).toStartWith("Verdict: verified_org");
    expect(text[1]).toBe("Ledger: local development ledger: proves nothing publicly");
    expect(text[2]).toStartWith("Identity: UNCONFIRMED claim:");
  });

  test("with no mirror node named: unverifiable, saying to name the local ledger's; built-in ones or not, there are none", async () => {
    const built = local();
    const [a] = pair(built);
    built.receipt.mirrorNodes = [a.url];
    for (const builtinMirrors of [true, false]) {
      const r = await verify(built, [], { builtinMirrors });
      expect(r.verdict).toBe("unverifiable");
      expect(r.mirrors).toEqual([]);
      expect(check(r, "mirrors")).toMatchObject({ status: "fail", detail: "network local has no built-in mirror nodes: name the local ledger's with --mirror URL (a local development ledger proves nothing publicly)" });
      expect(r.public).toBe(false);
    }
    // The receipt's own suggestion was not asked.
    expect(a.requests).toEqual([]);
  });
});
