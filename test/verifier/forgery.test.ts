/**
 * A forged receipt against every command-line shell of the verifier (docs/receipts.md §3): the
 * forger's own ML-DSA-65 keys, a receipt for a document nobody authenticated naming an
 * organisation's id and name, and "mirror nodes" of the forger's serving a topic with a correct
 * running-hash chain (test/support/forgery.ts). Each shell is run as a person runs it: in-process
 * (`runVerifyReceipt` with the real files and network), `bun src/main.ts verify-receipt`, and the
 * standalone `node docverify-verify.mjs` built into a folder of its own.
 *
 * In its default invocation (the receipt and the document, nothing else) no shell says verified:
 * the receipt's mirror nodes are never asked, the built-in public ones are unreachable here, and a
 * local-ledger receipt has no mirror nodes at all until the user names some. When the user does
 * name the forger's machines, two ports or two names of one address are one witness; two
 * addresses prove the ledger messages but not who wrote them. The same forgery on a topic of a real
 * local ledger, next to the real organisation's, is a claim; a trust file or the claimed domain's
 * DNS record that places the organisation elsewhere makes it a mismatch. A real receipt of a
 * revoked record, handed out with mirrors that hide the revocation, is not believed either.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtinMirrors } from "../../src/verifier/trust.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { startDnsServer } from "../support/dns-server.ts";
import { announcementOf, forgeReceipt, hideRevocation, openForgerTopic, relabel, startForgerMirrors, startRelay, type Forgery, type ForgerMirrors } from "../support/forgery.ts";
import { startLyingMirror } from "../support/lying-mirror.ts";
import { authenticate, deploy, type Deployment, type Held } from "../receipts/e2e-rig.ts";
import { runInShell, SHELLS, standaloneVerifier, type Shell, type ShellRun } from "./shells.ts";

afterAll(cleanup);


interface Identity {
  status: "confirmed" | "unconfirmed" | "mismatch";
  method: string | null;
  claimedName: string | null;
  claimedOrgId: string | null;
  claimedDomain: string | null;
  detail: string;
}
interface Report {
  verdict: string;
  public: boolean;
  identity: Identity | null;
  mirrors: string[];
  mirrorSources: string[];
  witnesses: number;
  suggestedMirrors: string[];
  checks: { name: string; status: string; detail: string; evidence?: Record<string, unknown> }[];
}
type Run = ShellRun<Report>;

let standalone: string;

beforeAll(async () => {
  standalone = await standaloneVerifier();
}, 30_000);

const runIn = (shell: Shell, args: readonly string[]): Promise<Run> => runInShell<Report>(shell, args, standalone);

/** The same arguments in every shell, at once. */
const inEveryShell = (args: readonly string[]): Promise<Run[]> => Promise.all(SHELLS.map((s) => runIn(s, args)));

/** The receipt as a file, as it would be handed over. */
function receiptFile(receipt: unknown): string {
  const path = join(tempDir("docverify-forged-"), "receipt.json");
  writeFileSync(path, JSON.stringify(receipt, null, 2));
  return path;
}

/** The receipt and the document as files, as they would be handed over. */
function held(receipt: unknown, document: Uint8Array): { receipt: string; document: string } {
  const path = join(tempDir("docverify-document-"), "contract.pdf");
  writeFileSync(path, document);
  return { receipt: receiptFile(receipt), document: path };
}

/** What a person types: the receipt and the document, nothing else. */
const defaultArgs = (f: { receipt: string; document: string }, ...more: string[]) => [f.receipt, "--file", f.document, ...more];
const mirrorArgs = (urls: readonly string[]) => urls.flatMap((u) => ["--mirror", u]);

/** The verdict and exit code in every shell, and never a verified one where `verdict` is not. */
function expectVerdict(runs: readonly Run[], verdict: string, code: number): void {
  for (const r of runs) {
    expect({ shell: r.shell, verdict: r.report?.verdict, code: r.code, stderr: r.code === 2 ? r.stderr : "" }).toEqual({ shell: r.shell, verdict, code, stderr: "" });
  }
}

