/**
 * `docverify sandbox`: a throwaway appliance in one command, the test environment for writes (a
 * `dv_test_` key verifies but never creates or revokes: docs/clients.md). It is `serve` (serve.ts,
 * the same composition, rate limits at their defaults) on the embedded local ledger and SQLite in
 * a new temporary folder, with one organisation and a live key minted for it, printed once on
 * stdout. On SIGINT/SIGTERM it drains as serve does, then deletes the folder unless `--keep`.
 *
 * It reads none of the operator's settings (DOCVERIFY_DATA_DIR, DOCVERIFY_DATABASE_URL,
 * DOCVERIFY_LEDGER_NETWORK…): a sandbox that could be pointed at real data or a public network
 * would not be throwaway. DOCVERIFY_LOG_LEVEL alone is honoured, for its log on stderr: stdout
 * carries only what it prints for the user (one JSON document with --json).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig, type Config } from "../config/index.ts";
import { parseFlags, UsageError } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { createLogger, type Logger } from "../lib/log.ts";
import { openCore, type Core } from "./core.ts";
import { startServer, type Running } from "./serve.ts";

type Out = { write(s: string): void };

export const SANDBOX_ORGANISATION = "Sandbox organisation";

/** Longest wait for the organisation's ledger topic before the sandbox is announced anyway. */
const TOPIC_WAIT_MS = 60_000;

/** What the sandbox announces, once: on stdout, as text or (--json) as this document. */
export interface SandboxAnnouncement {
  readonly url: string;
  readonly apiKey: string;
  readonly scopes: readonly string[];
  readonly organisationId: string;
  readonly organisationName: string;
  readonly dataDir: string;
  /** True with --keep: the folder outlives the sandbox. */
  readonly keep: boolean;
  readonly ledgerNetwork: "local";
  readonly notice: string;
  /** The variables the examples read (examples/README.md). */
  readonly env: { readonly DOCVERIFY_URL: string; readonly DOCVERIFY_API_KEY: string };
}

/** What the sandbox is, in the words it prints (text and --json alike). */
function notice(keep: boolean): string {
  return (
    "a throwaway test environment. Its ledger is local to this machine: nothing it anchors is public. " +
    (keep
      ? "Its data folder is kept when it stops (--keep); nothing in it is of use beyond testing."
      : "Everything in it (the organisation, the key, records, receipts) is deleted when it stops.")
  );
}

