/**
 * `docverify authenticate PATH…`: every file hashed here as it streams (the document never leaves
 * the machine), a record created for each through the client, each result appended to the
 * manifest as it comes. A second run skips what the manifest holds for the same path and hash;
 * a file whose record was made but whose line never got written (the process killed between the
 * service's 201 and the write) is asked again, and the service answers 200 with the same record:
 * a hash is never authenticated twice for one organisation.
 */
import { mkdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { DocverifyError } from "../../packages/client/src/index.ts";
import { apiKey, CannotStart, EXIT, flag, integerFlag, list, parse, refuseTestKey, serviceUrl, SPECS, str, UsageError } from "./args.ts";
import { ManifestIndex, ManifestWriter, readManifest, type ManifestLine } from "./manifest.ts";
import { plural, Reporter } from "./output.ts";
import { runPool } from "./pool.ts";
import { rateText } from "./progress.ts";
import { errorCode, errorMessage, interruptedCode, isFatal, hashEntry, openSession, patiently, preflightCreate, type ClientIo, type Session } from "./session.ts";
import { pending, result, waitForLedger, type Counts, type Tracked } from "./wait.ts";
import { walk, type WalkEntry } from "./walk.ts";

export const DEFAULT_MANIFEST = "docverify-manifest.jsonl";

export async function runAuthenticate(argv: readonly string[], io: ClientIo): Promise<number> {
  const p = parse(argv, SPECS.authenticate, true);
  if (p.positionals.length === 0) throw new UsageError("give at least one PATH: a file or a folder");
  const url = serviceUrl(p, io.env);
  const concurrency = integerFlag(p, "concurrency", 8, 1, 64);
  const waitSeconds = integerFlag(p, "wait-timeout", 600, 1, 7 * 86_400);
  const manifestPath = str(p, "manifest") ?? DEFAULT_MANIFEST;
  const receiptsDir = str(p, "receipts");
  const wait = flag(p, "wait");
  const sendName = !flag(p, "no-filename");
  if (str(p, "wait-timeout") !== undefined && !wait && receiptsDir === undefined) throw new UsageError("--wait-timeout goes with --wait or --receipts");
  const key = apiKey(p, io.env);
  if (key === undefined) throw new UsageError("no API key: give --key-file FILE or set DOCVERIFY_API_KEY");
  refuseTestKey(key, "create");
  let index: ManifestIndex;
  try {
    index = new ManifestIndex(readManifest(manifestPath));
  } catch (e) {
    throw new UsageError(`cannot read --manifest ${JSON.stringify(manifestPath)}: ${errorCode(e)}`);
  }
  if (!isFolder(dirname(resolve(manifestPath)))) throw new UsageError(`--manifest ${JSON.stringify(manifestPath)}: its folder does not exist`);
  if (receiptsDir !== undefined && existsAsFile(receiptsDir)) throw new UsageError(`--receipts ${JSON.stringify(receiptsDir)} is a file, not a folder`);

  // Before anything is hashed, sent or written: the key may create records, and the service answers.
  await preflightCreate(url, key, io);
  if (receiptsDir !== undefined) {
    try {
      mkdirSync(receiptsDir, { recursive: true });
    } catch (e) {
      throw new CannotStart(`cannot create --receipts ${JSON.stringify(receiptsDir)}: ${errorCode(e)}`);
    }
  }

  const stop = new AbortController();
  io.signal?.addEventListener("abort", () => stop.abort(io.signal!.reason), { once: true });
  if (io.signal?.aborted === true) stop.abort(io.signal.reason);
  const session = openSession(url, key, concurrency, { ...io, signal: stop.signal });
  const manifest = new ManifestWriter(manifestPath);
  const counts: Counts = { files: 0, hashed: 0, created: 0, existing: 0, skipped: 0, failed: 0, anchored: 0, verified: 0, receipts: 0, notFinal: 0 };
  const startedAt = Date.now();
  let phase: "create" | "wait" = "create";
  let waiting = 0;
  let settledBefore = 0;
  let waitingSince = 0;
  let fatal: string | null = null;
  const json = flag(p, "json");
  const reporter = new Reporter(io, "authenticate", json, flag(p, "no-progress"), () => {
    const c = counts;
    const done = c.created + c.existing + c.skipped + c.failed;
    const head = `hashed ${c.hashed}/${c.files} · created ${c.created} · already ${c.existing + c.skipped} · ${wait ? `verified ${c.verified}` : `anchored ${c.anchored}`} · failed ${c.failed}`;
    if (phase === "wait") {
      // Those this phase follows: records final before it (in the manifest already) are not among them.
      const settled = (wait ? c.verified : c.receipts) - settledBefore;
      return `${head} · waiting for the ledger: ${settled}/${waiting} · ${rateText(settled, waiting, waitingSince, Date.now()).replace(/^[^·]*· /, "")}`;
    }
    return `${head} · ${rateText(done, c.files, startedAt, Date.now())}`;
  });
  const stopRun = (e: unknown) => {
    if (fatal === null) fatal = errorMessage(e);
    stop.abort("fatal");
  };

  // walk() yields each path once.
  const entries: WalkEntry[] = [];
  for await (const entry of walk(p.positionals, { include: list(p, "include"), exclude: list(p, "exclude") })) {
    entries.push(entry);
    counts.files++;
    reporter.progress.update();
  }
  const tracked: (Tracked | undefined)[] = new Array(entries.length);
  const needsLedger = wait || receiptsDir !== undefined;
  const record = (line: ManifestLine) => {
    manifest.append(line);
    index.add(line);
  };
  const fail = (path: string, hash: string | undefined, code: string, message: string) => {
    counts.failed++;
    record({ path, ...(hash === undefined ? {} : { hash }), state: "failed", at: new Date().toISOString(), error: code, message });
    reporter.failure(path, code, message);
    reporter.file({ path, hash, state: "failed", error: code });
  };

  try {
    await runPool(
      entries,
      concurrency,
      async (entry, i) => {
        const hash = await hashEntry(entry, fail);
        if (hash === null) return;
        counts.hashed++;
        const held = index.held(entry.path, hash);
        if (held !== undefined) {
          counts.skipped++;
          const t: Tracked = { path: entry.path, hash, recordId: held.recordId!, anchored: held.state === "anchored" || held.state === "verified_org", verified: held.state === "verified_org", receipt: null };
          if (receiptsDir !== undefined && existsAsFile(join(receiptsDir, `${t.recordId}.json`))) t.receipt = join(receiptsDir, `${t.recordId}.json`);
          if (t.anchored) counts.anchored++;
          if (t.verified) counts.verified++;
          tracked[i] = t;
          if (!pending(t, { wait, receiptsDir })) reporter.file(result(t, held.state, { skipped: true }));
          return;
        }
        await session.pace.ready(stop.signal);
        if (stop.signal.aborted) return;
        let answer;
        try {
          answer = await create(session, hash, sendName ? basename(entry.path) : undefined, stop.signal);
        } catch (e) {
          if (stop.signal.aborted) return;
          if (isFatal(e)) return stopRun(e);
          return fail(entry.path, hash, errorCode(e), errorMessage(e));
        }
        const { record: r, created } = answer;
        record({ path: entry.path, hash, recordId: r.recordId, state: created ? "created" : "existing", at: new Date().toISOString(), authenticatedAt: r.authenticatedAt, anchorState: r.anchorState, verifyUrl: r.verifyUrl });
        if (created) counts.created++;
        else counts.existing++;
        const t: Tracked = { path: entry.path, hash, recordId: r.recordId, anchored: r.anchorState === "anchored", verified: false, receipt: null };
        if (t.anchored) counts.anchored++;
        tracked[i] = t;
        if (!needsLedger) reporter.file(result(t, created ? "created" : "existing"));
      },
      stop.signal,
    );

    if (needsLedger && !stop.signal.aborted) {
      const follow = tracked.filter((t): t is Tracked => t !== undefined && pending(t, { wait, receiptsDir }));
      waiting = follow.length;
      settledBefore = wait ? counts.verified : counts.receipts;
      waitingSince = Date.now();
      phase = "wait";
      await waitForLedger(follow, { session, manifest, index, reporter, counts, wait, receiptsDir, deadline: Date.now() + waitSeconds * 1000, concurrency, signal: stop.signal, fatal: stopRun });
    }
  } finally {
    manifest.close();
  }

  const interrupted = interruptedCode(io);
  if (fatal !== null) reporter.note(`stopped: ${fatal}`);
  if (interrupted !== null) reporter.note(`interrupted; the manifest is complete up to here: run the same command again to resume`);
  const c = counts;
  const seconds = Math.round((Date.now() - startedAt) / 100) / 10;
  const summary = {
    ...c,
    rateLimited: session.pace.rateLimited,
    unavailable: session.pace.unavailable,
    retries: session.retries.count,
    manifest: manifestPath,
    receiptsDir,
    seconds,
    stopped: fatal ?? undefined,
    interrupted: interrupted === null ? undefined : true,
  };
  const done = c.created + c.existing + c.skipped;
  const text =
    `${plural(c.files, "file")}: ${done} authenticated (${c.created} new, ${c.existing} already held by the service, ${c.skipped} already in the manifest), ${c.failed} failed, in ${seconds} s\n` +
    (needsLedger ? `on the ledger: ${c.anchored} anchored${wait ? `, ${c.verified} verified` : ""}${receiptsDir === undefined ? "" : `, ${plural(c.receipts, "receipt")} saved now in ${receiptsDir}`}${c.notFinal > 0 ? `, ${c.notFinal} not final within ${waitSeconds} s` : ""}\n` : "") +
    `manifest: ${manifestPath}\n` +
    (session.pace.rateLimited > 0 ? `the service asked to slow down ${plural(session.pace.rateLimited, "time")} (429); the run paused for it\n` : "");
  reporter.finish(summary, text);
  if (interrupted !== null) return interrupted;
  return fatal !== null || c.failed > 0 || c.notFinal > 0 || done + c.failed < c.files ? EXIT.someFailed : EXIT.ok;
}

/** Creates the record; a file name the service refuses is left out rather than failing the file. */
async function create(session: Session, hash: string, filename: string | undefined, signal: AbortSignal) {
  try {
    return await patiently(session, signal, () => session.client.createRecord(filename === undefined ? { originalDocHash: hash } : { originalDocHash: hash, filename }));
  } catch (e) {
    if (filename === undefined || !(e instanceof DocverifyError && e.code === "VALIDATION_FAILED" && e.details?.filename !== undefined)) throw e;
    return await patiently(session, signal, () => session.client.createRecord({ originalDocHash: hash }));
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function existsAsFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
