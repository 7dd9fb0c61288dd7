/**
 * The verifier's command line (docs/receipts.md §4): in-process through runVerifyReceipt with
 * fake files and the fake mirror nodes, then as the user runs it, `bun src/main.ts
 * verify-receipt` and the built standalone `node docverify-verify.mjs` alone in an empty folder,
 * with the same cases, the same output and the same exit codes; a docverify-signed PDF given as
 * --file is checked by the original inside it, in both. The trust-root options: the built-in
 * mirror nodes and --no-builtin-mirrors, --trust, --require-identity, --connect-to, --dns-server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { signPdf } from "../../src/pdf/stamp.ts";
import { runVerifyReceipt, type VerifierIo } from "../../src/verifier/cli.ts";
import { createHttpGet } from "../../src/verifier/http-get.ts";
import type { FetchFn } from "../../src/verifier/mirror.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { VERIFY_RECEIPT_USAGE } from "../../src/verifier/usage.ts";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { buildReceipt, DOC_HASH, DOCUMENT, fakeMirror, ORG_ID, OTHER_HASH, pinnedOrganisation, TOPIC, trustFileText, type Built, type FakeMirror } from "./fixtures.ts";

afterAll(cleanup);

const PREFIX = "docverify verify-receipt: ";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built-in testnet mirror node: no test reaches it (it is served by a fake one where a test says so). */
const BUILTIN_TESTNET = "https://testnet.mirrornode.hedera.com";

/** A host name that does not resolve, as the system resolver says so. */
const notFound = (hostname: string) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });

interface InProcessOptions {
  streaming?: boolean;
  /** Where the fetch sends a URL's origin instead (e.g. the built-in mirror node to a fake one). */
  route?: Record<string, string>;
  /** TXT records by name, for the identity's DNS root; a name not here does not exist. */
  txt?: Record<string, string[][]>;
}

/**
 * runVerifyReceipt over in-memory files (and stdin), with the real fetch to the fake mirrors;
 * nothing leaves the machine: any other host does not resolve, for the fetch and the resolver alike.
 */
async function runInProcess(argv: string[], files: Record<string, Uint8Array | string> = {}, stdin: Uint8Array | string = "", options: InProcessOptions = {}): Promise<Run & { opened: string[]; dnsServers: string[][] }> {
  let stdout = "";
  let stderr = "";
  const opened: string[] = [];
  const bytes = (v: Uint8Array | string) => (typeof v === "string" ? new TextEncoder().encode(v) : v);
  const read = async (path: string) => {
    const f = files[path];
    if (f === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'\n    at somewhere (x.ts:1:1)`), { code: "ENOENT" });
    return bytes(f);
  };
  const dnsServers: string[][] = [];
  const local = (hostname: string) => /^127\./.test(hostname);
  const routed: FetchFn = async (url, init) => {
    const u = new URL(url);
    const to = options.route?.[u.origin];
    if (to !== undefined) return fetch(to + u.pathname + u.search, init);
    if (!local(u.hostname)) throw notFound(u.hostname);
    return fetch(url, init);
  };
  const io: VerifierIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readFile: read,
    readStdin: async () => bytes(stdin),
    fetch: routed,
    fetchVia: (connectTo) => createHttpGet(connectTo),
    lookup: async (hostname) => {
      if (hostname === "localhost") return ["127.0.0.1"];
      // A routed origin's host resolves to the address of the fake server behind it.
      const to = Object.entries(options.route ?? {}).find(([from]) => new URL(from).hostname === hostname)?.[1];
      if (to !== undefined) return [new URL(to).hostname];
      throw notFound(hostname);
    },
    resolveTxt: async (name, servers) => {
      dnsServers.push([...servers]);
      const records = options.txt?.[name];
      if (records === undefined) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: "ENOTFOUND" });
      return records;
    },
  };
  if (options.streaming !== false) {
    io.openFile = (path, end) =>
      (async function* () {
        opened.push(end === undefined ? path : `${path}[0, ${end})`);
        const all = (await read(path)).subarray(0, end);
        for (let at = 0; at < all.length; at += 2) yield all.subarray(at, at + 2);
      })();
    io.readTail = async (path, n) => {
      const all = await read(path);
      return { tail: all.subarray(Math.max(0, all.length - n)), size: all.length };
    };
  }
  const code = await runVerifyReceipt(argv, io);
  return { code, stdout, stderr, opened, dnsServers };
}

function expectUsageError(r: Run, contains: string): void {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
  expect(r.stderr).toStartWith(PREFIX);
  expect(r.stderr).toContain(contains);
  // One line, and never a stack trace.
  expect(r.stderr.split("\n")).toHaveLength(2);
  expect(r.stderr).not.toMatch(/\bat .*:\d+:\d+/);
}

let built: Built;
let mirrors: [FakeMirror, FakeMirror];
let receiptText: string;

/** The two fake mirror nodes, named, and nothing built in: the arguments of a verification that can succeed here. */
let named: string[];

beforeAll(() => {
  built = buildReceipt();
  mirrors = [fakeMirror(built.ledger), fakeMirror(built.ledger)];
  built.receipt.mirrorNodes = [mirrors[1].url];
  receiptText = JSON.stringify(built.receipt);
  named = ["--mirror", mirrors[0].url, "--mirror", mirrors[1].url, "--no-builtin-mirrors"];
});

