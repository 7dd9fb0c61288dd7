/**
 * Lock files that name their owner's pid, and whether that owner still runs.
 *
 * The embedded local ledger takes `LEDGER_LOCK_FILE` in its folder (one ledger per folder: two
 * would both run consensus on the same topics), and `restore` refuses while a live process holds
 * it: both ask `lockFileHolder`, so the name and the test of "held" cannot drift apart. A file left
 * by a process that no longer runs (killed) holds nothing.
 */
import { readFileSync } from "node:fs";

/** The embedded local ledger's lock file, inside its folder (DATA_DIR/ledger). */
export const LEDGER_LOCK_FILE = "ledger.lock";

/** Whether process `pid` runs (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The running process that the lock file at `path` names (this process included), or null when
 * there is no readable file, it does not hold a pid, or that process no longer runs.
 */
export function lockFileHolder(path: string): number | null {
  let owner: number;
  try {
    owner = Number(readFileSync(path, "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(owner) || owner <= 0) return null;
  return owner === process.pid || processAlive(owner) ? owner : null;
}
