/**
 * Who made a record, as the command-line shells report it (docs/receipts.md §6): `docverify
 * verify-receipt` and the standalone `node docverify-verify.mjs`, run as processes as a person runs
 * them, against two fake mirror nodes, an HTTPS server for the claimed domain's
 * /.well-known/docverify.json (a test CA trusted only through NODE_EXTRA_CA_CERTS, reached with
 * --connect-to), a DNS server for `_docverify.DOMAIN` (--dns-server) and trust files. For each root,
 * the identity confirmed, contradicted (mismatch: the verdict is then signature_invalid) or left a
 * claim (unconfirmed: the ledger proof stands, the name is never stated as fact), in the text
 * report and in --json; and --require-identity's exit code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildVerifier } from "../../scripts/build-verifier.ts";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { deadPort, docverifyTxt, identityDocument, startDnsServer, startIdentityServer, type DnsServer, type IdentityServer } from "../support/identity-servers.ts";
import { createTestCa, type TestCa } from "../support/test-ca.ts";
import { announcementBytes, buildReceipt, DOC_HASH, fakeMirror, ORG_ID, TOPIC } from "./fixtures.ts";

afterAll(cleanup);

const DOMAIN = "acme.test";
const NAME = "Acme Ltd";
/** The signer key's fingerprint, as the announcement states it. */
const FINGERPRINT = (JSON.parse(new TextDecoder().decode(announcementBytes())) as { keyFingerprint: string }).keyFingerprint;
const OTHER_FINGERPRINT = "0f".repeat(32);
const listing = (over: { topicId?: string; fingerprints?: string[] } = {}) =>
  identityDocument([{ orgId: ORG_ID, name: NAME, domain: DOMAIN, network: "testnet", topicId: over.topicId ?? TOPIC, fingerprints: over.fingerprints ?? [FINGERPRINT] }]);

let ca: TestCa;
let server: IdentityServer;
let dns: DnsServer;
let receiptPath: string;
let mirrors: string[];
let standalone: string;

beforeAll(async () => {
  ca = createTestCa();
  server = startIdentityServer(ca.serverCertificate([DOMAIN]));
  dns = await startDnsServer();
  // The record's topic, whose key announcement claims the domain.
  const { receipt, ledger } = buildReceipt();
  const announcement = announcementBytes(NAME, { domain: DOMAIN });
  ledger.messages[0]!.message = announcement;
  receipt.keyAnnouncement.message = Buffer.from(announcement).toString("base64");
  mirrors = [fakeMirror(ledger).url, fakeMirror(ledger).url];
  receiptPath = join(tempDir("docverify-identity-"), "receipt.json");
  writeFileSync(receiptPath, JSON.stringify(receipt, null, 2));
  standalone = join(tempDir("docverify-standalone-"), "docverify-verify.mjs");
  await buildVerifier(standalone);
}, 60_000);

