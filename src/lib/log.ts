/**
 * One JSON object per line on stdout, for journald. Fields are the caller's; never pass a
 * key, a secret or a document's filename here — log a key's id prefix instead.
 */
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  enabled(level: Level): boolean;
}

export function createLogger(options: { level: Level; write?: (line: string) => void; now?: () => number }): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line + "\n"));
  const now = options.now ?? Date.now;
  const min = ORDER[options.level];
  const emit = (level: Level, msg: string, fields?: Fields) => {
    if (ORDER[level] < min) return;
    write(JSON.stringify({ time: new Date(now()).toISOString(), level, msg, ...fields }, errorsAsText));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (level) => ORDER[level] >= min,
  };
}

/** A logger that keeps lines in memory, for tests that assert on what was logged. */
export function memoryLogger(level: Level = "debug"): Logger & { lines: Fields[] } {
  const lines: Fields[] = [];
  const log = createLogger({ level, write: (l) => lines.push(JSON.parse(l) as Fields) });
  return Object.assign(log, { lines });
}

function errorsAsText(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === "bigint") return value.toString();
  return value;
}