function check(r: Run, name: string) {
  const c = r.report!.checks.find((x) => x.name === name);
  if (c === undefined) throw new Error(`${r.shell}: no ${name} check`);
  return c;
}

/** Every line of the text output that names `name` says it is a claim. */
function expectNameOnlyAsClaim(text: string, name: string): void {
  const naming = text.split("\n").filter((l) => l.includes(name));
  expect(naming.length).toBeGreaterThan(0);
  for (const line of naming) expect(line).toMatch(/UNCONFIRMED claim|calling itself|claims/);
  expect(text).not.toContain("Identity: confirmed");
}

const NAME = "Northwind Bank plc";
const CLAIM = { orgId: randomUUID(), name: NAME };

describe("a forged receipt, in each shell's default invocation", () => {
  let mirrors: ForgerMirrors;
  let mainnet: Forgery;

  beforeAll(() => {
    mainnet = forgeReceipt({ network: "mainnet", claim: CLAIM });
    mirrors = startForgerMirrors([mainnet.topic], "two-hosts");
    mainnet.receipt.mirrorNodes = mirrors.urls;
  });

  test("network mainnet: unverifiable, exit 1, only the built-in mainnet mirror nodes asked; the forger's never", async () => {
    const files = held(mainnet.receipt, mainnet.document);
    const runs = await inEveryShell(defaultArgs(files, "--json"));
    expectVerdict(runs, "unverifiable", 1);
    for (const r of runs) {
      expect(r.report!.mirrors).toEqual([...builtinMirrors("mainnet")]);
      expect(r.report!.mirrorSources).toEqual(builtinMirrors("mainnet").map(() => "built-in"));
      expect(r.report!.suggestedMirrors).toEqual(mirrors.urls);
      expect(r.report!.identity).toBeNull();
      expect(check(r, "mirrors").status).toBe("fail");
      // The forgery itself holds up as far as it can go without the ledger.
      for (const name of ["documentHash", "recordPayload", "signerSignature", "sealPayload", "sealSignature"]) expect([name, check(r, name).status]).toEqual([name, "pass"]);
    }
    expect(mirrors.requests).toEqual([]);
  });

  test("the text output names the receipt's mirror nodes as suggested, not asked, and never the claimed name", async () => {
    const files = held(mainnet.receipt, mainnet.document);
    const runs = await inEveryShell(defaultArgs(files));
    for (const r of runs) {
      expect([r.shell, r.code]).toEqual([r.shell, 1]);
      expect(r.stdout).toStartWith("Verdict: unverifiable");
      const suggested = r.stdout.split("\n").find((l) => l.startsWith("Suggested by the receipt, not asked"));
      expect(suggested).toBe(`Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): ${mirrors.urls.join(", ")}`);
      expect(r.stdout).toContain("Identity: not established");
      expect(r.stdout).not.toContain(NAME);
    }
    expect(mirrors.requests).toEqual([]);
  });

  test("network testnet: unverifiable, exit 1 (one built-in mirror node is one witness)", async () => {
    const forged = forgeReceipt({ network: "testnet", claim: CLAIM, mirrorNodes: mirrors.urls });
    const runs = await inEveryShell(defaultArgs(held(forged.receipt, forged.document), "--json"));
    expectVerdict(runs, "unverifiable", 1);
    for (const r of runs) {
      expect(r.report!.mirrors).toEqual([...builtinMirrors("testnet")]);
      expect(check(r, "mirrors").detail).toContain("only 1 distinct host");
    }
    expect(mirrors.requests).toEqual([]);
  });

  test("network local: unverifiable, exit 1, saying to name the local ledger's mirror nodes; public false", async () => {
    const forged = forgeReceipt({ network: "local", claim: CLAIM, mirrorNodes: mirrors.urls });
    const files = held(forged.receipt, forged.document);
    const runs = await inEveryShell(defaultArgs(files, "--json"));
    expectVerdict(runs, "unverifiable", 1);
    for (const r of runs) {
      expect(r.report!.mirrors).toEqual([]);
      expect(r.report!.public).toBe(false);
      expect(check(r, "mirrors").detail).toBe("network local has no built-in mirror nodes: name the local ledger's with --mirror URL (a local development ledger proves nothing publicly)");
    }
    const text = await runIn("node", defaultArgs(files));
    expect(text.stdout).toContain("Ledger: local development ledger: proves nothing publicly");
    expect(mirrors.requests).toEqual([]);
  });

  test("a forged mainnet receipt relabelled local, its fake mirrors named: at best public false, identity unconfirmed, proving nothing publicly", async () => {
    const files = held(relabel(mainnet.receipt, "local"), mainnet.document);
    const runs = await inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(mirrors.urls)));
    for (const r of runs) {
      expect([r.shell, r.report!.public, r.report!.identity?.status, r.report!.identity?.claimedName]).toEqual([r.shell, false, "unconfirmed", NAME]);
      expect(r.code).toBe(r.report!.verdict === "verified_org" ? 0 : 1);
    }
    const [text, required] = await Promise.all([runIn("bun", defaultArgs(files, ...mirrorArgs(mirrors.urls))), runIn("node", defaultArgs(files, "--require-identity", ...mirrorArgs(mirrors.urls)))]);
    expect(text.stdout).toContain("Ledger: local development ledger: proves nothing publicly");
    expect(text.stdout).toContain("Identity: UNCONFIRMED claim");
    expectNameOnlyAsClaim(text.stdout, NAME);
    expect(required.code).toBe(1);
  });
});

