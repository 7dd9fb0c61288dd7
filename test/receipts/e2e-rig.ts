/**
 * The receipt's end-to-end rig (docs/receipts.md): a real `serve` anchoring on a real local ledger,
 * either its embedded one or a `docverify local-ledger` process, each with two mirror REST ports;
 * records created and revoked over HTTP, receipts fetched from the public route; then the three
 * shells of the verifier run as a person would run them: `docverify verify-receipt`, the
 * standalone `node docverify-verify.mjs` from a folder of its own, and the HTML page in Chromium.
 */
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { BUN, ROOT, onCleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { CHROMIUM_ARGS, ensureChromium } from "../support/programs.ts";
import { openCore } from "../../src/app.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

export const MAIN = join(ROOT, "src", "main.ts");
/** docverify from source; a test of the executable passes its own. */
const FROM_SOURCE = [BUN, MAIN];
/** The generated page, as committed (the same bytes `npm run build` copies to dist/). */
export const PAGE_FILE = join(ROOT, "src", "http", "pages", "verify-receipt.html");

/** Short consensus, so a record is final within a second. */
const CONSENSUS_MS = "100";
/** Limits no test here reaches: the receipt and page routes share the anonymous budget. */
const HIGH_LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };

const baseEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" });

export const docHash = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export interface LedgerProcess {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  readonly mirrorUrl: string;
  readonly mirrorUrls: string[];
  stop(): Promise<number>;
}

/**
 * `docverify local-ledger --data DIR --json` as a process; `args` adds flags (a second mirror
 * port). Without port flags it takes the ports the folder remembers: started on the data folder of
 * a stopped `serve`, it is that serve's embedded ledger again, at the same addresses.
 */
