/**
 * The receipt's end-to-end rig (docs/receipts.md): a real `serve` anchoring on a real local ledger,
 * either its embedded one or a `docverify local-ledger` process, each with two mirror REST ports;
 * records created and revoked over HTTP, receipts fetched from the public route; then the three
 * shells of the verifier run as a person would run them: `docverify verify-receipt`, the
 * standalone `node docverify-verify.mjs` from a folder of its own, and the HTML page in Chromium.
 *
 * A verifier believes only its own trust roots (docs/receipts.md §3): a local ledger has no
 * built-in mirror nodes, the receipt's suggestions are never asked unless named, and witnesses are
 * counted by host. The local ledger is one process, so its two ports are one witness: the rig's
 * `witnesses()` are its first port and an honest proxy on a loopback address of its own in front of
 * its second, named to every shell explicitly.
 */
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { BUN, ROOT, onCleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { openCore } from "../../src/app/core.ts";
import { receiptPageHtml } from "../../src/http/pages/bundle.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { DATABASE_FILE, withSideFiles } from "../../src/storage/data-folder.ts";
import { startLyingMirror } from "../support/lying-mirror.ts";
import { nextLoopback } from "../support/loopback.ts";
import { databaseBefore } from "../support/previous-release.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

export const MAIN = join(ROOT, "src", "main.ts");
/** docverify from source; a test of the executable passes its own. */
const FROM_SOURCE = [BUN, MAIN];
/** The receipt page as the server embeds it (the same bytes `npm run build` writes to dist/). */
export const PAGE_HTML = receiptPageHtml();

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
  /** The serve running now (another one after restartServe). */
  readonly svc: ServiceProcess;
  readonly dataDir: string;
  /** The organisation's registered name, as announced on its topic. */
  readonly orgName: string;
  /** The ledger's two mirror REST base URLs: two ports of one process, so one host to a verifier. */
  readonly mirrors: string[];
  /**
   * Two witnesses of the ledger on two hosts, for `--mirror` (the page's field): its first mirror
   * port, and an honest proxy (lying-mirror.ts, lie `none`) on a loopback address of its own in
   * front of its second. Made once, and kept until cleanup.
   */
  witnesses(): Promise<string[]>;
  /** Authenticates `bytes` (POST /v1/records); resolves with the record id. */
  create(bytes: Uint8Array): Promise<string>;
  /** GET /verify/{id}/receipt once the record (and its key's announcement) is final: the receipt's text. */
  receipt(recordId: string): Promise<string>;
  /** POST /v1/records/{id}/revoke, then waits until the revocation is final on the ledger. */
  revoke(recordId: string, reason?: string): Promise<void>;
  /**
   * Stops serve, runs `between` (serve stopped: the data folder is free), and starts serve again on
   * the same folder with the same settings; the embedded ledger comes back at the same addresses.
   */
  restartServe(between?: () => void | Promise<void>, env?: Readonly<Record<string, string | undefined>>): Promise<void>;
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
export async function deploy(kind: LedgerKind, options: { orgName?: string; cmd?: string[]; env?: Readonly<Record<string, string>> } = {}): Promise<Deployment> {
  const orgName = options.orgName ?? "Acme <b>&amp;</b> \"Söhne\" 🧾";
  const cmd = options.cmd ?? FROM_SOURCE;
  let env: Record<string, string> = { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: CONSENSUS_MS, ...HIGH_LIMITS, ...options.env };
  let separate: LedgerProcess | null = null;
  if (kind === "separate") {
    separate = await startLedgerProcess(tempDir("docverify-ledger-"), ["--second-mirror-port", "0"], cmd);
    if (separate.mirrorUrls.length !== 2) throw new Error(`local-ledger --second-mirror-port gave ${JSON.stringify(separate.mirrorUrls)}`);
    env = { ...env, DOCVERIFY_LOCAL_LEDGER_URL: separate.mirrorUrl, DOCVERIFY_MIRROR_NODES: separate.mirrorUrls.join(",") };
  }
  const dataDir = tempDir();
  let serveOptions = { cmd, cwd: tempDir("docverify-cwd-"), env: { DOCVERIFY_DATA_DIR: dataDir, ...env } };
  let svc = await startService(serveOptions);
  const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: dataDir }), log: memoryLogger() });
  const org = await admin.organisations.create({ name: orgName, apiAccess: true, addon: true, validated: true }, "test");
  const key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
  // Closed at once: the folder is serve's alone from here on (restartServe may replace its database).
  await admin.close();
  const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  let mirrors: string[] = separate?.mirrorUrls ?? [];
  let stopped = false;
  let witnesses: Promise<string[]> | null = null;

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

  async function stopSvc(): Promise<void> {
    const code = await svc.stop();
    if (code !== 0) throw new Error(`serve exited with ${code}: ${svc.stderr()}`);
  }

  /** Stops serve, runs `between`, starts it again; `env` changes its settings from then on (undefined: unset). */
  async function restartServe(between?: () => void | Promise<void>, changed?: Readonly<Record<string, string | undefined>>): Promise<void> {
    if (stopped) throw new Error("restartServe after stopServe");
    await stopSvc();
    await between?.();
    if (changed !== undefined) {
      const next: Record<string, string> = { ...serveOptions.env };
      for (const [name, value] of Object.entries(changed)) {
        if (value === undefined) delete next[name];
        else next[name] = value;
      }
      serveOptions = { ...serveOptions, env: next as typeof serveOptions.env };
    }
    svc = await startService(serveOptions);
  }

  async function stopServe(): Promise<void> {
    if (stopped) return;
    stopped = true;
    await stopSvc();
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
    get svc() {
      return svc;
    },
    dataDir,
    orgName,
    get mirrors() {
      return mirrors;
    },
    witnesses: () => (witnesses ??= distinctWitnesses(mirrors)),
    create,
    receipt,
    revoke,
    restartServe,
    stopServe,
  };
  if (kind === "embedded") {
    // The embedded ledger's mirror URLs are the ones a receipt names (suggestedMirrorNodes).
    const probe = await create(randomBytes(32));
    mirrors = (JSON.parse(await receipt(probe)) as { mirrorNodes: string[] }).mirrorNodes;
  }
  return deployment;
}

