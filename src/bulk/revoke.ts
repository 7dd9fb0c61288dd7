/**
 * `docverify revoke --manifest FILE --reason REASON`: revokes every record a manifest names and
 * appends each result to it. The reason is checked before anything, and whether the key may
 * revoke at all before any record is revoked (a preflight whose refusal order puts the scope
 * before the body). ALREADY_REVOKED counts as done; ANCHOR_NOT_FINAL is waited out.
 */
import { DocverifyError } from "../../packages/client/src/index.ts";
import { apiKey, EXIT, flag, integerFlag, parse, reasonFlag, refuseTestKey, serviceUrl, SPECS, str, UsageError } from "./args.ts";
import { ManifestIndex, ManifestWriter, readManifest, type ManifestLine } from "./manifest.ts";
import { plural, Reporter } from "./output.ts";
import { runPool, sleep } from "./pool.ts";
import { rateText } from "./progress.ts";
import { errorCode, errorMessage, interruptedCode, isFatal, openSession, patiently, preflightRevoke, type ClientIo } from "./session.ts";

/** How many times a record whose anchor is not final is waited for and asked again. */
const NOT_FINAL_ATTEMPTS = 30;

export async function runRevoke(argv: readonly string[], io: ClientIo): Promise<number> {
  const p = parse(argv, SPECS.revoke, false);
  const manifestPath = str(p, "manifest");
  if (manifestPath === undefined) throw new UsageError("--manifest FILE is required");
  const reason = reasonFlag(p);
  const url = serviceUrl(p, io.env);
  const concurrency = integerFlag(p, "concurrency", 8, 1, 64);
  const key = apiKey(p, io.env);
  if (key === undefined) throw new UsageError("no API key: give --key-file FILE or set DOCVERIFY_API_KEY");
  refuseTestKey(key, "revoke");
  let lines: ManifestLine[];
  try {
    lines = readManifest(manifestPath);
  } catch (e) {
    throw new UsageError(`cannot read --manifest ${JSON.stringify(manifestPath)}: ${errorCode(e)}`);
  }
  if (lines.length === 0) throw new UsageError(`--manifest ${JSON.stringify(manifestPath)} is missing or names no record`);
  const records = new ManifestIndex(lines).records();
  const todo = records.filter((r) => r.state !== "revoked");
  const counts = { records: records.length, revoked: 0, alreadyRevoked: records.length - todo.length, failed: 0 };
  // How often a record's anchor was not final yet and its Retry-After was waited out (--json only).
  let notFinalWaits = 0;

  if (todo.length > 0) await preflightRevoke(url, key, todo[0]!.recordId!, io);

  const stop = new AbortController();
  io.signal?.addEventListener("abort", () => stop.abort(io.signal!.reason), { once: true });
  if (io.signal?.aborted === true) stop.abort(io.signal.reason);
  const session = openSession(url, key, concurrency, { ...io, signal: stop.signal });
  const manifest = new ManifestWriter(manifestPath);
  const startedAt = Date.now();
  let fatal: string | null = null;
  const reporter = new Reporter(io, "revoke", flag(p, "json"), flag(p, "no-progress"), () => {
    const c = counts;
    const done = c.revoked + c.alreadyRevoked + c.failed;
    return `revoked ${c.revoked} · already revoked ${c.alreadyRevoked} · failed ${c.failed} · of ${c.records} · ${rateText(done, c.records, startedAt, Date.now()).replace("files/s", "records/s")}`;
  });
  for (const r of records) if (r.state === "revoked") reporter.file({ path: r.path, hash: r.hash, recordId: r.recordId, state: "revoked", already: true });

  const revokeOne = async (r: ManifestLine): Promise<"revoked" | "already"> => {
    for (let attempt = 1; ; attempt++) {
      await session.pace.ready(stop.signal);
      try {
        await patiently(session, stop.signal, () => session.client.revokeRecord(r.recordId!, reason));
        return "revoked";
      } catch (e) {
        if (e instanceof DocverifyError && e.code === "ALREADY_REVOKED") return "already";
        // Revocation waits for the record's own anchor to be final; the service says how long.
        if (!(e instanceof DocverifyError && e.code === "ANCHOR_NOT_FINAL") || attempt >= NOT_FINAL_ATTEMPTS) throw e;
        notFinalWaits++;
        await sleep((e.retryAfterSeconds ?? 1) * 1000, stop.signal);
        if (stop.signal.aborted) throw e;
      }
    }
  };

  try {
    await runPool(
      todo,
      concurrency,
      async (r) => {
        let outcome: "revoked" | "already";
        try {
          outcome = await revokeOne(r);
        } catch (e) {
          if (stop.signal.aborted) return;
          if (isFatal(e)) {
            fatal ??= errorMessage(e);
            stop.abort("fatal");
            return;
          }
          counts.failed++;
          reporter.failure(`record ${r.recordId} (${r.path})`, errorCode(e), errorMessage(e));
          reporter.file({ path: r.path, hash: r.hash, recordId: r.recordId, state: r.state, error: errorCode(e) });
          return;
        }
        if (outcome === "revoked") counts.revoked++;
        else counts.alreadyRevoked++;
        manifest.append({ path: r.path, ...(r.hash === undefined ? {} : { hash: r.hash }), recordId: r.recordId!, state: "revoked", ...(outcome === "revoked" ? { reason } : {}), at: new Date().toISOString() });
        reporter.file({ path: r.path, hash: r.hash, recordId: r.recordId, state: "revoked", already: outcome === "already" ? true : undefined });
      },
      stop.signal,
    );
  } finally {
    manifest.close();
  }

  const interrupted = interruptedCode(io);
  if (fatal !== null) reporter.note(`stopped: ${fatal}`);
  if (interrupted !== null) reporter.note("interrupted; run the same command again to go on");
  const c = counts;
  const seconds = Math.round((Date.now() - startedAt) / 100) / 10;
  const summary = { ...c, reason, manifest: manifestPath, rateLimited: session.pace.rateLimited, retries: session.retries.count, notFinalWaits, seconds, stopped: fatal ?? undefined, interrupted: interrupted === null ? undefined : true };
  const text = `${plural(c.records, "record")}: ${c.revoked} revoked now (${reason}), ${c.alreadyRevoked} already revoked, ${c.failed} failed, in ${seconds} s\nmanifest: ${manifestPath}\n`;
  reporter.finish(summary, text);
  if (interrupted !== null) return interrupted;
  return fatal === null && c.revoked + c.alreadyRevoked === c.records ? EXIT.ok : EXIT.someFailed;
}
