/**
 * Where the embedded ledger lives in the data folder. A module of its own so that commands that
 * only need the path (backup, restore, status) do not load the ledger SDK.
 */
import { join } from "node:path";

/** The embedded ledger's folder inside the data folder. */
export const LEDGER_DIR = "ledger";
/** Where the embedded ledger remembers its address. */
export const PORTS_FILE = "ports.json";

export function ledgerDir(dataDir: string): string {
  return join(dataDir, LEDGER_DIR);
}