/**
 * `mirrors` (two ports of one ledger) as two witnesses on two hosts: the first as it is, the
 * second behind an honest proxy listening on a loopback address of its own.
 */
export async function distinctWitnesses(mirrors: readonly string[]): Promise<string[]> {
  if (mirrors.length < 2) throw new Error(`two mirror ports are needed, not ${JSON.stringify(mirrors)}`);
  const proxy = await startLyingMirror({ upstream: mirrors[1]!, lie: { kind: "none" }, hostname: nextLoopback() });
  onCleanup(() => proxy.close());
  return [mirrors[0]!, proxy.url];
}

/**
 * The first migration that the release before trust roots did not have: a data
 * folder that release left has every migration before it, and no other.
 */
export const FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE = "0011";

/**
 * Makes serve's stopped data folder the one the previous release would have left with the same
 * rows: its database is replaced by one with that release's schema (previous-release.ts: the
 * migrations before FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE, by drizzle's stock migrator) holding
 * every row of the folder's, column for column. The ledger's files are left as they are. A
 * column or table that release did not have must hold nothing but its default (an organisation
 * without a domain announces exactly the bytes it announced before domains existed), or be one
 * today's release computes from that release's columns when it opens the folder (DERIVED), or this
 * throws rather than drop anything.
 */
/** Columns today's release fills in from others when it opens an earlier release's folder: `table.column`. */
const DERIVED = new Set([
  "organisations.name_key", // from the name (storage/org-name-keys.ts)
  "ledger_transactions.seal_fingerprint", // an announcement's seal key, from service_meta's (migration 0014)
]);