describe("the forger's mirror nodes, named by the user", () => {
  let forged: Forgery;
  const servers: Partial<Record<"two-ports" | "two-names" | "two-hosts", ForgerMirrors>> = {};

  beforeAll(() => {
    forged = forgeReceipt({ network: "mainnet", claim: CLAIM });
    for (const layout of ["two-ports", "two-names", "two-hosts"] as const) servers[layout] = startForgerMirrors([forged.topic], layout);
    forged.receipt.mirrorNodes = servers["two-hosts"]!.urls;
  });

  for (const layout of ["two-ports", "two-names"] as const) {
    test(`${layout === "two-ports" ? "two ports of one address" : "localhost and 127.0.0.1"}: unverifiable, exit 1: one host is one witness`, async () => {
      const urls = servers[layout]!.urls;
      const files = held(forged.receipt, forged.document);
      const [withBuiltin, alone] = await Promise.all([inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(urls))), inEveryShell(defaultArgs(files, "--json", "--no-builtin-mirrors", ...mirrorArgs(urls)))]);
      expectVerdict(withBuiltin, "unverifiable", 1);
      expectVerdict(alone, "unverifiable", 1);
      for (const r of alone) {
        expect([r.shell, r.report!.mirrors, r.report!.witnesses]).toEqual([r.shell, urls, 1]);
        expect(check(r, "mirrors").detail).toStartWith(`only 1 distinct host among the mirror nodes for a minimum of 2 (${urls[1]} is on the same host as ${urls[0]})`);
      }
    });
  }

  test("127.0.0.2 and 127.0.0.3: the ledger proof holds, but who made it is an unconfirmed claim; --require-identity exits 1", async () => {
    const urls = servers["two-hosts"]!.urls;
    const files = held(forged.receipt, forged.document);
    const [withBuiltin, alone, required] = await Promise.all([
      inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(urls))),
      inEveryShell(defaultArgs(files, "--json", "--no-builtin-mirrors", ...mirrorArgs(urls))),
      inEveryShell(defaultArgs(files, "--no-builtin-mirrors", "--require-identity", ...mirrorArgs(urls))),
    ]);
    // The built-in mainnet mirror nodes are asked as well, and do not answer here.
    expectVerdict(withBuiltin, "unverifiable", 1);
    expectVerdict(alone, "verified_org", 0);
    for (const r of alone) {
      expect([r.shell, r.report!.witnesses]).toEqual([r.shell, 2]);
      expect(r.report!.identity).toMatchObject({ status: "unconfirmed", method: null, claimedName: NAME, claimedOrgId: CLAIM.orgId, claimedDomain: null });
      expect(check(r, "identity").status).toBe("warn");
    }
    for (const r of required) {
      expect([r.shell, r.code]).toEqual([r.shell, 1]);
      expect(r.stdout).toStartWith("Verdict: verified_org");
      expect(r.stdout).toContain(`Identity: UNCONFIRMED claim: the ledger announcement claims ${JSON.stringify(NAME)}, id ${CLAIM.orgId}`);
      expectNameOnlyAsClaim(r.stdout, NAME);
    }
  });
});

