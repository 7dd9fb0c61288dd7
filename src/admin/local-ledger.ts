/**
 * `docverify local-ledger [--host H] [--mirror-port P] [--second-mirror-port P] [--grpc-port P]
 * [--data DIR] [--consensus-ms N] [--consensus-interval-ms N] [--operator-key-file FILE] [--json]`: the local ledger alone, in
 * `<DIR>/ledger/` (the folder the embedded one uses), until SIGTERM or SIGINT. Prints the
 * addresses it listens on (gRPC, then each mirror: a second one when `--second-mirror-port` is
 * given or the folder remembers one, for receipts' two mirror nodes); a `serve` is
 * pointed at the mirror address with DOCVERIFY_LOCAL_LEDGER_URL and needs nothing more: the
 * operator 0.0.2 has the public development key (docs/local-ledger.md "The operator key: a public
 * development key") unless this ledger was created with `--operator-key-file` (then serve needs
 * DOCVERIFY_LEDGER_OPERATOR_KEY_FILE too).
 * Without port flags it reuses the ports remembered in that folder (or picks free ones and
 * remembers them), like the embedded ledger.
 *
 * The ledger runs on this process's main thread: it is alone in its process, so a worker thread
 * (as `serve` uses, local-ledger/thread.ts) would only add a hop. Neither this command
 * nor the ledger loads `@hashgraph/sdk`.
 */
import "../lib/protobuf-long.ts"; // first: see the file
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseConfig } from "../config/index.ts";
import { ledgerDir } from "../anchoring/paths.ts";
import { startRememberedLedger } from "../local-ledger/remembered.ts";
import { DEVELOPMENT_OPERATOR_KEY, LOCAL_LEDGER_FILES } from "../local-ledger/index.ts";
import { parseFlags, UsageError } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { createLogger } from "../lib/log.ts";

type Out = { write(s: string): void };

function port(v: string | boolean | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^\d+$/.test(v) || Number(v) > 65535) throw new UsageError(`--${flag} must be a port number 0 to 65535`);
  return Number(v);
}

/** Runs until `until` resolves (the signal), then closes the ledger. */
export async function runLocalLedger(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out, until: Promise<unknown>): Promise<number> {
  const { values } = parseFlags(args, {
    json: { type: "boolean" },
    data: { type: "string" },
    host: { type: "string" },
    "mirror-port": { type: "string" },
    "second-mirror-port": { type: "string" },
    "grpc-port": { type: "string" },
    "consensus-ms": { type: "string" },
    "consensus-interval-ms": { type: "string" },
    "operator-key-file": { type: "string" },
  });
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  const mirrorPort = port(values["mirror-port"], "mirror-port");
  const grpcPort = port(values["grpc-port"], "grpc-port");
  const secondMirrorPort = port(values["second-mirror-port"], "second-mirror-port");
  if (secondMirrorPort !== undefined && secondMirrorPort !== 0 && secondMirrorPort === mirrorPort) throw new UsageError("--second-mirror-port must differ from --mirror-port");
  let consensusMs = config.ledger.localConsensusMs;
  if (values["consensus-ms"] !== undefined) {
    const v = values["consensus-ms"];
    if (typeof v !== "string" || !/^\d+$/.test(v) || Number(v) > 60_000) throw new UsageError("--consensus-ms must be 0 to 60000");
    consensusMs = Number(v);
  }
  // A throughput cost per transaction (docs/local-ledger.md "Consensus"): no setting gives it to
  // the embedded ledger; the anchoring benchmark runs this command with it.
  let consensusIntervalMs: number | undefined;
  if (values["consensus-interval-ms"] !== undefined) {
    const v = values["consensus-interval-ms"];
    if (typeof v !== "string" || !/^\d+$/.test(v) || Number(v) > 60_000) throw new UsageError("--consensus-interval-ms must be 0 to 60000");
    consensusIntervalMs = Number(v);
  }
  const host = typeof values.host === "string" ? values.host : undefined;
  if (host !== undefined && !/^[A-Za-z0-9.:_-]+$/.test(host)) throw new UsageError(`--host ${JSON.stringify(host)} is not a host name or IP address`);
  let operatorKey: string | undefined;
  if (typeof values["operator-key-file"] === "string") {
    const file = resolve(values["operator-key-file"]);
    try {
      operatorKey = readFileSync(file, "utf8").trim();
    } catch (e) {
      throw new OpsError(`--operator-key-file: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  const log = createLogger({ level: config.logLevel, write: (l) => process.stderr.write(l + "\n") });
  const dir = ledgerDir(config.dataDir);
  let ledger;
  try {
    ledger = await startRememberedLedger({
      dir,
      host,
      grpcPort,
      mirrorPort,
      ...(secondMirrorPort !== undefined ? { secondMirrorPort } : {}),
      consensusMs,
      ...(consensusIntervalMs !== undefined ? { consensusIntervalMs } : {}),
      log,
      ...(operatorKey !== undefined ? { operatorKey } : {}),
    });
  } catch (e) {
    // A malformed key, or one this ledger was not created with: the operator's to fix.
    if (operatorKey !== undefined && /operator key/.test((e as Error).message)) throw new OpsError(`--operator-key-file: ${(e as Error).message}`);
    throw e;
  }
  const operatorKeyFile = join(dir, LOCAL_LEDGER_FILES.operatorKey);
  const developmentKey = ledger.operator.privateKeyDer === DEVELOPMENT_OPERATOR_KEY.privateKeyDer;
  if (values.json) {
    out.write(
      JSON.stringify({
        grpcAddress: ledger.grpcAddress,
        mirrorUrl: ledger.mirrorUrl,
        mirrorUrls: ledger.mirrorUrls,
        operatorAccountId: ledger.operator.accountId,
        developmentKey,
        operatorKeyFile,
        dataDir: dir,
      }) + "\n",
    );
  } else {
    out.write(`grpc    ${ledger.grpcAddress}\n${ledger.mirrorUrls.map((u) => `mirror  ${u}\n`).join("")}`);
    process.stderr.write(
      `Local ledger in ${dir}: nothing on it is public.\n` +
        (developmentKey
          ? `Operator ${ledger.operator.accountId} has the development key, which is public (docs/local-ledger.md): for development only.\n` +
            `Point a service at it with DOCVERIFY_LOCAL_LEDGER_URL=${ledger.mirrorUrl}\n`
          : `Operator ${ledger.operator.accountId} has a key of its own, copied to ${operatorKeyFile}.\n` +
            `Point a service at it with DOCVERIFY_LOCAL_LEDGER_URL=${ledger.mirrorUrl} and DOCVERIFY_LEDGER_OPERATOR_KEY_FILE=${operatorKeyFile}\n`) +
        (ledger.mirrorUrls.length > 1 ? `For receipts naming both mirrors, add DOCVERIFY_MIRROR_NODES=${ledger.mirrorUrls.join(",")}\n` : ""),
    );
  }
  await until;
  await ledger.close();
  return 0;
}
