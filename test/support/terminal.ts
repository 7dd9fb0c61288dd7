/**
 * A terminal a test drives as a person would: one program in its own tmux server (a private
 * socket, no config file), in a 120 × 40 pane, with keys sent and the screen read back. Used by
 * the terminal UI's tests (test/admin/tui.test.ts, test/persons/tui.test.ts).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { onCleanup, tempDir } from "./env.ts";
import { requireProgram } from "./programs.ts";
import { waitFor } from "./wait.ts";

const TMUX = requireProgram("tmux");
const WIDTH = 120;
const HEIGHT = 40;
/** The OS user the UI sees (the audit trail's actor). */
export const TUI_USER = "tui-tester";

/** The environment of the tmux server, and so of the UI: nothing from the test runner's but PATH and HOME. */
export function paneEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", USER: TUI_USER, LANG: "C.UTF-8", ...extra };
}

let sessions = 0;

/** One program in its own tmux server (a private socket, no config file), in a pane of WIDTH × HEIGHT. */
export class Terminal {
  readonly socket = `docverify-tui-${process.pid}-${++sessions}`;

  constructor(
    cmd: string[],
    private readonly env: Record<string, string> = paneEnv(),
  ) {
    const dir = tempDir("docverify-tty-");
    // stty before/after: the UI must leave the terminal's modes as it found them.
    const wrapper = `stty -g > ${dir}/before; "$@"; code=$?; stty -g > ${dir}/after; cmp -s ${dir}/before ${dir}/after && echo TTY-RESTORED; echo "[exit $code]"; exec sleep 600`;
    // An empty working folder, as an operator's would be (the binary must not see this repository's node_modules).
    this.tmux(["new-session", "-d", "-s", "t", "-x", String(WIDTH), "-y", String(HEIGHT), "-c", dir, "sh", "-c", wrapper, "sh", ...cmd]);
    onCleanup(() => {
      Bun.spawnSync([TMUX, "-L", this.socket, "kill-server"]);
      // kill-server can leave the socket file behind.
      rmSync(join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid!()}`, this.socket), { force: true });
    });
  }

  private tmux(args: string[]): string {
    // -u: UTF-8 whatever the locale, so clack's box and bullet characters come back as written.
    const r = Bun.spawnSync([TMUX, "-u", "-L", this.socket, "-f", "/dev/null", ...args], { env: this.env });
    if (r.exitCode !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr.toString()}`);
    return r.stdout.toString();
  }

  screen(): string {
    return this.tmux(["capture-pane", "-p", "-t", "t"]);
  }

  /** The pane's scrollback and screen (the main screen's; the alternate screen keeps none). */
  history(): string {
    return this.tmux(["capture-pane", "-p", "-S", "-", "-t", "t"]);
  }

  /** Named keys (`Down`, `Enter`, `Escape`, `C-c`, `Space`, …). */
  keys(...keys: string[]): void {
    this.tmux(["send-keys", "-t", "t", ...keys]);
  }

  /** Literal text, as typed. */
  type(text: string): void {
    this.tmux(["send-keys", "-t", "t", "-l", text]);
  }

  /**
   * Waits until the screen shows `what` and is settled: a prompt is drawn in full (its closing
   * `└` line; clack draws a prompt only once the terminal is in raw mode, so keys sent after this
   * reach it as keys) and two captures in a row are the same. Returns the screen.
   */
  async waitForScreen(what: string | RegExp, ms = 10_000, prompt = true): Promise<string> {
    let previous = "";
    let s = "";
    try {
      return await waitFor(
        String(what),
        () => {
          s = this.screen();
          const ok = (typeof what === "string" ? s.includes(what) : what.test(s)) && (!prompt || /^└/m.test(s));
          if (ok && s === previous) return s;
          previous = ok ? s : "";
          return undefined;
        },
        ms,
        30,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; the screen:\n${s}`);
    }
  }

  /** Waits for a screen whose header is `heading` (the header line is unique to the screen). */
  heading(heading: string, ms?: number): Promise<string> {
    return this.waitForScreen(`docverify admin  ›  ${heading}\n`, ms);
  }

  /** Moves the select prompt's cursor to the option whose label starts with `label` and presses Enter. */
  choose(label: string): void {
    const options = this.screen()
      .split("\n")
      .filter((l) => /^│  [●○] /.test(l) && !/ Yes \/ . No/.test(l))
      .map((l) => ({ active: l.startsWith("│  ●"), text: l.slice(5) }));
    const active = options.findIndex((o) => o.active);
    const target = options.findIndex((o) => o.text.startsWith(label));
    if (active < 0 || target < 0) throw new Error(`no option "${label}" in the select on screen:\n${this.screen()}`);
    const d = target - active;
    this.keys(...Array<string>(Math.abs(d)).fill(d > 0 ? "Down" : "Up"), "Enter");
  }

  /** Waits for the program to end; its exit code, and whether the terminal's modes came back. */
  async exited(ms = 10_000): Promise<{ code: number; restored: boolean }> {
    const s = await this.waitForScreen(/\[exit \d+\]/, ms, false);
    return { code: Number(/\[exit (\d+)\]/.exec(s)![1]), restored: s.includes("TTY-RESTORED") };
  }
}
