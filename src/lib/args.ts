/**
 * Strict flag parsing for every subcommand: an unknown flag, a missing value or a stray
 * argument is a `UsageError` (exit code 2), never ignored.
 */
import { parseArgs } from "node:util";

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export type FlagSpec = Record<string, { type: "string" | "boolean" }>;

/** Parses `args` against `options`, requiring exactly `positionals` positional arguments. */
export function parseFlags(args: readonly string[], options: FlagSpec, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: positionals > 0 });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(positionals === 0 ? `unexpected argument ${parsed.positionals[0]}` : `expected ${positionals} argument(s), got ${parsed.positionals.length}`);
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
}