function portFlag(v: string | boolean | undefined): number {
  if (v === undefined) return 0;
  if (typeof v !== "string" || !/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError("--port must be a port number 0 to 65535 (0: a free one)");
  return Number(v);
}

function hostFlag(v: string | boolean | undefined): string {
  if (v === undefined) return "127.0.0.1";
  if (typeof v !== "string" || !/^[A-Za-z0-9.:_-]{1,253}$/.test(v)) throw new UsageError(`--host ${JSON.stringify(v)} is not a host name or IP address`);
  return v;
}

/** The announcement as text: what a person reads, and the two lines they paste. */
export function announcementText(a: SandboxAnnouncement): string {
  const folder = a.keep ? "kept when the sandbox stops (--keep)" : "deleted when the sandbox stops";
  return (
    // One sentence a line.
    `docverify sandbox: ${a.notice.replaceAll(". ", ".\n")}\n\n` +
    `  URL           ${a.url}\n` +
    `  API key       ${a.apiKey}  (${a.scopes.join(", ")}; shown only here)\n` +
    `  Organisation  ${a.organisationId}  (${a.organisationName}: API access, add-on, validated)\n` +
    `  Data folder   ${a.dataDir}  (${folder})\n\n` +
    `For the examples (examples/README.md) and your own client:\n` +
    `export DOCVERIFY_URL=${a.env.DOCVERIFY_URL}\n` +
    `export DOCVERIFY_API_KEY=${a.env.DOCVERIFY_API_KEY}\n\n` +
    `Stop it with Ctrl-C (SIGINT) or SIGTERM.\n`
  );
}

/** Runs until `until` resolves (the signal); exit code 0 after a clean stop. */
export async function runSandbox(args: readonly string[], env: Readonly<Record<string, string | undefined>>, io: { out: Out; err: Out }, until: Promise<unknown>): Promise<number> {
  const { values } = parseFlags(args, { port: { type: "string" }, host: { type: "string" }, keep: { type: "boolean" }, json: { type: "boolean" } });
  const port = portFlag(values.port);
  const host = hostFlag(values.host);
  const keep = values.keep === true;
  // Checked before anything is made: a bad level is a usage error with no folder left behind.
  const logLevel = parseConfig({ DOCVERIFY_LOG_LEVEL: env.DOCVERIFY_LOG_LEVEL ?? "warn" }).logLevel;
  let signalled = false;
  void until.then(() => (signalled = true));

  const dir = mkdtempSync(join(tmpdir(), "docverify-sandbox-"));
  let announced = false;
  try {
    const config = parseConfig({ DOCVERIFY_DATA_DIR: dir, DOCVERIFY_HOST: host, DOCVERIFY_PORT: String(port), DOCVERIFY_LOG_LEVEL: logLevel }, { cwd: dir });
    const write = (line: string) => io.err.write(line + "\n");
    const log = createLogger({ level: config.logLevel, write });
    // The setup's core logs errors only: it makes the master key, whose "back it up" warning would
    // be noise for a folder deleted when the sandbox stops.
    const sandbox = await startSandbox(config, { log, quiet: createLogger({ level: "error", write }) }, () => signalled);
    if (sandbox === null) return 0; // signalled while starting: stopped, nothing announced
    const { running, announcement: partial } = sandbox;
    const announcement: SandboxAnnouncement = { ...partial, keep, notice: notice(keep) };
    io.out.write(values.json === true ? JSON.stringify(announcement) + "\n" : announcementText(announcement));
    announced = true;
    await until;
    await running.stop();
    if (keep) io.err.write(`docverify sandbox: stopped; its data folder is kept in ${dir}\n`);
    else {
      rmSync(dir, { recursive: true, force: true });
      io.err.write(`docverify sandbox: stopped; its data folder ${dir} is deleted\n`);
    }
    return 0;
  } finally {
    // A sandbox that never started leaves nothing behind, --keep or not.
    if (!keep || !announced) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The organisation and its key, then the service, then the organisation's ledger topic (its
 * first record is then a 201, not a 503). Null when a signal came first (everything then stopped).
 */
async function startSandbox(config: Config, logs: { log: Logger; quiet: Logger }, signalled: () => boolean): Promise<{ running: Running; announcement: Omit<SandboxAnnouncement, "keep" | "notice"> } | null> {
  const { log } = logs;
  // Opened before serve, as `org create` and `key mint` would be; kept open to watch for the topic.
  const core = openCore({ config, log: logs.quiet });
  let running: Running | null = null;
  try {
    const org = await core.organisations.create({ name: SANDBOX_ORGANISATION, apiAccess: true, addon: true, validated: true }, "sandbox");
    const minted = await core.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "sandbox");
    try {
      running = await startServer(config, log);
    } catch (e) {
      if ((e as { code?: unknown }).code === "EADDRINUSE") {
        throw new OpsError(`port ${config.port} on ${config.host} is taken (another docverify serve or sandbox?): choose another with --port, or --port 0 for a free one`);
      }
      throw e;
    }
    const failure = await running.ledger;
    if (failure !== null) throw new OpsError(`the local ledger did not start: ${failure.message}`);
    if (!(await topicCreated(core, org.id, signalled))) {
      if (!signalled()) log.warn("the organisation's ledger topic is not created yet: record creation answers 503 with Retry-After until it is", { organisation: org.id });
    }
    if (signalled()) {
      await running.stop();
      return null;
    }
    return {
      running,
      announcement: {
        url: running.url,
        apiKey: minted.key,
        scopes: minted.scopes,
        organisationId: org.id,
        organisationName: org.name,
        dataDir: config.dataDir,
        ledgerNetwork: "local",
        env: { DOCVERIFY_URL: running.url, DOCVERIFY_API_KEY: minted.key },
      },
    };
  } catch (e) {
    await running?.stop();
    throw e;
  } finally {
    await core.close();
  }
}

/** Waits for the service to create the organisation's topic; false on a signal or after TOPIC_WAIT_MS. */
async function topicCreated(core: Core, orgId: string, signalled: () => boolean): Promise<boolean> {
  const deadline = Date.now() + TOPIC_WAIT_MS;
  while (!signalled() && Date.now() < deadline) {
    if ((await core.organisations.get(orgId)).topicId !== null) return true;
    await Bun.sleep(100);
  }
  return false;
}
