/**
 * `docverify admin [--data DIR]`: the administrator's terminal UI (docs/admin.md).
 * It offers what `org`, `key` and `status` do, and more (records, the audit trail), on the data
 * folder directly, also while `serve` runs on it. Changes go through the same services as the
 * command line, so each writes its audit row with the OS user as actor.
 *
 * It needs a person at a terminal: without a TTY on stdin and stdout it refuses (exit 2) and
 * names the scriptable commands. Arrow keys move, Enter chooses, Escape goes back one level
 * (leaving the main menu quits), Ctrl-C leaves from anywhere with exit 0 and the terminal as it
 * was. Screens live in ./tui/; prompts are @clack/prompts, which only src/admin/ imports.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_ON_POSTGRES, DATABASE_FILE, openCore, type Core } from "../app/core.ts";
import { osActor } from "./actor.ts";
import { ConfigError, parseConfig } from "../config/index.ts";
import { parseFlags } from "../lib/args.ts";
import { createLogger } from "../lib/log.ts";
import { auditScreen } from "./tui/audit.ts";
import { keysScreen, mintKey } from "./tui/keys.ts";
import { organisationsScreen } from "./tui/orgs.ts";
import { personsScreen } from "./tui/persons.ts";
import { queueScreen } from "./tui/queue.ts";
import { recordsScreen } from "./tui/records.ts";
import { BACK, createUi, ExitRequested, TERMINAL, type Ctx } from "./tui/ui.ts";

type Env = Readonly<Record<string, string | undefined>>;

export const NO_TERMINAL_MESSAGE = `admin is interactive and needs a terminal (stdin and stdout must both be a TTY).
For scripts, use the scriptable commands, each with --json:
  docverify org create|set|list …
  docverify key mint|list|revoke …
  docverify person add|list|suspend|link …
  docverify status
`;

export interface AdminIo {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: { write(s: string): void };
}

export async function runAdmin(args: readonly string[], env: Env, io: AdminIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const { values } = parseFlags(args, { data: { type: "string" }, json: { type: "boolean" } });
  if (values.json === true || !io.stdin.isTTY || !io.stdout.isTTY) {
    io.stderr.write(`${values.json === true ? "docverify: admin has no --json form.\n" : ""}docverify: ${NO_TERMINAL_MESSAGE}`);
    return 2;
  }
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  // Before anything else: it would offer to create an embedded database beside the shared one.
  if (config.databaseUrl !== null) throw new ConfigError("DOCVERIFY_DATABASE_URL", ADMIN_ON_POSTGRES);

  let core: Core | null = null;
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    if (io.stdin.isTTY) io.stdin.setRawMode(false);
    io.stdout.write(TERMINAL.showCursor + TERMINAL.leaveAlternateScreen);
    io.stdin.pause();
  };
  // Ctrl-C between prompts (the terminal is not raw then) arrives as SIGINT; leave the same way.
  const onSignal = () => {
    try {
      restore();
    } catch {
      /* the terminal is gone (hang-up): nothing to restore */
    }
    void core?.close();
    process.exit(0);
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, onSignal);
  // The terminal closed under us (its window or tmux went away): stdin ends. Without this the
  // prompts would keep reading a dead terminal.
  io.stdin.once("end", onSignal);

  io.stdout.write(TERMINAL.enterAlternateScreen);
  const ui = createUi(io, "docverify admin", `data folder ${config.dataDir}   ·   ↑/↓ move, Enter chooses, Esc goes back, Ctrl-C quits`);
  try {
    if (!existsSync(join(config.dataDir, DATABASE_FILE))) {
      ui.screen("New data folder");
      ui.warn(`There is no docverify data folder at ${config.dataDir} (no ${DATABASE_FILE}).`);
      const create = await ui.confirm("Create a new, empty one there (with a new master key)?", false);
      if (create === BACK || !create) return 0;
    }
    const warnings: string[] = [];
    // The core's own log lines would draw over the screen; they are shown as messages instead.
    const log = createLogger({
      level: "warn",
      write: (l) => {
        const { msg, file, hint } = JSON.parse(l) as { msg?: unknown; file?: unknown; hint?: unknown };
        warnings.push([msg, file, hint].filter((x) => typeof x === "string").join("\n"));
      },
    });
    core = openCore({ config, log });
    for (const w of warnings) ui.flash("warn", w);
    await mainMenu({ ui, core, actor: osActor(env), env });
    return 0;
  } catch (e) {
    if (e instanceof ExitRequested) return 0;
    throw e;
  } finally {
    restore();
    for (const s of signals) process.off(s, onSignal);
    io.stdin.off("end", onSignal);
    await core?.close();
  }
}

async function mainMenu(ctx: Ctx): Promise<void> {
  const { ui } = ctx;
  for (;;) {
    ui.screen("Main menu");
    const choice = await ui.select("What would you like to do?", [
      { value: "orgs", label: "Organisations", hint: "create; API access, add-on, validated, suspended" },
      { value: "keys", label: "API keys", hint: "list, revoke" },
      { value: "mint", label: "Mint an API key", hint: "shown once" },
      { value: "persons", label: "Persons", hint: "add (enrolment link shown once), suspend, new link" },
      { value: "records", label: "Find a record", hint: "by document hash or record id" },
      { value: "queue", label: "Anchor queue and ledger health" },
      { value: "audit", label: "Audit trail", hint: "every administrative change, newest first" },
      { value: "quit", label: "Quit" },
    ]);
    if (choice === BACK || choice === "quit") return;
    await SCREENS[choice](ctx);
  }
}

const SCREENS: Record<"orgs" | "keys" | "mint" | "persons" | "records" | "queue" | "audit", (ctx: Ctx) => Promise<void>> = {
  orgs: organisationsScreen,
  persons: personsScreen,
  keys: (ctx) => keysScreen(ctx),
  mint: (ctx) => mintKey(ctx),
  records: recordsScreen,
  queue: queueScreen,
  audit: auditScreen,
};
