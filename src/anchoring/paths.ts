/**
 * Where the embedded ledger lives in the data folder. A module of its own so that commands that
 * only need the path (backup, restore, status) do not load the ledger SDK. The address file
 * inside that folder is the local ledger's own (src/local-ledger/addresses.ts).
 */
import { join } from "node:path";

export { PORTS_FILE, readRememberedAddress, rememberedMirrorUrls, type RememberedAddress } from "../local-ledger/addresses.ts";

/** The embedded ledger's folder inside the data folder. */
export const LEDGER_DIR = "ledger";

export function ledgerDir(dataDir: string): string {
  return join(dataDir, LEDGER_DIR);
}