export function asPreviousReleaseLeftIt(dataDir: string): void {
  const path = join(dataDir, DATABASE_FILE);
  const previous = databaseBefore(FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE);
  const db = previous.$client;
  db.run("PRAGMA foreign_keys = OFF");
  db.query("ATTACH DATABASE ? AS now").run(path);
  const tables = (schema: string) =>
    (db.query(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations'`).all() as { name: string }[]).map((t) => t.name);
  const columns = (schema: string, table: string) => db.query(`SELECT name, dflt_value FROM pragma_table_info(?, ?)`).all(table, schema) as { name: string; dflt_value: string | null }[];
  const kept = tables("main");
  for (const table of tables("now")) {
    const count = (where: string) => (db.query(`SELECT COUNT(*) AS n FROM now."${table}" WHERE ${where}`).get() as { n: number }).n;
    if (!kept.includes(table)) {
      if (count("1") > 0) throw new Error(`table ${table}, which the previous release did not have, holds rows`);
      continue;
    }
    const old = new Set(columns("main", table).map((c) => c.name));
    for (const c of columns("now", table).filter((c) => !old.has(c.name) && !DERIVED.has(`${table}.${c.name}`))) {
      const n = count(`"${c.name}" IS NOT ${c.dflt_value ?? "NULL"}`);
      if (n > 0) throw new Error(`${table}.${c.name}, which the previous release did not have, holds something other than its default in ${n} rows`);
    }
  }
  // The change counter last: the triggers the copies fire must not leave it other than it was.
  for (const table of [...kept.filter((t) => t !== "change_counter"), ...kept.filter((t) => t === "change_counter")]) {
    const shared = columns("main", table)
      .map((c) => `"${c.name}"`)
      .join(", ");
    db.run(`INSERT OR REPLACE INTO main."${table}" (${shared}) SELECT ${shared} FROM now."${table}"`);
  }
  db.run("DETACH DATABASE now");
  for (const file of withSideFiles(path)) rmSync(file, { force: true });
  db.query("VACUUM INTO ?").run(path);
  db.close();
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

/** What `--json` says of the organisation: confirmed by a trust root, or the ledger's claim. */
export interface ReportIdentity {
  readonly status: "confirmed" | "unconfirmed" | "mismatch";
  readonly method: string | null;
  readonly confirmedName: string | null;
  readonly claimedName: string | null;
  readonly claimedOrgId: string | null;
}

export interface ShellResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The `--json` report, when stdout held one. */
  readonly report: {
    verdict: string;
    public: boolean;
    identity: ReportIdentity | null;
    mirrors: string[];
    witnesses: number;
    checks: { name: string; status: string; detail: string }[];
    revocation: unknown;
  } | null;
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

/** The page, as a person opens it from a file: saved in a folder of its own. */
export function pageOnDisk(): string {
  const dir = join(tempDir("docverify-page-"), "saved");
  mkdirSync(dir);
  const path = join(dir, "verify-receipt.html");
  writeFileSync(path, PAGE_HTML);
  return `file://${path}`;
}

let browser: Browser | null = null;
/** One Chromium per test file, closed by cleanup(). */
export async function sharedBrowser(): Promise<Browser> {
  if (browser !== null) return browser;
  const executablePath = requireProgram("chromium");
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
  /** The verdict's `data-identity`: confirmed, unconfirmed or mismatch; empty when none was established. */
  readonly identity: string;
  /** What the page says of who made the record, whole. */
  readonly organisation: string;
  /** The name in it (in bold): confirmed, or the ledger's claim. */
  readonly organisationName: string;
  /** The notice shown for a local development ledger (empty otherwise). */
  readonly ledgerNotice: string;
  /** The signed time and record line, and the revocation line (empty when not shown). */
  readonly signed: string;
  readonly revocation: string;
  readonly checks: { name: string; status: string; detail: string }[];
  /** What the page says about the document (its name, size and, once hashed, its hash). */
  readonly documentInfo: string;
  /** The mirror field as the receipt left it, before `mirrors` replaced it. */
  readonly startingMirrors: string;
  /** What the page says of the receipt's own mirror nodes. */
  readonly suggested: string;
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
  /** Replaces the mirror list the page starts from (one URL per line). */
  readonly mirrors?: string[];
  readonly minMirrors?: string;
  /** A trust file for #trust. */
  readonly trustPath?: string;
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
    const startingMirrors = await page.inputValue("#mirrors");
    const suggested = (await page.textContent("#suggested")) ?? "";
    if (options.mirrors !== undefined) await page.fill("#mirrors", options.mirrors.join("\n"));
    if (options.minMirrors !== undefined) await page.fill("#min-mirrors", options.minMirrors);
    if (options.trustPath !== undefined) {
      await page.setInputFiles("#trust", options.trustPath);
      await page.waitForSelector("#trust-info:not(:empty)");
    }
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
    const name = await page.$("#organisation strong");
    return {
      verdict: (await page.textContent("#verdict")) === "" ? null : verdict,
      headline: (await page.textContent("#verdict")) ?? "",
      identity: (await page.getAttribute("#verdict", "data-identity")) ?? "",
      organisation: (await page.textContent("#organisation")) ?? "",
      organisationName: name === null ? "" : ((await name.textContent()) ?? ""),
      ledgerNotice: (await page.textContent("#ledger-notice")) ?? "",
      signed: (await page.textContent("#signed")) ?? "",
      revocation: (await page.textContent("#revocation")) ?? "",
      checks,
      mirrorsUsed: (await page.textContent("#mirrors-used")) ?? "",
      documentInfo: (await page.textContent("#document-info")) ?? "",
      startingMirrors,
      suggested,
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
  /** The verifier's own mirror nodes (`--mirror`, or the page's list in their place); none named: each shell's default. */
  readonly mirrors?: string[];
  readonly minMirrors?: number;
  /** `--trust FILE`, or the page's trust file. */
  readonly trustPath?: string;
}

/** What one shell concluded: the verdict, the exit code (null for the page), who made the record. */
export interface Outcome {
  readonly shell: Shell;
  readonly verdict: string | null;
  readonly code: number | null;
  /** confirmed, unconfirmed or mismatch; null when no key announcement was established. */
  readonly identity: string | null;
  /** The organisation's name the shell shows: confirmed, or the ledger's claim (see identity). */
  readonly organisation: string | null;
  /** False when the shell said the ledger is a local development one, proving nothing publicly. */
  readonly public: boolean | null;
  readonly failed: string[];
  /** The mirrors check's detail. */
  readonly mirrorsDetail: string;
  readonly stderr: string;
}

export async function verifyIn(shell: Shell, receiptPath: string, documentPath: string, options: VerifyOptions = {}): Promise<Outcome> {
  if (shell === "page") {
    const run = await pageVerify(pageOnDisk(), {
      receiptPath,
      documentPath,
      ...(options.mirrors !== undefined ? { mirrors: options.mirrors } : {}),
      ...(options.minMirrors !== undefined ? { minMirrors: String(options.minMirrors) } : {}),
      ...(options.trustPath !== undefined ? { trustPath: options.trustPath } : {}),
    });
    return {
      shell,
      verdict: run.verdict,
      code: null,
      identity: run.identity === "" ? null : run.identity,
      organisation: run.organisationName === "" ? null : run.organisationName,
      public: run.verdict === null ? null : run.ledgerNotice === "",
      failed: run.checks.filter((c) => c.status === "fail").map((c) => c.name),
      mirrorsDetail: run.checks.find((c) => c.name === "mirrors")?.detail ?? "",
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
    ...(options.trustPath !== undefined ? ["--trust", options.trustPath] : []),
  ];
  const r = shell === "cli" ? await cliVerify(args) : await nodeVerify(args);
  const id = r.report?.identity ?? null;
  return {
    shell,
    verdict: r.report?.verdict ?? null,
    code: r.code,
    identity: id?.status ?? null,
    organisation: id === null ? null : id.status === "confirmed" ? id.confirmedName : id.claimedName,
    public: r.report?.public ?? null,
    failed: (r.report?.checks ?? []).filter((c) => c.status === "fail").map((c) => c.name),
    mirrorsDetail: r.report?.checks.find((c) => c.name === "mirrors")?.detail ?? "",
    stderr: r.stderr,
  };
}

/** The same verification in every shell, one after another (Chromium and two runtimes at once would crowd a small machine). */
export async function verifyInEveryShell(receiptPath: string, documentPath: string, options: VerifyOptions = {}): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const shell of SHELLS) out.push(await verifyIn(shell, receiptPath, documentPath, options));
  return out;
}

/** What every shell must say of a local ledger's receipt that verifies: the key's announced name as a claim, and that it proves nothing publicly. */
export function expectLocalClaim(o: Outcome, orgName: string | null): void {
  expect([o.shell, o.identity, o.organisation, o.public]).toEqual([o.shell, "unconfirmed", orgName, false]);
}

/**
 * The end-to-end promise of receipts (docs/receipts.md §8), on a ledger of `kind`, with the
 * verifier believing only its own trust roots (docs/receipts.md §3): receipts fetched from serve,
 * serve stopped, then every shell, given two witnesses of the ledger on two hosts, says
 * `verified_org` (exit 0) for a record in good standing and `revoked` (exit 1) for a record revoked
 * after its receipt was fetched; named nothing, or only the ledger's own two ports (one host),
 * every shell says `unverifiable`.
 */
export function serveStoppedSuite(kind: LedgerKind): void {
  describe(`the ${kind} ledger: receipts verified in every shell after serve has stopped`, () => {
    let d: Deployment;
    let kept: Held;
    let withdrawn: Held;
    let witnesses: string[];

    beforeAll(async () => {
      d = await deploy(kind);
      kept = await authenticate(d);
      // Its receipt is fetched before the revocation: it still says `revocation: null`.
      withdrawn = await authenticate(d, "withdrawn.pdf");
      await d.revoke(withdrawn.recordId, "SUPERSEDED");
      await d.stopServe();
      witnesses = await d.witnesses();
    }, 60_000);

    test(
      "a record in good standing, two witnesses named: verified_org, exit 0, the organisation's name shown as the ledger's claim, on a ledger that proves nothing publicly",
      async () => {
        // serve is gone: nothing answers at its address.
        expect(await fetch(`${d.svc.url}/healthz`).then((r) => r.status).catch(() => "refused")).toBe("refused");
        expect(JSON.parse(kept.receiptText).mirrorNodes).toEqual(d.mirrors);
        const outcomes = await verifyInEveryShell(kept.receiptPath, kept.documentPath, { mirrors: witnesses });
        for (const o of outcomes) {
          expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "verified_org", o.shell === "page" ? null : 0, []]);
          expectLocalClaim(o, d.orgName);
        }
      },
      60_000,
    );

    test(
      "a receipt fetched before its record was revoked: revoked (found on the ledger), exit 1",
      async () => {
        expect(JSON.parse(withdrawn.receiptText).revocation).toBeNull();
        const outcomes = await verifyInEveryShell(withdrawn.receiptPath, withdrawn.documentPath, { mirrors: witnesses });
        for (const o of outcomes) {
          expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "revoked", o.shell === "page" ? null : 1, ["revocationScan"]]);
        }
      },
      60_000,
    );

    test(
      "no mirror node named: unverifiable in every shell, exit 1, the receipt's own mirror nodes not asked, and the user told to name the local ledger's",
      async () => {
        const outcomes = await verifyInEveryShell(kept.receiptPath, kept.documentPath);
        for (const o of outcomes) {
          expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "unverifiable", o.shell === "page" ? null : 1, ["mirrors"]]);
          // In each shell's own words: an option on the command line, a field on the page.
          const how = o.shell === "page" ? "in the mirror node field" : "with --mirror URL";
          expect([o.shell, o.mirrorsDetail]).toEqual([o.shell, expect.stringContaining(`network local has no built-in mirror nodes: name the local ledger's ${how}`)]);
        }
        for (const run of [cliVerify, nodeVerify]) {
          const json = await run([kept.receiptPath, "--file", kept.documentPath, "--json"]);
          expect([json.report?.mirrors, json.report?.public]).toEqual([[], false]);
          const human = await run([kept.receiptPath, "--file", kept.documentPath]);
          expect(human.code).toBe(1);
          expect(human.stdout).toStartWith("Verdict: unverifiable");
          expect(human.stdout).toContain("Ledger: local development ledger: proves nothing publicly");
          expect(human.stdout).toContain("name the local ledger's with --mirror URL");
          expect(human.stdout).toContain(`Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): ${d.mirrors.join(", ")}`);
        }
        // The page starts with no mirror node for a local receipt and shows the receipt's as suggestions.
        const page = await pageVerify(pageOnDisk(), { receiptPath: kept.receiptPath, documentPath: kept.documentPath });
        expect(page.startingMirrors).toBe("");
        expect(page.suggested).toContain(`The receipt suggests: ${d.mirrors.join(", ")}.`);
        expect(page.suggested).toContain("name the local ledger's");
        expect(page.mirrorsUsed).toBe("No mirror node was asked.");
        expect(page.requests).toEqual([]);
      },
      60_000,
    );

    test(
      "the ledger's own two ports named (or localhost and 127.0.0.1): one host, so unverifiable in every shell",
      async () => {
        const [a, b] = d.mirrors.map((m) => new URL(m)) as [URL, URL];
        const spellings = [d.mirrors, [`http://localhost:${a.port}`, `http://127.0.0.1:${b.port}`]];
        for (const mirrors of spellings) {
          for (const o of await verifyInEveryShell(kept.receiptPath, kept.documentPath, { mirrors })) {
            expect([mirrors, o.shell, o.verdict, o.code, o.failed]).toEqual([mirrors, o.shell, "unverifiable", o.shell === "page" ? null : 1, ["mirrors"]]);
            expect([mirrors, o.shell, o.mirrorsDetail]).toEqual([mirrors, o.shell, expect.stringMatching(/^only 1 distinct host among the mirror nodes for a minimum of 2 \(.* is on the same host as .*\): add a mirror node on another host/)]);
          }
        }
      },
      120_000,
    );
  });
}
