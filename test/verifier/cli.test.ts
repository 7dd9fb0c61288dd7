/**
 * The verifier's command line (docs/receipts.md §4): in-process through runVerifyReceipt with
 * fake files and the fake mirror nodes, then as the user runs it, `bun src/main.ts
 * verify-receipt` and the built standalone `node docverify-verify.mjs` alone in an empty folder,
 * with the same cases, the same output and the same exit codes; a docverify-signed PDF given as
 * --file is checked by the original inside it, in both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { signPdf } from "../../src/pdf/stamp.ts";
import { runVerifyReceipt, type VerifierIo } from "../../src/verifier/cli.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { VERIFY_RECEIPT_USAGE } from "../../src/verifier/usage.ts";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { buildReceipt, DOC_HASH, DOCUMENT, fakeMirror, OTHER_HASH, type Built, type FakeMirror } from "./fixtures.ts";

afterAll(cleanup);

const PREFIX = "docverify verify-receipt: ";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** runVerifyReceipt over in-memory files (and stdin), with the real fetch to the fake mirrors. */
async function runInProcess(argv: string[], files: Record<string, Uint8Array | string> = {}, stdin: Uint8Array | string = "", options: { streaming?: boolean } = {}): Promise<Run & { opened: string[] }> {
  let stdout = "";
  let stderr = "";
  const opened: string[] = [];
  const bytes = (v: Uint8Array | string) => (typeof v === "string" ? new TextEncoder().encode(v) : v);
  const read = async (path: string) => {
    const f = files[path];
    if (f === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'\n    at somewhere (x.ts:1:1)`), { code: "ENOENT" });
    return bytes(f);
  };
  const io: VerifierIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readFile: read,
    readStdin: async () => bytes(stdin),
    fetch: (url, init) => fetch(url, init),
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
  return { code, stdout, stderr, opened };
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

beforeAll(() => {
  built = buildReceipt();
  mirrors = [fakeMirror(built.ledger), fakeMirror(built.ledger)];
  built.receipt.mirrorNodes = [mirrors[1].url];
  receiptText = JSON.stringify(built.receipt);
});

describe("runVerifyReceipt", () => {
  test("verified_org: exit 0, the human report on stdout, nothing on stderr; the document streamed", async () => {
    const r = await runInProcess(["r.json", "--file", "doc.pdf", "--mirror", mirrors[0].url], { "r.json": receiptText, "doc.pdf": DOCUMENT });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toStartWith("Verdict: verified_org");
    expect(r.stdout).toContain("Organisation: Acme Ltd");
    expect(r.stdout).toMatch(/^ {2}pass {2}keyAnnouncement/m);
    expect(r.opened).toEqual(["doc.pdf"]);
  });

  test("the same without a streaming reader, from standard input, with --hash, and with --opt=value", async () => {
    const viaRead = await runInProcess(["r.json", "--file=doc.pdf", `--mirror=${mirrors[0].url}`], { "r.json": receiptText, "doc.pdf": DOCUMENT }, "", { streaming: false });
    expect(viaRead.code).toBe(0);
    const viaStdin = await runInProcess(["-", "--hash", DOC_HASH.toUpperCase().replace("SHA256", "sha256"), "--mirror", mirrors[0].url], {}, receiptText);
    expect(viaStdin.code).toBe(0);
    expect(viaStdin.stdout).toBe(viaRead.stdout);
  });

  test("--json: one JSON object, the Report", async () => {
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--json"], { "r.json": receiptText });
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["verdict", "recordId", "originalDocHash", "organisation", "person", "mirrors", "minMirrors", "offline", "revocation", "checks"]);
    expect(report).toMatchObject({ verdict: "verified_org", mirrors: [mirrors[0].url, mirrors[1].url], minMirrors: 2, offline: false, revocation: null });
    expect(report.checks[0]).toMatchObject({ name: "documentHash", status: "pass", evidence: { document: DOC_HASH } });
  });

  test("every other verdict exits 1: another document, offline, a mirror down", async () => {
    const other = await runInProcess(["r.json", "--hash", OTHER_HASH, "--mirror", mirrors[0].url], { "r.json": receiptText });
    expect(other.code).toBe(1);
    expect(other.stdout).toStartWith("Verdict: no_record");
    const offline = await runInProcess(["r.json", "--hash", DOC_HASH, "--offline", "--json"], { "r.json": receiptText });
    expect(offline.code).toBe(1);
    expect(JSON.parse(offline.stdout)).toMatchObject({ verdict: "unverifiable", offline: true, mirrors: [] });
    const down = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", "http://127.0.0.1:1"], { "r.json": receiptText });
    expect(down.code).toBe(1);
    expect(down.stdout).toStartWith("Verdict: unverifiable");
  });

  test("--min-mirrors 1: a visible warning in the human output, minMirrors 1 in JSON", async () => {
    const r = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--min-mirrors", "1"], { "r.json": receiptText });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("WARNING: --min-mirrors 1 is a weakened check");
    expect(r.stdout).toContain(`Mirror nodes: ${mirrors[0].url} (minimum 1)`);
    const json = await runInProcess(["r.json", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--min-mirrors=1", "--json"], { "r.json": receiptText });
    expect(JSON.parse(json.stdout)).toMatchObject({ minMirrors: 1, mirrors: [mirrors[0].url] });
  });

  test("--help and -h: the usage on stdout, exit 0, whatever else is on the line", async () => {
    for (const argv of [["--help"], ["-h"], ["--bogus", "x", "--help"], ["r.json", "--hash", "nonsense", "-h"]]) {
      const r = await runInProcess(argv);
      expect(r).toMatchObject({ code: 0, stdout: VERIFY_RECEIPT_USAGE, stderr: "" });
    }
    // After --, -h is an argument (a receipt file named -h).
    expectUsageError(await runInProcess(["--hash", DOC_HASH, "--", "-h"]), 'cannot read the receipt "-h": no such file');
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
  ];
  for (const [what, argv, files, message] of usageErrors) {
    test(`usage error, exit 2, one line: ${what}`, async () => {
      const resolved = Object.fromEntries(
        Object.entries(files).map(([k, v]) => {
          if (v === "R") return [k, receiptText];
          if (v === "T") return [k, TRUNCATED()];
          if (v === "W") return [k, receiptText.replace('"sequenceNumber":2', '"sequenceNumber":"2"')];
          if (v === "B") return [k, " ".repeat(1024 * 1024) + receiptText];
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
  test("run as written, against the fake mirrors: verified_org twice, then unverifiable offline", async () => {
    const readme = await Bun.file(join(ROOT, "README.md")).text();
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("verify-receipt"));
    expect(block).toBeDefined();
    const lines = block!.trim().split("\n");
    expect(lines.length).toBe(3);
    // The README's mirror nodes are the two fake ones here: the receipt's own and the user's.
    const hosts: Record<string, string> = { "testnet.mirrornode.hedera.com": mirrors[0].url, "mirror.example.org": mirrors[1].url };
    const routed = { ...built.receipt, mirrorNodes: ["https://testnet.mirrornode.hedera.com"] };
    const codes: number[] = [];
    for (const line of lines) {
      const words = line.split(/\s+/);
      expect(words.slice(0, 2).join(" ")).toMatch(/^(docverify verify-receipt|node docverify-verify\.mjs)$/);
      let out = "";
      const code = await runVerifyReceipt(words.slice(2), {
        stdout: (t) => void (out += t),
        stderr: () => {},
        readFile: async (path) => (path === "receipt.json" ? new TextEncoder().encode(JSON.stringify(routed)) : path === "contract.pdf" ? DOCUMENT : Promise.reject(Object.assign(new Error("ENOENT"), { code: "ENOENT" }))),
        readStdin: async () => new Uint8Array(),
        fetch: (url, init) => {
          const u = new URL(url);
          return fetch(hosts[u.host] + u.pathname + u.search, init);
        },
      });
      codes.push(code);
      if (line.includes("--json")) expect(JSON.parse(out).verdict).toBe("verified_org");
    }
    expect(codes).toEqual([0, 0, 1]);
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
    ["verified_org", (d) => [join(d, "receipt.json"), "--file", join(d, "doc.txt"), "--mirror", mirrors[0].url], 0, (r) => expect(r.stdout).toStartWith("Verdict: verified_org")],
    ["--json from stdin", () => ["-", "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--json"], 0, (r) => expect(JSON.parse(r.stdout).verdict).toBe("verified_org"), "stdin"],
    ["--min-mirrors 1", (d) => [join(d, "receipt.json"), "--hash", DOC_HASH, "--mirror", mirrors[0].url, "--min-mirrors", "1"], 0, (r) => expect(r.stdout).toContain("WARNING: --min-mirrors 1")],
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