describe("runVerifyReceipt", () => {
  test("verified_org: exit 0, the human report on stdout, nothing on stderr; the document streamed", async () => {
    const r = await runInProcess(["r.json", "--file", "doc.pdf", ...named], { "r.json": receiptText, "doc.pdf": DOCUMENT });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = r.stdout.split("\n");
    expect(lines[0]).toStartWith("Verdict: verified_org");
    expect(lines[1]).toStartWith(`Identity: UNCONFIRMED claim: the ledger announcement claims "Acme Ltd", id ${ORG_ID};`);
    expect(r.stdout).toContain(`Mirror nodes: ${mirrors[0].url} (--mirror), ${mirrors[1].url} (--mirror) on 2 distinct hosts (minimum 2)\n`);
    expect(r.stdout).toMatch(/^ {2}pass {2}keyAnnouncement/m);
    expect(r.stdout).toMatch(/^ {2}warn {2}identity/m);
    expect(r.opened).toEqual(["doc.pdf"]);
  });

  test("the same without a streaming reader, from standard input, with --hash, and with --opt=value", async () => {
    const viaRead = await runInProcess(["r.json", "--file=doc.pdf", `--mirror=${mirrors[0].url}`, `--mirror=${mirrors[1].url}`, "--no-builtin-mirrors"], { "r.json": receiptText, "doc.pdf": DOCUMENT }, "", { streaming: false });
    expect(viaRead.code).toBe(0);
    const viaStdin = await runInProcess(["-", "--hash", DOC_HASH.toUpperCase().replace("SHA256", "sha256"), ...named], {}, receiptText);
    expect(viaStdin.code).toBe(0);
    expect(viaStdin.stdout).toBe(viaRead.stdout);
  });

  test("--json: one JSON object, the Report", async () => {
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, ...named, "--json"], { "r.json": receiptText });
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["verdict", "recordId", "originalDocHash", "network", "public", "identity", "person", "mirrors", "mirrorSources", "witnesses", "suggestedMirrors", "minMirrors", "offline", "revocation", "checks"]);
    expect(report).toMatchObject({
      verdict: "verified_org",
      network: "testnet",
      public: true,
      identity: { status: "unconfirmed", method: null, confirmedName: null, claimedName: "Acme Ltd", claimedOrgId: ORG_ID },
      mirrors: [mirrors[0].url, mirrors[1].url],
      mirrorSources: ["--mirror", "--mirror"],
      witnesses: 2,
      suggestedMirrors: [mirrors[1].url],
      minMirrors: 2,
      offline: false,
      revocation: null,
    });
    expect(report.checks[0]).toMatchObject({ name: "documentHash", status: "pass", evidence: { document: DOC_HASH } });
  });

  test("every other verdict exits 1: another document, offline, a mirror down", async () => {
    const other = await runInProcess(["r.json", "--hash", OTHER_HASH, ...named], { "r.json": receiptText });
    expect(other.code).toBe(1);
    expect(other.stdout).toStartWith("Verdict: no_record");
    const offline = await runInProcess(["r.json", "--hash", DOC_HASH, "--offline", "--json"], { "r.json": receiptText });
    expect(offline.code).toBe(1);
    expect(JSON.parse(offline.stdout)).toMatchObject({ verdict: "unverifiable", offline: true, mirrors: [] });
    const down = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--mirror", "http://127.0.0.1:1", "--no-builtin-mirrors"], { "r.json": receiptText });
    expect(down.code).toBe(1);
    expect(down.stdout).toStartWith("Verdict: unverifiable");
    expect(down.stdout).toMatch(/^ {2}fail {2}mirrors +http:\/\/127\.0\.0\.1:1 did not answer as a mirror node/m);
  });

  test("--min-mirrors 1: a visible warning in the human output, minMirrors 1 in JSON", async () => {
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors", "--min-mirrors", "1"], { "r.json": receiptText });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("WARNING: --min-mirrors 1 is a weakened check");
    expect(r.stdout).toContain(`Mirror nodes: ${mirrors[0].url} (--mirror) on 1 distinct host (minimum 1)`);
    const json = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors", "--min-mirrors=1", "--json"], { "r.json": receiptText });
    expect(JSON.parse(json.stdout)).toMatchObject({ minMirrors: 1, mirrors: [mirrors[0].url], witnesses: 1 });
  });

  test("--help and -h: the usage on stdout, exit 0, whatever else is on the line", async () => {
    for (const argv of [["--help"], ["-h"], ["--bogus", "x", "--help"], ["r.json", "--hash", "nonsense", "-h"]]) {
      const r = await runInProcess(argv);
      expect(r).toMatchObject({ code: 0, stdout: VERIFY_RECEIPT_USAGE, stderr: "" });
    }
    // After --, -h is an argument (a receipt file named -h).
    expectUsageError(await runInProcess(["--hash", DOC_HASH, "--", "-h"]), 'cannot read the receipt "-h": no such file');
  });

  test("--help names every option, each in the synopsis and with a line of its own", () => {
    const [synopsis, options] = VERIFY_RECEIPT_USAGE.split("\nOptions:\n") as [string, string];
    for (const option of ["--mirror URL", "--no-builtin-mirrors", "--trust FILE", "--require-identity", "--min-mirrors N", "--connect-to HOST:PORT:ADDRESS:PORT", "--dns-server ADDRESS[:PORT]", "--offline", "--json"]) {
      expect(synopsis).toContain(option);
      expect(options).toMatch(new RegExp(`^ {2}${option.replace(/[[\]]/g, "\\$&")}`, "m"));
    }
    // What the user must know before trusting a verdict: whose mirror nodes are asked.
    expect(VERIFY_RECEIPT_USAGE).toContain("never the receipt's own suggestions unless you name them");
  });
});

