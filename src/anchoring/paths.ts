/**
 * Where the embedded ledger lives in the data folder. A module of its own so that commands that
 * only need the path (backup, restore, status) do not load the ledger SDK.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The embedded ledger's folder inside the data folder. */
export const LEDGER_DIR = "ledger";
/** Where the embedded ledger remembers its address. */
export const PORTS_FILE = "ports.json";

export function ledgerDir(dataDir: string): string {
  return join(dataDir, LEDGER_DIR);
}

/** The embedded ledger's remembered address (`<ledger dir>/ports.json`). */
export interface RememberedAddress {
  readonly host: string;
  readonly grpcPort: number;
  readonly mirrorPort: number;
}

export function readRememberedAddress(dir: string): RememberedAddress | null {
  const file = join(dir, PORTS_FILE);
  if (!existsSync(file)) return null;
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<RememberedAddress>;
    const port = (p: unknown) => typeof p === "number" && Number.isInteger(p) && p > 0 && p < 65536;
    if (typeof v.host === "string" && port(v.grpcPort) && port(v.mirrorPort)) return { host: v.host, grpcPort: v.grpcPort!, mirrorPort: v.mirrorPort! };
  } catch {
    /* unreadable: choose again */
  }
  return null;
}