describe("on a real local ledger, beside the real organisation", () => {
  const ORG_NAME = "Contoso Notaries Ltd";
  const DOMAIN = "contoso-notaries.example";
  let d: Deployment;
  let real: Held;
  let withdrawn: Held;
  /** The real ledger's two mirror nodes as two hosts: its first port, and its second behind an honest proxy on 127.0.0.2. */
  let honest: [string, string];
  let realTopic: string;
  let realOrgId: string;
  let realKey: string;
  let onLedger: Forgery;
  let withDomain: Forgery;
  let revocationSeq: number;

  beforeAll(async () => {
    d = await deploy("separate", { orgName: ORG_NAME });
    real = await authenticate(d);
    // Its receipt is fetched before the revocation: it says `revocation: null`.
    withdrawn = await authenticate(d, "withdrawn.pdf");
    await d.revoke(withdrawn.recordId, "SUPERSEDED");
    revocationSeq = (JSON.parse(await d.receipt(withdrawn.recordId)) as { revocation: { anchor: { sequenceNumber: number } } }).revocation.anchor.sequenceNumber;
    const proxy = await startLyingMirror({ upstream: d.mirrors[1]!, lie: { kind: "none" } });
    honest = [d.mirrors[0]!, (await startRelay("127.0.0.2", proxy.url)).url];
    const receipt = JSON.parse(real.receiptText) as Record<string, any>;
    realTopic = receipt.anchor.topicId;
    const announced = announcementOf(receipt);
    realOrgId = announced.orgId;
    realKey = announced.keyFingerprint;
    // The forger's topic, on the same ledger, announcing the real organisation's id and name.
    const forger = await openForgerTopic(d.mirrors[0]!);
    onLedger = await forger.forge({ orgId: realOrgId, name: ORG_NAME }, d.mirrors);
    withDomain = await forger.forge({ orgId: realOrgId, name: ORG_NAME, domain: DOMAIN }, d.mirrors);
  }, 60_000);

  test("the forger's topic is not the organisation's, and its default invocation is unverifiable", async () => {
    expect(onLedger.receipt.anchor.topicId).not.toBe(realTopic);
    expect(announcementOf(onLedger.receipt)).toMatchObject({ orgId: realOrgId, name: ORG_NAME });
    const runs = await inEveryShell(defaultArgs(held(onLedger.receipt, onLedger.document), "--json"));
    expectVerdict(runs, "unverifiable", 1);
  });

  test("the local ledger's mirror nodes named: verified_org on a local ledger, the real organisation's name only as an unconfirmed claim", async () => {
    const files = held(onLedger.receipt, onLedger.document);
    const [runs, text] = await Promise.all([inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(honest))), runIn("node", defaultArgs(files, ...mirrorArgs(honest)))]);
    expectVerdict(runs, "verified_org", 0);
    for (const r of runs) {
      expect([r.shell, r.report!.public, r.report!.witnesses]).toEqual([r.shell, false, 2]);
      expect(r.report!.identity).toMatchObject({ status: "unconfirmed", claimedName: ORG_NAME, claimedOrgId: realOrgId });
    }
    expect(text.stdout).toContain("Ledger: local development ledger: proves nothing publicly");
    expectNameOnlyAsClaim(text.stdout, ORG_NAME);
  });

  test("a trust file pinning the real organisation: the forgery is a mismatch, signature_invalid, exit 1; the real receipt is confirmed", async () => {
    const trust = join(tempDir("docverify-trust-"), "trust.json");
    writeFileSync(
      trust,
      JSON.stringify({
        v: 1,
        networks: { local: { mirrors: honest } },
        organisations: [{ orgId: realOrgId, name: ORG_NAME, domain: null, network: "local", topicId: realTopic, keys: [{ algorithm: "ML-DSA-65", fingerprint: realKey }] }],
      }),
    );
    const [forgedRuns, realRuns] = await Promise.all([
      inEveryShell(defaultArgs(held(onLedger.receipt, onLedger.document), "--json", "--trust", trust)),
      inEveryShell([real.receiptPath, "--file", real.documentPath, "--json", "--trust", trust, "--require-identity"]),
    ]);
    expectVerdict(forgedRuns, "signature_invalid", 1);
    for (const r of forgedRuns) {
      expect(r.report!.mirrorSources).toEqual(["trust file", "trust file"]);
      expect(r.report!.identity).toMatchObject({ status: "mismatch", claimedName: ORG_NAME });
      expect(r.report!.identity!.detail).toContain(`to topic ${realTopic} on local, not ${onLedger.receipt.anchor.topicId} on local`);
    }
    expectVerdict(realRuns, "verified_org", 0);
    for (const r of realRuns) expect(r.report!.identity).toMatchObject({ status: "confirmed", method: "trust-file" });
  });

  test("a claimed domain whose _docverify TXT record names the real topic: mismatch, signature_invalid, exit 1", async () => {
    const dns = await startDnsServer({ [`_docverify.${DOMAIN}`]: [[`v=docverify1; network=local; topic=${realTopic}`]] });
    const files = held(withDomain.receipt, withDomain.document);
    const runs = await inEveryShell(defaultArgs(files, "--json", "--dns-server", dns.address, ...mirrorArgs(honest)));
    expectVerdict(runs, "signature_invalid", 1);
    for (const r of runs) {
      expect(r.report!.identity).toMatchObject({ status: "mismatch", claimedDomain: DOMAIN, claimedName: ORG_NAME });
      expect(r.report!.identity!.detail).toContain(`DNS TXT _docverify.${DOMAIN} names ${realTopic} on local, not ${withDomain.receipt.anchor.topicId} on local`);
    }
    expect(dns.asked).toContain(`_docverify.${DOMAIN}`);
  });

  test("a real local-ledger receipt relabelled mainnet or testnet: unverifiable, exit 1, the real mirror nodes only suggested", async () => {
    const [mainnet, testnet] = await Promise.all(
      (["mainnet", "testnet"] as const).map((network) => inEveryShell(defaultArgs({ receipt: receiptFile(relabel(JSON.parse(real.receiptText), network)), document: real.documentPath }, "--json"))),
    );
    expectVerdict(mainnet!, "unverifiable", 1);
    expectVerdict(testnet!, "unverifiable", 1);
    for (const r of [...mainnet!, ...testnet!]) {
      expect(r.report!.mirrorSources.every((s) => s === "built-in")).toBe(true);
      expect(r.report!.suggestedMirrors).toEqual(d.mirrors);
    }
  });

  test("a revoked record's receipt handed out with mirror nodes that hide the revocation: never verified", async () => {
    const hidden = await hideRevocation(withdrawn.receiptText, d.mirrors, { topicId: realTopic, sequenceNumber: revocationSeq });
    const files = { receipt: receiptFile(hidden.receipt), document: withdrawn.documentPath };
    const liars = hidden.liars.map((l) => l.url);
    // One liar seen as a host of its own, beside an honest mirror node.
    const liarElsewhere = (await startRelay("127.0.0.3", liars[1]!)).url;
    const [byDefault, namedLiars, oneHonest, allHonest] = await Promise.all([
      inEveryShell(defaultArgs(files, "--json")),
      inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(liars))),
      inEveryShell(defaultArgs(files, "--json", ...mirrorArgs([honest[0], liarElsewhere]))),
      inEveryShell(defaultArgs(files, "--json", ...mirrorArgs(honest))),
    ]);
    // Nothing named: a local-ledger receipt has no mirror nodes to ask, and the receipt's are not asked.
    expectVerdict(byDefault, "unverifiable", 1);
    for (const r of byDefault) expect([r.report!.mirrors, r.report!.suggestedMirrors]).toEqual([[], liars]);
    // The receipt's two liars are one host (127.0.0.1).
    expectVerdict(namedLiars, "unverifiable", 1);
    // One honest witness is enough to expose the liar.
    expectVerdict(oneHonest, "inconsistent_mirrors", 1);
    expectVerdict(allHonest, "revoked", 1);
  });
});
