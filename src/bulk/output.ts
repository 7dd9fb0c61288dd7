/**
 * What a bulk command tells its user: with --json one JSON line per file on stdout as each
 * finishes and a last `{"summary":{…}}` line; otherwise the progress line on a terminal, each
 * failure on stderr (the first MAX_SHOWN; the manifest or --json has them all) and a summary on
 * stdout.
 */
import { ProgressLine } from "./progress.ts";
import type { ClientIo } from "./session.ts";

const MAX_SHOWN = 20;

export class Reporter {
  readonly progress: ProgressLine;
  private shown = 0;
  private hidden = 0;

  constructor(
    private readonly io: ClientIo,
    private readonly command: string,
    readonly json: boolean,
    noProgress: boolean,
    render: () => string,
  ) {
    const width = io.columns ?? 80;
    // One column short of the width: a line that fills it wraps on some terminals, and a wrapped line is not redrawn in place.
    const fit = () => {
      const text = render();
      return text.length < width ? text : `${text.slice(0, Math.max(1, width - 2))}…`;
    };
    this.progress = new ProgressLine((t) => io.stderr(t), io.stderrIsTTY && !noProgress && !json, fit);
  }

  /** A file (or record) is finished: its JSON line with --json; the progress line otherwise. */
  file(result: Record<string, unknown>): void {
    if (this.json) this.io.stdout(JSON.stringify(dropUndefined(result)) + "\n");
    else this.progress.update();
  }

  /** A file failed: named on stderr (not with --json: its line says so). */
  failure(what: string, code: string, message?: string): void {
    if (this.json) return;
    if (this.shown >= MAX_SHOWN) {
      this.hidden++;
      return;
    }
    this.shown++;
    // A file system's sentence already ends with its code: "no such file or folder (ENOENT)".
    const why = message === undefined || message === "" ? code : message.endsWith(`(${code})`) ? message : `${code} (${message})`;
    this.progress.above(`docverify ${this.command}: ${what}: ${why}\n`);
  }

  /** A message on stderr, above the progress line. */
  note(text: string): void {
    this.progress.above(`docverify ${this.command}: ${text}\n`);
  }

  /** Ends the progress line, then the summary: a JSON line with --json, `text` otherwise. */
  finish(summary: Record<string, unknown>, text: string): void {
    this.progress.finish();
    if (this.hidden > 0) this.io.stderr(`docverify ${this.command}: … and ${this.hidden} more failures (see the manifest, or run with --json)\n`);
    if (this.json) this.io.stdout(JSON.stringify({ summary: dropUndefined(summary) }) + "\n");
    else this.io.stdout(text);
  }
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** "1 file", "2 files". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
