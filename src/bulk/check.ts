/**
 * `docverify check PATH…`: every file hashed here and verified by its hash (POST
 * /v1/verifications), one verdict per file with the records it rests on. With a key the
 * verifications are the organisation's (its verification log); without one, public.
 */
import { apiKey, EXIT, flag, integerFlag, list, parse, serviceUrl, SPECS, UsageError } from "./args.ts";
import { plural, Reporter } from "./output.ts";
import { runPool } from "./pool.ts";
import { rateText } from "./progress.ts";
import { errorCode, errorMessage, interruptedCode, isFatal, hashEntry, openSession, patiently, preflightVerify, type ClientIo } from "./session.ts";
import { walk, type WalkEntry } from "./walk.ts";

const PROVEN = ["verified_org", "verified"];

export async function runCheck(argv: readonly string[], io: ClientIo): Promise<number> {
  const p = parse(argv, SPECS.check, true);
  if (p.positionals.length === 0) throw new UsageError("give at least one PATH: a file or a folder");
  const url = serviceUrl(p, io.env);
  const concurrency = integerFlag(p, "concurrency", 8, 1, 64);
  const anonymous = flag(p, "anonymous");
  if (anonymous && p.values["key-file"] !== undefined) throw new UsageError("--anonymous and --key-file exclude each other");
  const key = anonymous ? undefined : apiKey(p, io.env);

  await preflightVerify(url, key, io);

  const stop = new AbortController();
  io.signal?.addEventListener("abort", () => stop.abort(io.signal!.reason), { once: true });
  if (io.signal?.aborted === true) stop.abort(io.signal.reason);
  const session = openSession(url, key, concurrency, { ...io, signal: stop.signal });
  const counts = { files: 0, hashed: 0, verified: 0, notVerified: 0, failed: 0 };
  const verdicts = new Map<string, number>();
  const startedAt = Date.now();
  let fatal: string | null = null;
  const reporter = new Reporter(io, "check", flag(p, "json"), flag(p, "no-progress"), () => {
    const c = counts;
    return `hashed ${c.hashed}/${c.files} · verified ${c.verified} · not verified ${c.notVerified} · failed ${c.failed} · ${rateText(c.verified + c.notVerified + c.failed, c.files, startedAt, Date.now())}`;
  });

  // walk() yields each path once.
  const entries: WalkEntry[] = [];
  for await (const entry of walk(p.positionals, { include: list(p, "include"), exclude: list(p, "exclude") })) {
    entries.push(entry);
    counts.files++;
  }
  const fail = (path: string, hash: string | undefined, code: string, message: string) => {
    counts.failed++;
    reporter.failure(path, code, message);
    reporter.file({ path, hash, verdict: null, error: code });
  };

  await runPool(
    entries,
    concurrency,
    async (entry) => {
      const hash = await hashEntry(entry, fail);
      if (hash === null) return;
      counts.hashed++;
      await session.pace.ready(stop.signal);
      if (stop.signal.aborted) return;
      let v;
      try {
        v = await patiently(session, stop.signal, () => session.client.verify(hash));
      } catch (e) {
        if (stop.signal.aborted) return;
        if (isFatal(e)) {
          fatal ??= errorMessage(e);
          stop.abort("fatal");
          return;
        }
        return fail(entry.path, hash, errorCode(e), errorMessage(e));
      }
      verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
      if (PROVEN.includes(v.verdict)) counts.verified++;
      else {
        counts.notVerified++;
        reporter.failure(entry.path, v.verdict);
      }
      reporter.file({
        path: entry.path,
        hash,
        verdict: v.verdict,
        recordIds: v.matches.map((m) => m.recordId),
        retryAfterSeconds: v.retryAfterSeconds,
      });
    },
    stop.signal,
  );

  const interrupted = interruptedCode(io);
  if (fatal !== null) reporter.note(`stopped: ${fatal}`);
  if (interrupted !== null) reporter.note("interrupted");
  const c = counts;
  const seconds = Math.round((Date.now() - startedAt) / 100) / 10;
  const byVerdict = Object.fromEntries([...verdicts.entries()].sort());
  const summary = { ...c, verdicts: byVerdict, tier: key === undefined ? "public" : "organisation", rateLimited: session.pace.rateLimited, retries: session.retries.count, seconds, stopped: fatal ?? undefined, interrupted: interrupted === null ? undefined : true };
  const text =
    `${plural(c.files, "file")}: ${c.verified} verified, ${c.notVerified} not verified, ${c.failed} failed, in ${seconds} s (${key === undefined ? "public" : "organisation"} tier)\n` +
    (verdicts.size > 0 ? `verdicts: ${Object.entries(byVerdict).map(([v, n]) => `${v} ${n}`).join(", ")}\n` : "");
  reporter.finish(summary, text);
  if (interrupted !== null) return interrupted;
  return fatal === null && c.verified === c.files ? EXIT.ok : EXIT.someFailed;
}
