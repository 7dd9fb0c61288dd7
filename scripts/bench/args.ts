/** `npm run bench`'s flags (scripts/bench.ts), parsed apart so that a test can check them without running a bench. */
import { parseArgs } from "node:util";

export interface BenchArgs {
  readonly quick: boolean;
  readonly scaleOnly: boolean;
  /** One node on PostgreSQL against SQLite, and failover (scripts/bench/postgres-run.ts), instead of the default run. */
  readonly postgres: boolean;
  readonly json: string | null;
  readonly help: boolean;
}

/** The flags, or an Error saying what is wrong with them (the harness exits 2 with it and the usage). */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean" },
      "scale-only": { type: "boolean" },
      postgres: { type: "boolean" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  const args: BenchArgs = {
    quick: values.quick === true,
    scaleOnly: values["scale-only"] === true,
    postgres: values.postgres === true,
    json: values.json ?? null,
    help: values.help === true,
  };
  if (args.postgres && args.scaleOnly) throw new Error("--postgres and --scale-only are two different runs: give one of them");
  return args;
}