describe("the trust roots on the command line", () => {
  const files = () => ({ "r.json": receiptText });

  test("the built-in mirror node of the receipt's network is asked after those named; --no-builtin-mirrors leaves it out", async () => {
    const builtin = fakeMirror(built.ledger);
    const route = { [BUILTIN_TESTNET]: builtin.url };
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--json"], files(), "", { route });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: "verified_org", mirrors: [mirrors[0].url, BUILTIN_TESTNET], mirrorSources: ["--mirror", "built-in"], witnesses: 2 });
    const asked = builtin.requests.length;
    expect(asked).toBeGreaterThan(0);

    const off = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors"], files(), "", { route });
    expect(off.code).toBe(1);
    expect(off.stdout).toStartWith("Verdict: unverifiable");
    expect(off.stdout).toContain(`Mirror nodes: ${mirrors[0].url} (--mirror) on 1 distinct host (minimum 2)`);
    // The receipt's suggestion is shown, not asked.
    expect(off.stdout).toContain(`Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): ${mirrors[1].url}\n`);
    expect(builtin.requests.length).toBe(asked);

    // Unreachable (here its name does not resolve), the built-in mirror node makes the verdict unverifiable, never verified.
    const unreachable = await runInProcess(["r.json", "--hash", DOC_HASH, ...named.slice(0, 4)], files());
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toContain(`${BUILTIN_TESTNET} did not answer as a mirror node: its host does not resolve (getaddrinfo ENOTFOUND testnet.mirrornode.hedera.com)`);
  });

  test("--trust FILE: its mirror nodes for the network asked, its pin confirms the identity; the name as the trust file gives it", async () => {
    const trust = trustFileText({ networks: { testnet: { mirrors: [mirrors[1].url] } }, organisations: [pinnedOrganisation({ name: "Acme Certification Ltd" })] });
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors", "--trust", "trust.json"], { ...files(), "trust.json": trust });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = r.stdout.split("\n");
    expect(lines[0]).toStartWith("Verdict: verified_org");
    expect(lines[1]).toBe(`Identity: confirmed by trust-file: "Acme Certification Ltd" (acme.example); the trust file pins topic ${TOPIC} on testnet and this key to "Acme Certification Ltd"`);
    expect(r.stdout).toContain(`Mirror nodes: ${mirrors[0].url} (--mirror), ${mirrors[1].url} (trust file) on 2 distinct hosts (minimum 2)`);
    const json = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors", "--trust=trust.json", "--json"], { ...files(), "trust.json": trust });
    expect(JSON.parse(json.stdout).identity).toMatchObject({ status: "confirmed", method: "trust-file", confirmedName: "Acme Certification Ltd", claimedName: "Acme Ltd" });
  });

  test("--trust FILE pinning the claimed organisation on another topic: a mismatch, signature_invalid, exit 1", async () => {
    const trust = trustFileText({ organisations: [pinnedOrganisation({ topicId: "0.0.7" })] });
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, ...named, "--trust", "trust.json"], { ...files(), "trust.json": trust });
    expect(r.code).toBe(1);
    expect(r.stdout).toStartWith("Verdict: signature_invalid");
    expect(r.stdout.split("\n")[1]).toBe(`Identity: MISMATCH: the ledger announcement claims "Acme Ltd", id ${ORG_ID}, but the trust file pins "Acme Ltd" to topic 0.0.7 on testnet, not ${TOPIC} on testnet. Do not trust this receipt.`);
  });

  test("--require-identity: verified_org with an unconfirmed identity exits 1; confirmed by a trust file, 0", async () => {
    const unconfirmed = await runInProcess(["r.json", "--hash", DOC_HASH, ...named, "--require-identity"], files());
    expect(unconfirmed.code).toBe(1);
    // The report is the same: the verdict stands, the exit code says the identity was required.
    expect(unconfirmed.stdout).toStartWith("Verdict: verified_org");
    expect(unconfirmed.stdout).toContain("Identity: UNCONFIRMED claim:");
    expect(unconfirmed.stdout).toBe((await runInProcess(["r.json", "--hash", DOC_HASH, ...named], files())).stdout);
    const confirmed = await runInProcess(["r.json", "--hash", DOC_HASH, ...named, "--require-identity", "--trust", "trust.json"], { ...files(), "trust.json": trustFileText() });
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain("Identity: confirmed by trust-file:");
    // Nor does it make anything else pass: offline is still exit 1.
    expect((await runInProcess(["r.json", "--hash", DOC_HASH, "--offline", "--require-identity", "--trust", "trust.json"], { ...files(), "trust.json": trustFileText() })).code).toBe(1);
  });

  test("--connect-to: mirror nodes named by host names that resolve nowhere are reached at the addresses given, and counted by them", async () => {
    const [a, b] = mirrors.map((m) => new URL(m.url));
    const before = mirrors.map((m) => m.hostHeaders.length);
    const argv = ["r.json", "--hash", DOC_HASH, "--mirror", "http://mirror-a.invalid:8081", "--mirror", "http://mirror-b.invalid:8082", "--no-builtin-mirrors", "--json"];
    const r = await runInProcess([...argv, "--connect-to", `mirror-a.invalid:8081:${a!.hostname}:${a!.port}`, `--connect-to=mirror-b.invalid:8082:${b!.hostname}:${b!.port}`], files());
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ verdict: "verified_org", mirrors: ["http://mirror-a.invalid:8081", "http://mirror-b.invalid:8082"], witnesses: 2 });
    expect(report.checks.find((c: { name: string }) => c.name === "mirrors").evidence.addresses).toEqual({ "http://mirror-a.invalid:8081": [a!.hostname], "http://mirror-b.invalid:8082": [b!.hostname] });
    // Each request still names the host the user named.
    expect(new Set(mirrors[0].hostHeaders.slice(before[0]))).toEqual(new Set(["mirror-a.invalid:8081"]));
    expect(new Set(mirrors[1].hostHeaders.slice(before[1]))).toEqual(new Set(["mirror-b.invalid:8082"]));

    // Both names sent to one address are one host.
    const one = await runInProcess([...argv, "--connect-to", `mirror-a.invalid:8081:${a!.hostname}:${a!.port}`, "--connect-to", `mirror-b.invalid:8082:${a!.hostname}:${a!.port}`], files());
    expect(one.code).toBe(1);
    expect(JSON.parse(one.stdout)).toMatchObject({ verdict: "unverifiable", witnesses: 1 });
    // Without it, the names do not resolve.
    const without = await runInProcess(argv, files());
    expect(JSON.parse(without.stdout).checks.find((c: { name: string }) => c.name === "mirrors").detail).toContain("its host does not resolve (getaddrinfo ENOTFOUND mirror-a.invalid)");
  });

  test("--dns-server: the TXT lookup asks the servers given, and a record naming the topic confirms the domain", async () => {
    const withDomain = buildReceipt({ domain: "acme.example" });
    const [a, b] = [fakeMirror(withDomain.ledger), fakeMirror(withDomain.ledger)];
    const argv = ["r.json", "--hash", DOC_HASH, "--mirror", a.url, "--mirror", b.url, "--no-builtin-mirrors", "--require-identity"];
    const receipt = { "r.json": JSON.stringify(withDomain.receipt) };
    const txt = { "_docverify.acme.example": [["v=docverify1; network=testnet; ", `topic=${TOPIC}`]] };
    const r = await runInProcess([...argv, "--dns-server", "127.0.0.1:5353", "--dns-server=[::1]:53", "--dns-server", "192.0.2.53"], receipt, "", { txt });
    expect(r.dnsServers).toEqual([["127.0.0.1:5353", "[::1]:53", "192.0.2.53"]]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[1]).toBe(`Identity: confirmed by dns: the organisation of acme.example; DNS TXT _docverify.acme.example names topic ${TOPIC} on testnet`);
    // Without a server named, the system's (an empty list); without the record, a claim, so exit 1 with --require-identity.
    const none = await runInProcess(argv, receipt);
    expect(none.dnsServers).toEqual([[]]);
    expect(none.code).toBe(1);
    expect(none.stdout).toStartWith("Verdict: verified_org");
    expect(none.stdout).toContain("Identity: UNCONFIRMED claim: the ledger announcement claims \"Acme Ltd\", id");
    expect(none.stdout).toContain("DNS TXT _docverify.acme.example: no such record");
  });

  test("a local ledger's receipt: without --mirror, unverifiable and told to name the local ledger's; named, it proves nothing publicly", async () => {
    const local = { ...built.receipt, anchor: { ...built.receipt.anchor, network: "local" } };
    const r = await runInProcess(["r.json", "--hash", DOC_HASH], { "r.json": JSON.stringify(local) });
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines.slice(0, 2)).toEqual(["Verdict: unverifiable (the verifier could not reach a conclusion; see the checks)", "Ledger: local development ledger: proves nothing publicly"]);
    expect(r.stdout).toMatch(/^ {2}fail {2}mirrors +network local has no built-in mirror nodes: name the local ledger's with --mirror URL/m);
    const named2 = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--mirror", mirrors[1].url, "--json"], { "r.json": JSON.stringify(local) });
    expect(named2.code).toBe(0);
    expect(JSON.parse(named2.stdout)).toMatchObject({ verdict: "verified_org", network: "local", public: false, mirrorSources: ["--mirror", "--mirror"] });
  });

  const TRUNCATED = () => receiptText.slice(0, 500);
  const usageErrors: [string, string[], Record<string, string | Uint8Array>, string][] = [
    ["no arguments", [], {}, "missing RECEIPT"],
    ["two receipts", ["a.json", "b.json", "--hash", DOC_HASH], {}, "one RECEIPT only"],
    ["an unknown option", ["r.json", "--hash", DOC_HASH, "--bogus"], {}, 'unknown option "--bogus"'],
    ["a short unknown option", ["r.json", "-x"], {}, 'unknown option "-x"'],
    ["--file and --hash", ["r.json", "--hash", DOC_HASH, "--file", "doc"], {}, "exactly one of --file DOC and --hash"],
    ["neither --file nor --hash", ["r.json"], {}, "exactly one of --file DOC and --hash"],
    ["--hash not a DocHash", ["r.json", "--hash", "2cf24dba"], {}, "--hash must be sha256: and 64 hex digits"],
    ["--hash twice", ["r.json", "--hash", DOC_HASH, "--hash", DOC_HASH], {}, "--hash given twice"],
    ["--file without its value", ["r.json", "--file"], {}, "--file needs a value"],
    ["--min-mirrors 0", ["r.json", "--hash", DOC_HASH, "--min-mirrors", "0"], {}, "--min-mirrors must be an integer ≥ 1"],
    ["--min-mirrors 1.5", ["r.json", "--hash", DOC_HASH, "--min-mirrors", "1.5"], {}, "--min-mirrors must be an integer ≥ 1"],
    ["--min-mirrors two", ["r.json", "--hash", DOC_HASH, "--min-mirrors", "two"], {}, "--min-mirrors must be an integer ≥ 1"],
    ["--mirror not http(s)", ["r.json", "--hash", DOC_HASH, "--mirror", "ftp://mirror"], {}, "is not an http(s) URL"],
    ["--mirror with a query", ["r.json", "--hash", DOC_HASH, "--mirror", "https://mirror.example/?a=1"], {}, "is not an http(s) URL"],
    ["--offline with a value", ["r.json", "--hash", DOC_HASH, "--offline=yes"], {}, "--offline takes no value"],
    ["a missing receipt file", ["nope.json", "--hash", DOC_HASH], {}, 'cannot read the receipt "nope.json": no such file'],
    ["a missing document", ["r.json", "--file", "nope.pdf"], { "r.json": "R" }, 'cannot read --file "nope.pdf": no such file'],
    ["a receipt that is not JSON", ["r.json", "--hash", DOC_HASH], { "r.json": "hello" }, "not a valid receipt: not JSON"],
    ["a truncated receipt", ["r.json", "--hash", DOC_HASH], { "r.json": "T" }, "not a valid receipt: not JSON"],
    ["a receipt that is an array", ["r.json", "--hash", DOC_HASH], { "r.json": "[]" }, "not a valid receipt: not a JSON object"],
    ["an unknown version", ["r.json", "--hash", DOC_HASH], { "r.json": '{"v":2}' }, "unsupported receipt version 2"],
    ["a field of the wrong type", ["r.json", "--hash", DOC_HASH], { "r.json": "W" }, "not a valid receipt: anchor.sequenceNumber: expected an integer ≥ 1"],
    ["a receipt that is not UTF-8", ["r.json", "--hash", DOC_HASH], { "r.json": new Uint8Array([0x7b, 0xff, 0x7d]) }, "not UTF-8"],
    ["a receipt over 1 MiB", ["r.json", "--hash", DOC_HASH], { "r.json": "B" }, "larger than 1 MiB"],
    // A network no verifier has roots for is not guessed at: the verifier cannot know whose mirror nodes to ask.
    ["a receipt on an unknown network", ["r.json", "--hash", DOC_HASH], { "r.json": "N" }, 'not a valid receipt: anchor.network: expected one of "mainnet", "testnet", "previewnet", "local"'],
    ["--no-builtin-mirrors with a value", ["r.json", "--hash", DOC_HASH, "--no-builtin-mirrors=yes"], {}, "--no-builtin-mirrors takes no value"],
    ["--require-identity with a value", ["r.json", "--hash", DOC_HASH, "--require-identity=1"], {}, "--require-identity takes no value"],
    ["--trust without its value", ["r.json", "--hash", DOC_HASH, "--trust"], {}, "--trust needs a value"],
    ["--trust twice", ["r.json", "--hash", DOC_HASH, "--trust", "t.json", "--trust", "t.json"], {}, "--trust given twice"],
    ["a missing trust file", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R" }, 'cannot read the trust file "t.json": no such file'],
    ["a trust file that is not JSON", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": "mirrors: all" }, "not a valid trust file: not JSON"],
    ["a trust file that is not UTF-8", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": new Uint8Array([0x7b, 0xff, 0x7d]) }, "the trust file is not UTF-8 text"],
    ["a trust file of another version", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": '{"v":2}' }, "not a valid trust file: v: unsupported trust file version 2"],
    ["a trust file with an unknown network", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": trustFileText({ networks: { devnet: { mirrors: [] } } }) }, "not a valid trust file: networks.devnet: unknown network"],
    ["a trust file with a fingerprint in capitals", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": trustFileText({ organisations: [pinnedOrganisation({ keys: [{ algorithm: "ML-DSA-65", fingerprint: "AB".repeat(32) }] })] }) }, "not a valid trust file: organisations[0].keys[0].fingerprint: expected 64 lowercase hex digits"],
    ["a trust file with an unknown field", ["r.json", "--hash", DOC_HASH, "--trust", "t.json"], { "r.json": "R", "t.json": trustFileText({ organisations: [pinnedOrganisation({ trusted: true })] }) }, "not a valid trust file: organisations[0].trusted: unexpected field"],
    ["--connect-to without a value", ["r.json", "--hash", DOC_HASH, "--connect-to"], {}, "--connect-to needs a value"],
    ["--connect-to of two parts", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:443"], {}, '--connect-to "mirror.example:443" must be HOST:PORT:ADDRESS:PORT'],
    ["--connect-to to a name, not an address", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:443:other.example:443"], {}, "with ADDRESS an IP address"],
    ["--connect-to with port 0", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:0:127.0.0.1:443"], {}, "must be HOST:PORT:ADDRESS:PORT"],
    ["--connect-to with a port over 65535", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:443:127.0.0.1:65536"], {}, "must be HOST:PORT:ADDRESS:PORT"],
    ["--connect-to with an unbracketed IPv6 address", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:443:::1:443"], {}, "(IPv6 in brackets)"],
    ["--connect-to with a bad IPv4 address", ["r.json", "--hash", DOC_HASH, "--connect-to", "mirror.example:443:127.0.0.256:443"], {}, "with ADDRESS an IP address"],
    ["--dns-server without a value", ["r.json", "--hash", DOC_HASH, "--dns-server"], {}, "--dns-server needs a value"],
    ["--dns-server a name", ["r.json", "--hash", DOC_HASH, "--dns-server", "dns.example"], {}, '--dns-server "dns.example" must be an IP address, with :PORT if not 53'],
    ["--dns-server with port 0", ["r.json", "--hash", DOC_HASH, "--dns-server", "127.0.0.1:0"], {}, "--dns-server \"127.0.0.1:0\" must be an IP address"],
    ["--dns-server with a port over 65535", ["r.json", "--hash", DOC_HASH, "--dns-server", "[::1]:70000"], {}, "must be an IP address, with :PORT if not 53"],
    ["--dns-server a bad IPv4 address", ["r.json", "--hash", DOC_HASH, "--dns-server", "1.2.3"], {}, "must be an IP address"],
  ];
  for (const [what, argv, files, message] of usageErrors) {
    test(`usage error, exit 2, one line: ${what}`, async () => {
      const resolved = Object.fromEntries(
        Object.entries(files).map(([k, v]) => {
          if (v === "R") return [k, receiptText];
          if (v === "T") return [k, TRUNCATED()];
          if (v === "W") return [k, receiptText.replace('"sequenceNumber":2', '"sequenceNumber":"2"')];
          if (v === "B") return [k, " ".repeat(1024 * 1024) + receiptText];
          if (v === "N") return [k, receiptText.replace('"network":"testnet"', '"network":"devnet"')];
          return [k, v];
        }),
      );
      expectUsageError(await runInProcess(argv, resolved), message);
    });
  }

  test("a fault inside the verifier is one line and exit 1, never a stack trace or a pass", async () => {
    let stderr = "";
    const code = await runVerifyReceipt(["-", "--hash", DOC_HASH, "--mirror", mirrors[0].url], {
      stdout: () => {
        throw new Error("stdout closed\n    at write (x.ts:1:1)");
      },
      stderr: (t) => void (stderr += t),
      readFile: async () => new Uint8Array(),
      readStdin: async () => new TextEncoder().encode(receiptText),
      fetch: (url, init) => fetch(url, init),
    });
    expect(code).toBe(1);
    expect(stderr).toBe(`${PREFIX}internal error: stdout closed\n`);
  });
});

describe("--file of a docverify-signed PDF", () => {
  const sha = (b: Uint8Array) => "sha256:" + createHash("sha256").update(b).digest("hex");
  let original: Uint8Array;
  let signed: Uint8Array;
  let changed: Uint8Array;
  beforeAll(async () => {
    original = makeTestPdf({ xrefStream: true });
    signed = await signPdf(original, { recordId: built.receipt.recordId, verifyUrl: `https://dv.example/verify/${built.receipt.recordId}`, signerName: "Ada", organisation: "Acme Ltd", signedAt: "2026-01-15T09:30:00.123Z" });
    changed = new Uint8Array([...signed, ...new TextEncoder().encode("%appended\n")]);
  });
  /** The hash the command compared with the receipt's, from its JSON report. */
  const compared = (stdout: string) => (JSON.parse(stdout) as { checks: { name: string; evidence: { document: string } }[] }).checks.find((c) => c.name === "documentHash")!.evidence.document;

  test("the original inside it is hashed (only its first bytes are read), and stderr says so; streaming or not", async () => {
    for (const streaming of [true, false]) {
      const r = await runInProcess(["r.json", "--file", "signed.pdf", "--offline", "--json"], { "r.json": receiptText, "signed.pdf": signed }, "", { streaming });
      expect(compared(r.stdout)).toBe(sha(original));
      expect(r.stderr).toBe(`--file is a PDF signed with docverify (record ${built.receipt.recordId}): checking the original document inside it, its first ${original.length} bytes\n`);
      expect(r.opened).toEqual(streaming ? [`signed.pdf[0, ${original.length})`] : []);
    }
  });

  test("changed after signing: hashed whole, so it cannot match, and stderr says why; a plain PDF: hashed whole, nothing said", async () => {
    const r = await runInProcess(["r.json", "--file", "changed.pdf", "--offline", "--json"], { "r.json": receiptText, "changed.pdf": changed });
    expect(compared(r.stdout)).toBe(sha(changed));
    expect(r.stderr).toContain("changed after signing (bytes were added after docverify's update): it is no longer the signed document, so it is checked whole and cannot match\n");
    expect(JSON.parse(r.stdout).checks.find((c: { name: string }) => c.name === "documentHash").status).toBe("fail");
    const plain = await runInProcess(["r.json", "--file", "plain.pdf", "--offline", "--json"], { "r.json": receiptText, "plain.pdf": original });
    expect(compared(plain.stdout)).toBe(sha(original));
    expect(plain.stderr).toBe("");
    expect(plain.opened).toEqual(["plain.pdf"]);
  });
});

describe("README's verify-receipt examples", () => {
  test("run as written, against the fake mirrors: verified_org three times, then unverifiable offline", async () => {
    const readme = await Bun.file(join(ROOT, "README.md")).text();
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("verify-receipt"));
    expect(block).toBeDefined();
    const lines = block!.trim().split("\n");
    expect(lines.length).toBe(4);
    // The README's mirror nodes are the two fake ones here: the built-in testnet one and the one the
    // user names, on the command line or in the trust file (which pins the fixture's organisation).
    const hosts: Record<string, string> = { "testnet.mirrornode.hedera.com": mirrors[0].url, "mirror.example.org": mirrors[1].url };
    const routed = { ...built.receipt, mirrorNodes: ["https://testnet.mirrornode.hedera.com"] };
    const trust = trustFileText({ networks: { testnet: { mirrors: ["https://mirror.example.org"] } } });
    const codes: number[] = [];
    for (const line of lines) {
      const words = line.split(/\s+/);
      expect(words.slice(0, 2).join(" ")).toMatch(/^(docverify verify-receipt|node docverify-verify\.mjs)$/);
      let out = "";
      const code = await runVerifyReceipt(words.slice(2), {
        stdout: (t) => void (out += t),
        stderr: () => {},
        readFile: async (path) =>
          path === "receipt.json"
            ? new TextEncoder().encode(JSON.stringify(routed))
            : path === "contract.pdf"
              ? DOCUMENT
              : path === "acme-trust.json"
                ? new TextEncoder().encode(trust)
                : Promise.reject(Object.assign(new Error("ENOENT"), { code: "ENOENT" })),
        readStdin: async () => new Uint8Array(),
        fetch: (url, init) => {
          const u = new URL(url);
          return fetch(hosts[u.host] + u.pathname + u.search, init);
        },
      });
      codes.push(code);
      if (line.includes("--json")) expect(JSON.parse(out).verdict).toBe("verified_org");
      if (line.includes("--require-identity")) expect(out).toContain('Identity: confirmed by trust-file: "Acme Ltd"');
    }
    // Verified on the named mirror and the built-in one; with the trust file (its mirror node, its
    // pin: the identity confirmed, so --require-identity passes); offline, never verified.
    expect(codes).toEqual([0, 0, 0, 1]);
  });
});

/** The user's view: the same cases through `bun src/main.ts verify-receipt` and `node docverify-verify.mjs`. */
describe("as a process", () => {
  let dir: string;
  let standalone: string;
  let signedPdf: Uint8Array;
  let original: Uint8Array;
  beforeAll(async () => {
    // Larger than the 64 KiB tail (a 1,500-page PDF), so the file's tail and its first bytes are read separately.
    original = makeTestPdf({ pages: 1500 });
    signedPdf = await signPdf(original, { recordId: built.receipt.recordId, verifyUrl: "https://dv.example/verify/x", signerName: "Ada", organisation: "Acme Ltd", signedAt: "2026-01-15T09:30:00Z" });
    dir = tempDir("docverify-verify-cli-");
    writeFileSync(join(dir, "receipt.json"), receiptText);
    writeFileSync(join(dir, "doc.txt"), DOCUMENT);
    writeFileSync(join(dir, "bad.json"), receiptText.slice(0, 300));
    writeFileSync(join(dir, "signed.pdf"), signedPdf);
    // Built as npm run build builds it, then copied alone into an empty folder.
    const out = join(tempDir("docverify-verify-build-"), "docverify-verify.mjs");
    const build = Bun.spawnSync([BUN, join(ROOT, "scripts", "build-verifier.ts"), out], { cwd: ROOT });
    if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
    const alone = tempDir("docverify-verify-alone-");
    mkdirSync(join(alone, "bin"));
    standalone = join(alone, "bin", "docverify-verify.mjs");
    copyFileSync(out, standalone);
  }, 60_000);

  async function run(cmd: string[], args: string[], stdin?: string): Promise<Run> {
    const p = Bun.spawn([...cmd, ...args], {
      cwd: join(standalone, ".."),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, stdout, stderr };
  }

  const shells: [string, () => string[]][] = [
    ["docverify verify-receipt", () => [BUN, join(ROOT, "src", "main.ts"), "verify-receipt"]],
    ["node docverify-verify.mjs", () => ["node", standalone]],
  ];

  test("node is Node.js 20 or later, and the standalone file is alone in its folder with no node_modules", () => {
    const v = Bun.spawnSync(["node", "--version"]).stdout.toString().trim();
    expect(Number(v.slice(1).split(".")[0])).toBeGreaterThanOrEqual(20);
    expect(readdirSync(join(standalone, ".."))).toEqual(["docverify-verify.mjs"]);
    expect(Bun.file(standalone).size).toBeGreaterThan(20_000); // noble is inside
  });

  const cases: [string, (d: string) => string[], number, (r: Run) => void, string?][] = [
    ["verified_org", (d) => [join(d, "receipt.json"), "--file", join(d, "doc.txt"), ...named], 0, (r) => expect(r.stdout).toStartWith("Verdict: verified_org")],
    ["--json from stdin", () => ["-", "--hash", DOC_HASH, ...named, "--json"], 0, (r) => expect(JSON.parse(r.stdout)).toMatchObject({ verdict: "verified_org", identity: { status: "unconfirmed" }, witnesses: 2 }), "stdin"],
    ["--min-mirrors 1", (d) => [join(d, "receipt.json"), "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--no-builtin-mirrors", "--min-mirrors", "1"], 0, (r) => expect(r.stdout).toContain("WARNING: --min-mirrors 1")],
    ["--require-identity, unconfirmed", (d) => [join(d, "receipt.json"), "--hash", DOC_HASH, ...named, "--require-identity"], 1, (r) => expect(r.stdout).toMatch(/^Verdict: verified_org .*\nIdentity: UNCONFIRMED claim: /)],
    ["two ports of one address", (d) => [join(d, "receipt.json"), "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--mirror", mirrors[0].url.replace(/:(\d+)$/, ":1"), "--no-builtin-mirrors"], 1, (r) => expect(r.stdout).toContain("on 1 distinct host (minimum 2)")],
    ["a malformed --connect-to", (d) => [join(d, "receipt.json"), "--hash", DOC_HASH, "--connect-to", "mirror.example:443"], 2, (r) => expect(r.stderr).toStartWith(`${PREFIX}--connect-to "mirror.example:443" must be HOST:PORT:ADDRESS:PORT`)],
    ["another document", (d) => [join(d, "receipt.json"), "--hash", OTHER_HASH], 1, (r) => expect(r.stdout).toStartWith("Verdict: no_record")],
    ["offline", (d) => [join(d, "receipt.json"), "--file", join(d, "doc.txt"), "--offline"], 1, (r) => expect(r.stdout).toStartWith("Verdict: unverifiable")],
    ["a truncated receipt", (d) => [join(d, "bad.json"), "--hash", DOC_HASH], 2, (r) => expect(r.stderr).toBe(`${PREFIX}not a valid receipt: not JSON (truncated or damaged?) (see --help)\n`)],
    ["a missing receipt", (d) => [join(d, "none.json"), "--hash", DOC_HASH], 2, (r) => expect(r.stderr).toStartWith(`${PREFIX}cannot read the receipt`)],
    ["a folder as the document", (d) => [join(d, "receipt.json"), "--file", d], 2, (r) => expect(r.stderr).toStartWith(`${PREFIX}cannot read --file`)],
    [
      "a signed PDF: its original checked",
      (d) => [join(d, "receipt.json"), "--file", join(d, "signed.pdf"), "--offline", "--json"],
      1,
      (r) => {
        const check = (JSON.parse(r.stdout) as { checks: { name: string; evidence: { document: string } }[] }).checks.find((c) => c.name === "documentHash")!;
        expect(check.evidence.document).toBe("sha256:" + createHash("sha256").update(original).digest("hex"));
        expect(r.stderr).toStartWith("--file is a PDF signed with docverify");
      },
      "note",
    ],
    ["an unknown option", () => ["--bogus"], 2, (r) => expect(r.stderr).toBe(`${PREFIX}unknown option "--bogus" (see --help)\n`)],
    ["--help", () => ["--help"], 0, (r) => expect(r.stdout).toBe(VERIFY_RECEIPT_USAGE)],
  ];
  for (const [name, argsOf, code, more, stdin] of cases) {
    test(`${name} → exit ${code}, the same output from both shells`, async () => {
      const [main, node] = await Promise.all(shells.map(([, cmd]) => run(cmd(), argsOf(dir), stdin === "stdin" ? receiptText : undefined)));
      for (const r of [main!, node!]) {
        expect({ code: r.code, stderrLines: r.stderr === "" ? 0 : r.stderr.split("\n").length - 1 }).toEqual({ code, stderrLines: code === 2 || stdin === "note" ? 1 : 0 });
        if (code === 2) expect(r.stdout).toBe("");
        more(r);
      }
      expect(node).toEqual(main!);
    }, 30_000);
  }
});
