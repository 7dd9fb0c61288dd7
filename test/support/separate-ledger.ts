/**
 * A local ledger started apart from any `serve`, as several nodes (or a PostgreSQL deployment)
 * share one, and the settings that point a `serve` at it: its mirror URL, its operator and the
 * operator's key file. Closed at cleanup.
 */
import { join } from "node:path";
import { LOCAL_LEDGER_FILES, startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { onCleanup, tempDir } from "./env.ts";

export async function startSeparateLedger(options: { consensusMs?: number } = {}): Promise<Record<string, string>> {
  return (await startSeparateLedgerWithControls(options)).env;
}

/** The same, with the ledger itself: its fault controls (`faults`) for tests that drive them. */
export async function startSeparateLedgerWithControls(options: { consensusMs?: number } = {}): Promise<{ readonly env: Record<string, string>; readonly ledger: LocalLedger }> {
  const ledgerDir = tempDir("docverify-ledger-");
  const ledger = await startLocalLedger({ dataDir: ledgerDir, ...(options.consensusMs === undefined ? {} : { consensusMs: options.consensusMs }) });
  onCleanup(() => ledger.close());
  return {
    ledger,
    env: {
      DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
      DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
      DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
    },
  };
}