interface Run {
  readonly shell: string;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface JsonReport {
  verdict: string;
  identity: { status: string; method: string | null; domain: string | null; claimedName: string | null; detail: string } | null;
  checks: { name: string; status: string; detail: string }[];
}

const SHELLS = {
  "docverify verify-receipt": () => [BUN, join(ROOT, "src", "main.ts"), "verify-receipt"],
  "node docverify-verify.mjs": () => ["node", standalone],
} as const;

interface Scenario {
  /** Where acme.test:443 is: the identity server, or a port where nothing listens. */
  readonly https: "up" | "down";
  /** Whether the shell's process trusts the test CA (NODE_EXTRA_CA_CERTS). */
  readonly trustCa?: boolean;
  readonly trustFile?: unknown;
  readonly extra?: string[];
}

async function run(shell: keyof typeof SHELLS, args: string[], trustCa: boolean): Promise<Run> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
  if (trustCa) env.NODE_EXTRA_CA_CERTS = ca.caFile;
  const p = Bun.spawn([...SHELLS[shell](), ...args], { cwd: tempDir("docverify-cwd-"), env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { shell, code, stdout, stderr };
}

/** Both shells, each in text and in --json, on the receipt with the scenario's roots. */
async function verifyAll(s: Scenario): Promise<{ text: Run[]; json: (Run & { report: JsonReport })[] }> {
  const port = s.https === "up" ? server.port : deadPort();
  const args = [receiptPath, "--hash", DOC_HASH, "--no-builtin-mirrors", ...mirrors.flatMap((m) => ["--mirror", m]), "--connect-to", `${DOMAIN}:443:127.0.0.1:${port}`, "--dns-server", dns.address, ...(s.extra ?? [])];
  if (s.trustFile !== undefined) {
    const path = join(tempDir("docverify-trust-"), "trust.json");
    writeFileSync(path, JSON.stringify(s.trustFile));
    args.push("--trust", path);
  }
  const shells = Object.keys(SHELLS) as (keyof typeof SHELLS)[];
  const trustCa = s.trustCa ?? true;
  const [text, json] = await Promise.all([Promise.all(shells.map((sh) => run(sh, args, trustCa))), Promise.all(shells.map((sh) => run(sh, [...args, "--json"], trustCa)))]);
  return {
    text,
    json: json.map((r) => {
      let report: JsonReport;
      try {
        report = JSON.parse(r.stdout) as JsonReport;
      } catch {
        throw new Error(`${r.shell} --json printed no report (exit ${r.code}): ${r.stdout}${r.stderr}`);
      }
      return { ...r, report };
    }),
  };
}

/** The text report's identity line, checked to come before the first check line. */
function identityLineOf(r: Run): string {
  const lines = r.stdout.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Identity: "));
  const firstCheck = lines.findIndex((l) => /^ {2}(pass|fail|warn|skip) {2}/.test(l));
  if (at === -1) throw new Error(`${r.shell} printed no identity line:\n${r.stdout}${r.stderr}`);
  expect(firstCheck).toBeGreaterThan(at);
  return lines[at]!;
}

/** Wherever the claimed name appears in a text report, it is said to be a claim. */
function nameOnlyAsClaim(r: Run): void {
  const lines = r.stdout.split("\n").filter((l) => l.includes(NAME));
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) expect(l).toMatch(/claim|calling itself/);
}

function trustFile(organisations: { topicId: string; fingerprint: string }[]): unknown {
  return {
    v: 1,
    networks: {},
    organisations: organisations.map((o) => ({ orgId: ORG_ID, name: NAME, domain: DOMAIN, network: "testnet", topicId: o.topicId, keys: [{ algorithm: "ML-DSA-65", fingerprint: o.fingerprint }] })),
  };
}

const T = 30_000;

describe("https: the claimed domain's /.well-known/docverify.json, with ordinary certificate validation", () => {
  test(
    "listing this network, topic and key confirms the organisation: its name is stated as the domain's, and the verdict stays verified_org",
    async () => {
      server.document = listing();
      dns.txt.clear();
      const asked = server.requests.length;
      const { text, json } = await verifyAll({ https: "up" });
      for (const r of text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        expect(identityLineOf(r)).toStartWith(`Identity: confirmed by https: "${NAME}" (${DOMAIN}); https://${DOMAIN}/.well-known/docverify.json lists topic ${TOPIC} on testnet and this key`);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.verdict).toBe("verified_org");
        expect(r.report.identity).toMatchObject({ status: "confirmed", method: "https", domain: DOMAIN, claimedName: NAME });
        expect(r.report.checks.find((c) => c.name === "identity")!.status).toBe("pass");
      }
      // Four runs, each asked the domain itself.
      expect(server.requests.slice(asked)).toEqual(Array(4).fill("/.well-known/docverify.json"));
    },
    T,
  );

  test(
    "listing another topic is a mismatch: signature_invalid, exit 1, saying which topic the domain names",
    async () => {
      server.document = listing({ topicId: "0.0.999" });
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "up" });
      for (const r of text) {
        expect(r.code).toBe(1);
        expect(r.stdout).toStartWith("Verdict: signature_invalid ");
        expect(identityLineOf(r)).toBe(
          `Identity: MISMATCH: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}, but ${DOMAIN} lists 0.0.999 on testnet, not ${TOPIC} on testnet. Do not trust this receipt.`,
        );
      }
      for (const r of json) {
        expect(r.code).toBe(1);
        expect(r.report.verdict).toBe("signature_invalid");
        expect(r.report.identity).toMatchObject({ status: "mismatch", method: null, domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );

  test(
    "listing this topic with another key is a mismatch too",
    async () => {
      server.document = listing({ fingerprints: [OTHER_FINGERPRINT] });
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "up" });
      for (const r of text) {
        expect(r.code).toBe(1);
        expect(r.stdout).toStartWith("Verdict: signature_invalid ");
        expect(identityLineOf(r)).toContain(`Identity: MISMATCH: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}, but ${DOMAIN} lists topic ${TOPIC} with other keys than this record's`);
      }
      for (const r of json) {
        expect(r.code).toBe(1);
        expect(r.report.verdict).toBe("signature_invalid");
        expect(r.report.identity).toMatchObject({ status: "mismatch", method: null, domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );

  test(
    "the domain's server down: unconfirmed, the ledger proof keeps verified_org (exit 0), and the name is shown only as a claim",
    async () => {
      server.document = listing();
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "down" });
      for (const r of text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        const line = identityLineOf(r);
        expect(line).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}; nothing this verifier trusts confirms it (https://${DOMAIN}/.well-known/docverify.json could not be read: `);
        expect(line).toContain(`DNS TXT _docverify.${DOMAIN}: no such record`);
        nameOnlyAsClaim(r);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.verdict).toBe("verified_org");
        expect(r.report.identity).toMatchObject({ status: "unconfirmed", method: null, domain: DOMAIN, claimedName: NAME });
        expect(r.report.checks.find((c) => c.name === "identity")!.status).toBe("warn");
      }
    },
    T,
  );

  test(
    "a certificate from a CA the process does not trust (no NODE_EXTRA_CA_CERTS): unconfirmed, naming the certificate problem, though the same document confirms when trusted",
    async () => {
      server.document = listing();
      dns.txt.clear();
      const asked = server.requests.length;
      const { text, json } = await verifyAll({ https: "up", trustCa: false });
      for (const r of text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        const line = identityLineOf(r);
        expect(line).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "${NAME}"`);
        expect(line).toMatch(/could not be read: [^;]*certificate/);
        nameOnlyAsClaim(r);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.identity).toMatchObject({ status: "unconfirmed", method: null, domain: DOMAIN, claimedName: NAME });
        expect(r.report.identity!.detail).toMatch(/could not be read: [^;]*certificate/);
      }
      // No request got past the TLS handshake.
      expect(server.requests.length).toBe(asked);
    },
    T,
  );
});

describe("dns: the TXT record _docverify.DOMAIN", () => {
  test(
    "naming this network and topic confirms the domain's organisation (the web address down)",
    async () => {
      dns.txt.clear();
      dns.txt.set(`_docverify.${DOMAIN}`, [["v=spf1 -all"], docverifyTxt("testnet", TOPIC)]);
      const asked = dns.asked.length;
      const { text, json } = await verifyAll({ https: "down" });
      for (const r of text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        expect(identityLineOf(r)).toBe(`Identity: confirmed by dns: the organisation of ${DOMAIN}; DNS TXT _docverify.${DOMAIN} names topic ${TOPIC} on testnet`);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.verdict).toBe("verified_org");
        expect(r.report.identity).toMatchObject({ status: "confirmed", method: "dns", domain: DOMAIN, claimedName: NAME });
      }
      expect(dns.asked.slice(asked)).toContain(`_docverify.${DOMAIN}`);
    },
    T,
  );

  test(
    "naming another topic is a mismatch: signature_invalid, exit 1",
    async () => {
      dns.txt.clear();
      dns.txt.set(`_docverify.${DOMAIN}`, [docverifyTxt("testnet", "0.0.999")]);
      const { text, json } = await verifyAll({ https: "down" });
      for (const r of text) {
        expect(r.code).toBe(1);
        expect(r.stdout).toStartWith("Verdict: signature_invalid ");
        const line = identityLineOf(r);
        expect(line).toStartWith(`Identity: MISMATCH: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}, but `);
        expect(line).toContain(`DNS TXT _docverify.${DOMAIN} names 0.0.999 on testnet, not ${TOPIC} on testnet`);
      }
      for (const r of json) {
        expect(r.code).toBe(1);
        expect(r.report.verdict).toBe("signature_invalid");
        expect(r.report.identity).toMatchObject({ status: "mismatch", method: null, domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );

  test(
    "no record (and the web address down): unconfirmed, the claim shown as a claim",
    async () => {
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "down" });
      for (const r of text) {
        expect(r.code).toBe(0);
        const line = identityLineOf(r);
        expect(line).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}; `);
        expect(line).toContain(`DNS TXT _docverify.${DOMAIN}: no such record`);
        nameOnlyAsClaim(r);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.verdict).toBe("verified_org");
        expect(r.report.identity).toMatchObject({ status: "unconfirmed", method: null, domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );
});

describe("trust file (--trust)", () => {
  test(
    "pinning this topic and key confirms it, the name being the trust file's",
    async () => {
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "down", trustFile: trustFile([{ topicId: TOPIC, fingerprint: FINGERPRINT }]) });
      for (const r of text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        expect(identityLineOf(r)).toBe(`Identity: confirmed by trust-file: "${NAME}" (${DOMAIN}); the trust file pins topic ${TOPIC} on testnet and this key to "${NAME}"`);
      }
      for (const r of json) {
        expect(r.code).toBe(0);
        expect(r.report.identity).toMatchObject({ status: "confirmed", method: "trust-file", domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );

  test(
    "pinning the claimed organisation on another topic is a mismatch: signature_invalid, exit 1",
    async () => {
      dns.txt.clear();
      const { text, json } = await verifyAll({ https: "down", trustFile: trustFile([{ topicId: "0.0.777", fingerprint: FINGERPRINT }]) });
      for (const r of text) {
        expect(r.code).toBe(1);
        expect(r.stdout).toStartWith("Verdict: signature_invalid ");
        expect(identityLineOf(r)).toBe(
          `Identity: MISMATCH: the ledger announcement claims "${NAME}", id ${ORG_ID}, domain ${DOMAIN}, but the trust file pins "${NAME}" to topic 0.0.777 on testnet, not ${TOPIC} on testnet. Do not trust this receipt.`,
        );
      }
      for (const r of json) {
        expect(r.code).toBe(1);
        expect(r.report.verdict).toBe("signature_invalid");
        expect(r.report.identity).toMatchObject({ status: "mismatch", method: null, domain: DOMAIN, claimedName: NAME });
      }
    },
    T,
  );
});

describe("--require-identity", () => {
  test(
    "exit 0 when the identity is confirmed, 1 when it is only claimed, the verdict verified_org in both",
    async () => {
      server.document = listing();
      dns.txt.clear();
      const [confirmed, claimed] = await Promise.all([verifyAll({ https: "up", extra: ["--require-identity"] }), verifyAll({ https: "down", extra: ["--require-identity"] })]);
      for (const r of confirmed.text) {
        expect(r.code).toBe(0);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        expect(identityLineOf(r)).toStartWith("Identity: confirmed by https: ");
      }
      for (const r of confirmed.json) {
        expect(r.code).toBe(0);
        expect(r.report).toMatchObject({ verdict: "verified_org", identity: { status: "confirmed", method: "https" } });
      }
      for (const r of claimed.text) {
        expect(r.code).toBe(1);
        expect(r.stdout).toStartWith("Verdict: verified_org ");
        expect(identityLineOf(r)).toStartWith("Identity: UNCONFIRMED claim: ");
      }
      for (const r of claimed.json) {
        expect(r.code).toBe(1);
        expect(r.report).toMatchObject({ verdict: "verified_org", identity: { status: "unconfirmed", method: null } });
      }
    },
    T,
  );
});
