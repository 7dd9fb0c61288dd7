/**
 * What the local ledger keeps in its data folder: named apart from index.ts so that open.ts (the
 * implementation, which index.ts loads on first start) reads the names without importing index.ts
 * back (no import cycle).
 */
import { LEDGER_LOCK_FILE } from "../lib/lock-file.ts";

/** What the ledger keeps in its data folder. */
export const LOCAL_LEDGER_FILES = {
  database: "ledger.sqlite",
  /** Names the owning process (src/lib/lock-file.ts; `restore` asks the same question). */
  lock: LEDGER_LOCK_FILE,
  /** A copy of the genesis operator's private key, hex DER (PKCS#8), owner-only. */
  operatorKey: "operator.key",
} as const;
