/**
 * The bulk commands' entry: `docverify authenticate|check|revoke …` (src/main.ts) and
 * `node docverify-client.mjs authenticate|check|revoke …` (the standalone bundle) both call
 * `runClientCommand(argv, nodeClientIo())`. Everything under src/bulk/ runs on Node.js 20 as well
 * as Bun: node:* modules and the client package only.
 */
import { runAuthenticate } from "./authenticate.ts";
import { CannotStart, EXIT, UsageError } from "./args.ts";
import { runCheck } from "./check.ts";
import { runRevoke } from "./revoke.ts";
import type { ClientIo } from "./session.ts";
import { AUTHENTICATE_USAGE, CHECK_USAGE, REVOKE_USAGE } from "./usage.ts";

export type { ClientIo } from "./session.ts";

const COMMANDS = {
  authenticate: { usage: AUTHENTICATE_USAGE, run: runAuthenticate },
  check: { usage: CHECK_USAGE, run: runCheck },
  revoke: { usage: REVOKE_USAGE, run: runRevoke },
} as const;

const OVERVIEW =
  "Usage: docverify authenticate|check|revoke [OPTIONS]\n\n" +
  "  authenticate PATH...   authenticate files (hashed here) and keep a manifest\n" +
  "  check PATH...          verify files by their hash\n" +
  "  revoke --manifest FILE --reason REASON   revoke every record of a manifest\n\n" +
  "COMMAND --help for its usage (docs/bulk.md).\n";

/** Runs one bulk command; `argv[0]` is the command. Returns the exit code (docs/bulk.md) once all its output is written. */
export async function runClientCommand(argv: readonly string[], io: ClientIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } finally {
    await io.flush?.();
  }
}

async function dispatch(argv: readonly string[], io: ClientIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io[name === undefined ? "stderr" : "stdout"](OVERVIEW);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name as keyof typeof COMMANDS] as (typeof COMMANDS)[keyof typeof COMMANDS] | undefined;
  if (command === undefined) {
    io.stderr(`docverify: unknown command ${JSON.stringify(name)}\n\n${OVERVIEW}`);
    return EXIT.usage;
  }
  const end = rest.indexOf("--");
  if ((end === -1 ? rest : rest.slice(0, end)).some((t) => t === "--help" || t === "-h")) {
    io.stdout(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    return failed(name, e, io);
  }
}

function failed(name: string, e: unknown, io: ClientIo): number {
  if (e instanceof UsageError) {
    io.stderr(`docverify ${name}: ${e.message}\nRun docverify ${name} --help for its usage.\n`);
    return EXIT.usage;
  }
  if (e instanceof CannotStart) {
    io.stderr(`docverify ${name}: ${e.message}\n`);
    return EXIT.cannotStart;
  }
  io.stderr(`docverify ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
  return EXIT.someFailed;
}

/** `runClientCommand` with the real io (src/main.ts). */
export function runWithProcess(argv: readonly string[]): Promise<number> {
  return runClientCommand(argv, nodeClientIo());
}

/**
 * The real io: the process's streams, environment and signals. The first SIGINT or SIGTERM stops
 * the run cleanly (the manifest is closed, the summary printed); a second one ends the process.
 */
export function nodeClientIo(): ClientIo {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // Bun writes to a pipe asynchronously, and the caller exits right after: each write's callback
  // tells when it has left, and the writes of one stream leave in order.
  let out = Promise.resolve();
  let err = Promise.resolve();
  const write = (stream: NodeJS.WriteStream, text: string) => new Promise<void>((resolve) => void stream.write(text, () => resolve()));
  return {
    stdout: (text) => void (out = write(process.stdout, text)),
    stderr: (text) => void (err = write(process.stderr, text)),
    flush: async () => void (await Promise.all([out, err])),
    stderrIsTTY: process.stderr.isTTY === true,
    ...(process.stderr.isTTY === true && process.stderr.columns > 0 ? { columns: process.stderr.columns } : {}),
    env: process.env,
    signal: controller.signal,
  };
}
