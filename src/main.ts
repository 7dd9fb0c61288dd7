/**
 * The `docverify` executable: argv → subcommand, and signals. Each subcommand parses its own
 * flags strictly (an unknown flag is an error, never ignored), reads settings once through
 * `parseConfig`, and reports failures on stderr with a non-zero exit. Every subcommand answers
 * `--help` or `-h` with its usage on stdout and exit 0, before anything else is
 * parsed or opened.
 */
import { ConfigError, parseConfig } from "./config/index.ts";
import { createLogger } from "./lib/log.ts";
import { MasterKeyFileError } from "./crypto/index.ts";
import { parseFlags, UsageError } from "./lib/args.ts";
import { DomainError, OpsError } from "./lib/errors.ts";
import { SchemaTooNewError } from "./storage/schema-too-new.ts";
import { VERSION, COMMIT } from "./version.ts";
import { helpRequested, USAGE, USAGES } from "./usage.ts";
// Each subcommand's module is imported when that command runs: the administration commands then
// never load Elysia or the ledger SDK, and start in tens of milliseconds instead of hundreds.

/** Exit codes: 0 success, 1 failure at run time, 2 bad usage or settings. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`docverify ${VERSION} (commit ${COMMIT})\n`);
    return 0;
  }
  if (command === "help" && rest.length > 0) {
    const usage = USAGES[rest.join(" ")] ?? USAGES[rest[0]!];
    if (usage === undefined) {
      process.stderr.write(`docverify: no command "${rest.join(" ")}"\n\n${USAGE}`);
      return 2;
    }
    process.stdout.write(usage);
    return 0;
  }
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const help = helpRequested(command, rest);
  if (help !== null) {
    process.stdout.write(help);
    return 0;
  }
  try {
    switch (command) {
      case "serve":
        return await serve(rest);
      case "admin":
        return await (await import("./admin/tui.ts")).runAdmin(rest, process.env);
      case "org":
        return await (await import("./admin/cli.ts")).runOrg(rest, process.env, process.stdout);
      case "key":
        return await (await import("./admin/cli.ts")).runKey(rest, process.env, process.stdout);
      case "seal":
        return await (await import("./admin/cli.ts")).runSeal(rest, process.env, process.stdout);
      case "person":
        return await (await import("./admin/cli.ts")).runPerson(rest, process.env, process.stdout);
      case "status":
        return await (await import("./admin/status.ts")).runStatus(rest, process.env, process.stdout);
      case "trust":
        return await (await import("./admin/trust.ts")).runTrust(rest, process.env, process.stdout);
      case "backup":
        return await (await import("./admin/backup.ts")).runBackup(rest, process.env, { out: process.stdout, err: process.stderr, errIsTTY: process.stderr.isTTY === true });
      case "restore":
        return await (await import("./admin/backup.ts")).runRestore(rest, process.env, { out: process.stdout, err: process.stderr, errIsTTY: process.stderr.isTTY === true });
      case "master-key":
        return await (await import("./admin/master-key.ts")).runMasterKey(rest, process.env, process.stdout);
      case "local-ledger":
        return await (await import("./admin/local-ledger.ts")).runLocalLedger(rest, process.env, process.stdout, untilSignal());
      case "sandbox":
        return await (await import("./app/sandbox.ts")).runSandbox(rest, process.env, { out: process.stdout, err: process.stderr }, untilSignal());
      case "verify-receipt": {
        // The verifier alone (src/verifier/): none of the appliance's data, storage or ledger code.
        const verifier = await import("./verifier/cli.ts");
        return await verifier.runVerifyReceipt(rest, verifier.nodeIo());
      }
      case "authenticate":
      case "check":
      case "revoke": // a client of a service (src/bulk/): the client package, none of the appliance
        return await (await import("./bulk/cli.ts")).runWithProcess(argv);
      default:
        process.stderr.write(`docverify: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof DomainError) {
      process.stderr.write(`docverify: ${e.message}\n`);
      return 1;
    }
    if (e instanceof UsageError) {
      const topic = USAGES[`${command} ${rest[0]}`] !== undefined ? `${command} ${rest[0]}` : command;
      process.stderr.write(`docverify: ${e.message}\n${USAGES[topic] !== undefined ? `Run docverify ${topic} --help for its usage.\n` : ""}`);
      return 2;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`docverify: ${e.message}\n`);
      return 2;
    }
    if (e instanceof SchemaTooNewError || e instanceof MasterKeyFileError || e instanceof OpsError) {
      process.stderr.write(`docverify: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`docverify: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

/** Resolves on the first SIGTERM or SIGINT (handlers are installed at once). */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
}

async function serve(args: readonly string[]): Promise<number> {
  const { values } = parseFlags(args, { data: { type: "string" } });
  const config = parseConfig(process.env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  const log = createLogger({ level: config.logLevel });
  // Handlers go in before the server starts: a signal that arrives just after the "started"
  // log line must drain like any other, not kill the process with the default action.
  let signalled: NodeJS.Signals | null = null;
  let onSignal: (signal: NodeJS.Signals) => void = (signal) => (signalled = signal);
  const handler = (signal: NodeJS.Signals) => onSignal(signal);
  process.once("SIGTERM", handler);
  process.once("SIGINT", handler);
  // systemd's Type=notify socket; the one variable besides settings that serve reads.
  const { startServer } = await import("./app/serve.ts");
  const running = await startServer(config, log, { notifySocket: process.env.NOTIFY_SOCKET });
  return await new Promise<number>((resolve) => {
    // The ledger starts after the listener; when it cannot, serve has already drained and closed.
    void running.ledger.then((failure) => {
      if (failure === null) return;
      process.stderr.write(`docverify: ${failure.message}\n`);
      resolve(1);
    });
    onSignal = (signal) => {
      log.info("shutdown requested", { signal });
      running.stop().then(
        () => resolve(0),
        (e: unknown) => {
          log.error("shutdown failed", { error: e });
          resolve(1);
        },
      );
    };
    if (signalled !== null) onSignal(signalled);
  });
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