export async function startLedgerProcess(dataDir: string, args: string[] = [], cmd = FROM_SOURCE): Promise<LedgerProcess> {
  const proc = Bun.spawn([...cmd, "local-ledger", "--data", dataDir, "--consensus-ms", CONSENSUS_MS, "--json", ...args], {
    env: baseEnv(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stop = async () => {
    proc.kill("SIGTERM");
    return await proc.exited;
  };
  onCleanup(() => {
    proc.kill("SIGKILL");
    return proc.exited;
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`local-ledger exited: ${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const info = JSON.parse(text.split("\n")[0]!) as { mirrorUrl: string; mirrorUrls: string[] };
  return { proc, mirrorUrl: info.mirrorUrl, mirrorUrls: info.mirrorUrls, stop };
}

export type LedgerKind = "embedded" | "separate";

export interface Deployment {
  readonly kind: LedgerKind;
  readonly svc: ServiceProcess;
  readonly dataDir: string;
  /** The organisation's registered name, as announced on its topic. */
  readonly orgName: string;
  /** The ledger's two mirror REST base URLs. */
  readonly mirrors: string[];
  /** Authenticates `bytes` (POST /v1/records); resolves with the record id. */
  create(bytes: Uint8Array): Promise<string>;
  /** GET /verify/{id}/receipt once the record (and its key's announcement) is final: the receipt's text. */
  receipt(recordId: string): Promise<string>;
  /** POST /v1/records/{id}/revoke, then waits until the revocation is final on the ledger. */
  revoke(recordId: string, reason?: string): Promise<void>;
  /**
   * Stops serve, leaving the ledger up: the separate process stays; the embedded ledger (which
   * stops with serve) is started again alone on serve's data folder, at the same addresses.
   */
  stopServe(): Promise<void>;
}

/**
 * serve with one organisation and its key, anchoring on the ledger of `kind`. `cmd` is docverify
 * itself: from source unless given (the executable). The organisation, with the add-on, and its
 * live key are made by the administrator's core on serve's data folder, as `docverify org create`
 * and `key mint` would.
 */
export async function deploy(kind: LedgerKind, options: { orgName?: string; cmd?: string[] } = {}): Promise<Deployment> {
  const orgName = options.orgName ?? "Acme <b>&amp;</b> \"Söhne\" 🧾";
  const cmd = options.cmd ?? FROM_SOURCE;
  let env: Record<string, string> = { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: CONSENSUS_MS, ...HIGH_LIMITS };
  let separate: LedgerProcess | null = null;
  if (kind === "separate") {
    separate = await startLedgerProcess(tempDir("docverify-ledger-"), ["--second-mirror-port", "0"], cmd);
    if (separate.mirrorUrls.length !== 2) throw new Error(`local-ledger --second-mirror-port gave ${JSON.stringify(separate.mirrorUrls)}`);
    env = { ...env, DOCVERIFY_LOCAL_LEDGER_URL: separate.mirrorUrl, DOCVERIFY_MIRROR_NODES: separate.mirrorUrls.join(",") };
  }
  const dataDir = tempDir();
  const svc = await startService({ cmd, cwd: tempDir("docverify-cwd-"), env: { DOCVERIFY_DATA_DIR: dataDir, ...env } });
  const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: dataDir }), log: memoryLogger() });
  onCleanup(() => admin.close());
  const org = await admin.organisations.create({ name: orgName, apiAccess: true, addon: true, validated: true }, "test");
  const key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
  const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  let mirrors: string[] = separate?.mirrorUrls ?? [];
  let stopped = false;

  async function create(bytes: Uint8Array): Promise<string> {
    const created = await createRecordOnceTopicExists(() =>
      fetch(`${svc.url}/v1/records`, { method: "POST", headers: auth, body: JSON.stringify({ originalDocHash: docHash(bytes) }) }),
    );
    return ((await created.json()) as { recordId: string }).recordId;
  }

  async function receipt(recordId: string): Promise<string> {
    return waitFor(
      `the receipt of ${recordId} (409 until the record is final)`,
      async () => {
        const res = await fetch(`${svc.url}/verify/${recordId}/receipt`);
        if (res.status === 409) return undefined;
        if (res.status !== 200) throw new Error(`GET /verify/${recordId}/receipt answered ${res.status}: ${await res.text()}`);
        return await res.text();
      },
      20_000,
      100,
    );
  }

  async function revoke(recordId: string, reason = "ERROR_IN_DOCUMENT"): Promise<void> {
    const res = await fetch(`${svc.url}/v1/records/${recordId}/revoke`, { method: "POST", headers: auth, body: JSON.stringify({ reason }) });
    if (res.status !== 200) throw new Error(`revoke answered ${res.status}: ${await res.text()}`);
    // Final once a receipt fetched now carries the revocation's consensus time.
    await waitFor(
      "the revocation final on the ledger",
      async () => {
        const r = (await JSON.parse(await receipt(recordId))) as { revocation: { anchor: { consensusAt: string | null } } | null };
        return r.revocation?.anchor.consensusAt ?? undefined;
      },
      20_000,
      100,
    );
  }

  async function stopServe(): Promise<void> {
    if (stopped) return;
    stopped = true;
    const code = await svc.stop();
    if (code !== 0) throw new Error(`serve exited with ${code}: ${svc.stderr()}`);
    if (separate === null) {
      const alone = await startLedgerProcess(dataDir, [], cmd);
      if (mirrors.length > 0 && JSON.stringify(alone.mirrorUrls) !== JSON.stringify(mirrors)) {
        throw new Error(`the embedded ledger came back at ${alone.mirrorUrls.join(", ")}, not ${mirrors.join(", ")}`);
      }
      mirrors = alone.mirrorUrls;
    }
  }

  const deployment: Deployment = {
    kind,
    svc,
    dataDir,
    orgName,
    get mirrors() {
      return mirrors;
    },
    create,
    receipt,
    revoke,
    stopServe,
  };
  if (kind === "embedded") {
    // The embedded ledger's mirror URLs are the ones a receipt names (suggestedMirrorNodes).
    const probe = await create(randomBytes(32));
    mirrors = (JSON.parse(await receipt(probe)) as { mirrorNodes: string[] }).mirrorNodes;
  }
  return deployment;
}

/** A document of its own and the files a person would hold: the document and its receipt. */
export interface Held {
  readonly recordId: string;
  readonly document: Uint8Array;
  readonly documentPath: string;
  readonly receiptText: string;
  readonly receiptPath: string;
}

export async function authenticate(d: Deployment, name = "contract.pdf"): Promise<Held> {
  const document = new Uint8Array(randomBytes(4096));
  const recordId = await d.create(document);
  const receiptText = await d.receipt(recordId);
  const dir = tempDir("docverify-held-");
  const documentPath = join(dir, name);
  writeFileSync(documentPath, document);
  const receiptPath = join(dir, `docverify-receipt-${recordId}.json`);
  writeFileSync(receiptPath, receiptText);
  return { recordId, document, documentPath, receiptText, receiptPath };
}

export function writeReceipt(receipt: unknown, name = "receipt.json"): string {
  const path = join(tempDir("docverify-receipt-"), name);
  writeFileSync(path, typeof receipt === "string" ? receipt : JSON.stringify(receipt, null, 2));
  return path;
}

export interface ShellResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The `--json` report, when stdout held one. */
  readonly report: { verdict: string; organisation: { name: string } | null; checks: { name: string; status: string }[]; revocation: unknown } | null;
}

function result(code: number | null, stdout: string, stderr: string): ShellResult {
  let report: ShellResult["report"] = null;
  try {
    report = JSON.parse(stdout) as ShellResult["report"];
  } catch {
    /* not --json, or a usage error */
  }
  return { code, stdout, stderr, report };
}

/** `docverify verify-receipt ARGS…` (from source unless `cmd` is given) from an empty folder. */
export async function cliVerify(args: string[], cmd = FROM_SOURCE): Promise<ShellResult> {
  const p = Bun.spawn([...cmd, "verify-receipt", ...args], { cwd: tempDir(), env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return result(code, stdout, stderr);
}

let standalone: string | null = null;
/**
 * dist/docverify-verify.mjs as `npm run build` writes it (scripts/build-verifier.ts), built once
 * per test file into a folder of its own with nothing else in it, so that `node` finds no
 * node_modules anywhere near it.
 */
export function standaloneVerifier(): string {
  if (standalone !== null) return standalone;
  const dir = tempDir("docverify-standalone-");
  const out = join(dir, "docverify-verify.mjs");
  const built = Bun.spawnSync([BUN, join(ROOT, "scripts", "build-verifier.ts"), out], { cwd: ROOT });
  if (built.exitCode !== 0) throw new Error(`building the standalone verifier failed: ${built.stderr.toString()}`);
  standalone = out;
  // Test files share this module in one `bun test` run; each file's cleanup() removes the folder.
  onCleanup(() => (standalone = null));
  return out;
}

/** `node docverify-verify.mjs ARGS…`, run from a folder holding only that file. */
export async function nodeVerify(args: string[]): Promise<ShellResult> {
  const dir = tempDir("docverify-node-");
  const copy = join(dir, "docverify-verify.mjs");
  copyFileSync(standaloneVerifier(), copy);
  const p = Bun.spawn(["node", copy, ...args], { cwd: dir, env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return result(code, stdout, stderr);
}

/** The page, as a person opens it from a file: the committed HTML copied to a folder of its own. */
export function pageOnDisk(): string {
  const dir = join(tempDir("docverify-page-"), "saved");
  mkdirSync(dir);
  const path = join(dir, "verify-receipt.html");
  copyFileSync(PAGE_FILE, path);
  return `file://${path}`;
}

let browser: Browser | null = null;
/** One Chromium per test file, closed by cleanup(). */
export async function sharedBrowser(): Promise<Browser> {
  if (browser !== null) return browser;
  const executablePath = ensureChromium();
  const b = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  browser = b;
  onCleanup(async () => {
    browser = null;
    await b.close();
  });
  return b;
}

export interface PageRun {
  readonly verdict: string | null;
  readonly headline: string;
  readonly organisation: string;
  /** The signed time and record line, and the revocation line (empty when not shown). */
  readonly signed: string;
  readonly revocation: string;
  readonly checks: { name: string; status: string; detail: string }[];
  /** What the page says about the document (its name, size and, once hashed, its hash). */
  readonly documentInfo: string;
  /** The line naming the mirror nodes asked. */
  readonly mirrorsUsed: string;
  /** The message shown instead of a verdict (a usage problem), if any. */
  readonly error: string;
  /** Every text the progress line showed, in order. */
  readonly progress: string[];
  /** URLs the page requested, besides itself. */
  readonly requests: string[];
  /** Console errors (a Content-Security-Policy violation would be one). */
  readonly consoleErrors: string[];
}

export interface PageOptions {
  readonly receiptPath: string;
  readonly documentPath: string;
  /** Replaces the mirror list the receipt filled in (one URL per line). */
  readonly mirrors?: string[];
  readonly minMirrors?: string;
  /** Runs on the page before Verify is pressed (routes, waits). */
  readonly before?: (page: Page) => Promise<void>;
}

/** Opens `url`, chooses the two files, fills the form, presses Verify, and reads what the page says. */
export async function pageVerify(url: string, options: PageOptions): Promise<PageRun> {
  const b = await sharedBrowser();
  const context = await b.newContext();
  try {
    const page = await context.newPage();
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    page.on("request", (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(url);
    // Records every text the progress line shows (it changes faster than a poll could see).
    await page.evaluate(() => {
      const g = globalThis as unknown as {
        document: { getElementById(id: string): { textContent: string | null } };
        MutationObserver: new (cb: () => void) => { observe(n: unknown, o: unknown): void };
        __progress: string[];
      };
      const el = g.document.getElementById("progress");
      g.__progress = [];
      new g.MutationObserver(() => {
        if (el.textContent) g.__progress.push(el.textContent);
      }).observe(el, { childList: true, characterData: true, subtree: true });
    });
    await page.setInputFiles("#receipt", options.receiptPath);
    await page.waitForFunction(() => {
      const el = (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById("receipt-info");
      return (el?.textContent ?? "") !== "";
    });
    await page.setInputFiles("#document", options.documentPath);
    if (options.mirrors !== undefined) await page.fill("#mirrors", options.mirrors.join("\n"));
    if (options.minMirrors !== undefined) await page.fill("#min-mirrors", options.minMirrors);
    await options.before?.(page);
    await page.click("#verify");
    await page.waitForSelector("#verdict:not(:empty), #progress.error, #receipt-info.error", { timeout: 30_000 });
    const verdict = await page.getAttribute("#verdict", "data-verdict");
    const checks = await page.$$eval("#check-rows tr", (rows) =>
      rows.map((r) => {
        const row = r as unknown as { getAttribute(n: string): string | null; children: ArrayLike<{ textContent: string | null }> };
        return { name: row.getAttribute("data-check") ?? "", status: row.children[0]!.textContent ?? "", detail: row.children[2]!.textContent ?? "" };
      }),
    );
    const progress = await page.evaluate(() => (globalThis as unknown as { __progress: string[] }).__progress);
    const errorEl = (await page.$("#progress.error")) ?? (await page.$("#receipt-info.error"));
    const error = errorEl === null ? "" : ((await errorEl.textContent()) ?? "");
    return {
      verdict: (await page.textContent("#verdict")) === "" ? null : verdict,
      headline: (await page.textContent("#verdict")) ?? "",
      organisation: (await page.textContent("#organisation")) ?? "",
      signed: (await page.textContent("#signed")) ?? "",
      revocation: (await page.textContent("#revocation")) ?? "",
      checks,
      mirrorsUsed: (await page.textContent("#mirrors-used")) ?? "",
      documentInfo: (await page.textContent("#document-info")) ?? "",
      error,
      progress,
      requests,
      consoleErrors,
    };
  } finally {
    await context.close();
  }
}

export type Shell = "cli" | "node" | "page";
export const SHELLS: readonly Shell[] = ["cli", "node", "page"];

export interface VerifyOptions {
  /** The verifier's own mirror nodes (`--mirror`, or the page's list in their place). */
  readonly mirrors?: string[];
  readonly minMirrors?: number;
}

/** What one shell concluded: the verdict, the exit code (null for the page), the organisation's name. */
export interface Outcome {
  readonly shell: Shell;
  readonly verdict: string | null;
  readonly code: number | null;
  readonly organisation: string | null;
  readonly failed: string[];
  readonly stderr: string;
}

export async function verifyIn(shell: Shell, receiptPath: string, documentPath: string, options: VerifyOptions = {}): Promise<Outcome> {
  if (shell === "page") {
    const run = await pageVerify(pageOnDisk(), {
      receiptPath,
      documentPath,
      ...(options.mirrors !== undefined ? { mirrors: options.mirrors } : {}),
      ...(options.minMirrors !== undefined ? { minMirrors: String(options.minMirrors) } : {}),
    });
    const name = run.organisation.replace(/^Organisation: /, "");
    return {
      shell,
      verdict: run.verdict,
      code: null,
      organisation: name === "" ? null : name,
      failed: run.checks.filter((c) => c.status === "fail").map((c) => c.name),
      stderr: run.error + run.consoleErrors.join("\n"),
    };
  }
  const args = [
    receiptPath,
    "--file",
    documentPath,
    "--json",
    ...(options.mirrors ?? []).flatMap((m) => ["--mirror", m]),
    ...(options.minMirrors !== undefined ? ["--min-mirrors", String(options.minMirrors)] : []),
  ];
  const r = shell === "cli" ? await cliVerify(args) : await nodeVerify(args);
  return {
    shell,
    verdict: r.report?.verdict ?? null,
    code: r.code,
    organisation: r.report?.organisation?.name ?? null,
    failed: (r.report?.checks ?? []).filter((c) => c.status === "fail").map((c) => c.name),
    stderr: r.stderr,
  };
}

/** The same verification in every shell, one after another (Chromium and two runtimes at once would crowd a small machine). */
export async function verifyInEveryShell(receiptPath: string, documentPath: string, options: VerifyOptions = {}): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const shell of SHELLS) out.push(await verifyIn(shell, receiptPath, documentPath, options));
  return out;
}

/**
 * The end-to-end promise of decisions §9, on a ledger of `kind`: receipts fetched from serve, serve
 * stopped, then every shell says `verified_org` (exit 0) for a record in good standing and
 * `revoked` (exit 1) for a record revoked after its receipt was fetched.
 */
export function serveStoppedSuite(kind: LedgerKind): void {
  describe(`the ${kind} ledger: receipts verified in every shell after serve has stopped`, () => {
    let d: Deployment;
    let kept: Held;
    let withdrawn: Held;

    beforeAll(async () => {
      d = await deploy(kind);
      kept = await authenticate(d);
      // Its receipt is fetched before the revocation: it still says `revocation: null`.
      withdrawn = await authenticate(d, "withdrawn.pdf");
      await d.revoke(withdrawn.recordId, "SUPERSEDED");
      await d.stopServe();
    }, 60_000);

    test(
      "a record in good standing: verified_org, exit 0, the organisation named from the ledger",
      async () => {
        // serve is gone: nothing answers at its address.
        expect(await fetch(`${d.svc.url}/healthz`).then((r) => r.status).catch(() => "refused")).toBe("refused");
        expect(JSON.parse(kept.receiptText).mirrorNodes).toEqual(d.mirrors);
        const outcomes = await verifyInEveryShell(kept.receiptPath, kept.documentPath);
        for (const o of outcomes) {
          expect([o.shell, o.verdict, o.code, o.organisation, o.failed]).toEqual([o.shell, "verified_org", o.shell === "page" ? null : 0, d.orgName, []]);
        }
      },
      60_000,
    );

    test(
      "a receipt fetched before its record was revoked: revoked (found on the ledger), exit 1",
      async () => {
        expect(JSON.parse(withdrawn.receiptText).revocation).toBeNull();
        const outcomes = await verifyInEveryShell(withdrawn.receiptPath, withdrawn.documentPath);
        for (const o of outcomes) {
          expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "revoked", o.shell === "page" ? null : 1, ["revocationScan"]]);
        }
      },
      60_000,
    );
  });
}
