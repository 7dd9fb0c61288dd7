/**
 * `docverify master-key rotate` (docs/operations.md "Rotate the master key"): a new master key,
 * every private key the service holds re-encrypted under it in one transaction on either engine,
 * the old key file kept until the new one is confirmed in place.
 *
 * The order, and what a crash (`kill -9`, power) at each point leaves (crypto/master-key.ts says
 * how the next open settles it; test/admin/master-key-rotate.test.ts kills the command at each):
 *
 * 1. the new key is written to FILE.next and fsynced: the database still uses the old key, and the
 *    next open removes FILE.next;
 * 2. one write transaction reseals every sealed seed (signing_keys), the ledger submit key and the
 *    master key's check value, with the audit row: from its commit on the database uses the new
 *    key, and the next open puts FILE.next in place;
 * 3. the old key is kept as FILE.previous, FILE.next renamed over FILE;
 * 4. FILE is read back and, holding the new key, FILE.previous is removed.
 *
 * Refused, with nothing changed, while a `serve` uses the data (app/core.ts `openCoreAlone`), when
 * the key store is sealed (no master key, or not this database's), for the read-only copy systemd
 * hands the service, and on bad usage.
 *
 * Test hook: DOCVERIFY_TEST_KILL_ROTATION_AT=STEP makes the command kill itself with SIGKILL at
 * that step (`key-written`, `committed`, `previous-kept`, `installed`). It is honoured only when
 * docverify runs from its source tree, never in the compiled executable, and every other command
 * (serve included) refuses it as an unknown setting.
 */
import { unlinkSync } from "node:fs";
import { osActor } from "./actor.ts";
import { openCoreAlone, ServeRunningError, type AdminCore } from "../app/core.ts";
import { resealSubmitKeyEntry } from "../anchoring/submit-key.ts";
import { parseConfig, type Config } from "../config/index.ts";
import {
  confirmMasterKey,
  deriveSeedEncryptionKey,
  generateMasterKey,
  installPendingMasterKey,
  KeyDecryptionError,
  masterKeyCheckValue,
  masterKeyId,
  pendingKeyFile,
  resealSeed,
  writePendingMasterKey,
  type Algorithm,
} from "../crypto/index.ts";
import { audit } from "../keys/audit.ts";
import { parseFlags, UsageError } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { createLogger } from "../lib/log.ts";
import { MASTER_KEY_CHECK, metaRead } from "../storage/meta.ts";
import { resealUnderNewMasterKey, type ResealCounts } from "../storage/master-key-rotation.ts";

type Env = Readonly<Record<string, string | undefined>>;
type Out = { write(s: string): void };

/** The test hook's variable (see the file comment). */
export const KILL_AT_VARIABLE = "DOCVERIFY_TEST_KILL_ROTATION_AT";
export const KILL_STEPS = ["key-written", "committed", "previous-kept", "installed"] as const;
type Step = (typeof KILL_STEPS)[number];

/** In the compiled executable every module's URL is under Bun's embedded file system. */
const FROM_SOURCE = !import.meta.url.includes("/$bunfs/");

export interface Rotated {
  readonly file: string;
  readonly keyId: string;
  readonly previousKeyId: string;
  readonly signingKeys: number;
  readonly submitKey: boolean;
}

export async function runMasterKey(args: readonly string[], env: Env, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "rotate") throw new UsageError(sub === undefined || sub.startsWith("-") ? "master-key needs a subcommand: rotate" : `master-key: no subcommand ${JSON.stringify(sub)}; there is: rotate`);
  const { values } = parseFlags(rest, { data: { type: "string" }, json: { type: "boolean" } });
  const { [KILL_AT_VARIABLE]: killAt, ...settings } = env;
  const stepReached = killHook(killAt);
  const config = parseConfig(settings, { dataDir: typeof values.data === "string" ? values.data : undefined });
  refuseSystemdCopy(config, env);
  // Stdout keeps the answer; the core's own log lines (a settled rotation, a sealed key store) go to stderr.
  const log = createLogger({ level: "warn", write: (l) => process.stderr.write(l + "\n") });
  let opened;
  try {
    opened = await openCoreAlone({ config, log });
  } catch (e) {
    if (e instanceof ServeRunningError) {
      throw new OpsError(
        `master-key rotate refused: ${e.what}. Stop ${config.databaseUrl === null ? "it" : "every node"} first (systemctl stop docverify), rotate, ` +
          `then start ${config.databaseUrl === null ? "it" : "them"} again (docs/operations.md "Rotate the master key"). Nothing was changed`,
      );
    }
    throw e;
  }
  let rotated: Rotated;
  try {
    rotated = await rotate(opened.core, opened.masterKey, config, osActor(env), stepReached);
  } finally {
    await opened.core.close();
    opened.release();
  }
  out.write(values.json ? JSON.stringify(rotated) + "\n" : report(rotated, config));
  return 0;
}

function report(r: Rotated, config: Config): string {
  const submit = r.submitKey ? " and the ledger submit key" : "";
  return (
    `master key rotated: ${r.signingKeys} private key${r.signingKeys === 1 ? "" : "s"}${submit} re-encrypted under the new key\n` +
    `  new master key       ${r.keyId}  in ${r.file}\n` +
    `  previous master key  ${r.previousKeyId}  removed\n` +
    `Back up ${r.file} now, apart from the data. Backups taken before now open only with the previous key (${r.previousKeyId}): keep your copy of it with them.\n` +
    (config.databaseUrl === null ? "" : `Copy ${r.file} to every node before starting it: a node with the previous key stays sealed.\n`)
  );
}

/** systemd's copy of the credential is read-only and gone at the service's next start: the source file is what rotates. */
function refuseSystemdCopy(config: Config, env: Env): void {
  if (env.DOCVERIFY_MASTER_KEY_FILE !== undefined || env.CREDENTIALS_DIRECTORY === undefined || config.masterKeyFileIsDefault) return;
  throw new UsageError(
    `the master key file ${config.masterKeyFile} is the copy systemd hands the service: rotate the file it is copied from, ` +
      "with DOCVERIFY_MASTER_KEY_FILE=/etc/docverify/credentials/master-key (docs/operations.md \"Rotate the master key\")",
  );
}

function killHook(value: string | undefined): (step: Step) => void {
  if (value === undefined || !FROM_SOURCE) return () => {};
  if (!(KILL_STEPS as readonly string[]).includes(value)) throw new UsageError(`${KILL_AT_VARIABLE} must be one of ${KILL_STEPS.join(", ")}`);
  return (step) => {
    if (step === value) process.kill(process.pid, "SIGKILL");
  };
}

async function rotate(core: AdminCore, masterKey: Uint8Array | null, config: Config, actor: string, stepReached: (step: Step) => void): Promise<Rotated> {
  const file = config.masterKeyFile;
  if (masterKey === null) {
    throw new OpsError(
      `master-key rotate refused: the key store is sealed (the master key ${file} is missing or is not this database's; the log line above says which). ` +
        "Rotation re-encrypts the private keys, which needs the current key: put it in place first. Nothing was changed",
    );
  }
  const from = masterKeyCheckValue(masterKey);
  const key = generateMasterKey();
  const to = masterKeyCheckValue(key);
  const oldSeedKey = deriveSeedEncryptionKey(masterKey);
  const newSeedKey = deriveSeedEncryptionKey(key);
  try {
    writePendingMasterKey(file, key);
  } catch (e) {
    throw new OpsError(`master-key rotate: cannot write the new key to ${pendingKeyFile(file)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); nothing was changed`);
  } finally {
    key.fill(0);
  }
  stepReached("key-written");
  const now = core.clock.now();
  let counts: ResealCounts;
  try {
    counts = await core.store.write(
      resealUnderNewMasterKey(
        from,
        to,
        {
          seed: (row) => resealSeed(oldSeedKey, newSeedKey, row.sealedSeed, { algorithm: row.algorithm as Algorithm, fingerprint: row.fingerprint, purpose: row.purpose }),
          submitKey: (entry) => resealSubmitKeyEntry(entry, oldSeedKey, newSeedKey),
        },
        (tx, t, c) =>
          audit(tx, t, now, {
            actor,
            action: "master_key.rotate",
            subjectType: "master_key",
            subjectId: masterKeyId(to),
            before: { keyId: masterKeyId(from) },
            after: { keyId: masterKeyId(to), signingKeys: c.signingKeys, submitKey: c.submitKey },
          }),
      ),
    );
  } catch (e) {
    await forgetPendingKey(core, file, from);
    if (e instanceof KeyDecryptionError) {
      throw new OpsError(
        `master-key rotate refused: a sealed key (${e.keyId ?? "the ledger submit key"}) does not open with the current master key (${e.reason}); nothing was changed`,
      );
    }
    throw e;
  }
  stepReached("committed");
  installPendingMasterKey(file, stepReached);
  stepReached("installed");
  confirmMasterKey(file, to);
  return { file, keyId: masterKeyId(to), previousKeyId: masterKeyId(from), signingKeys: counts.signingKeys, submitKey: counts.submitKey };
}

/**
 * The transaction failed: FILE.next goes only when the database still remembers the old key. If
 * that cannot be read (the database went away as it committed), FILE.next stays, and whoever opens
 * the folder next finds out from the check value whether to put it in place or remove it.
 */
async function forgetPendingKey(core: AdminCore, file: string, from: string): Promise<void> {
  try {
    if ((await core.store.read(metaRead(MASTER_KEY_CHECK))) !== from) return;
    unlinkSync(pendingKeyFile(file));
  } catch {
    /* kept for the next open to settle */
  }
}
