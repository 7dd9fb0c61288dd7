/**
 * authenticate --wait and --receipts: after creation, each record is followed until the ledger has
 * it. The polls are cheap and few: with --receipts the receipt request is itself the poll (409
 * ANCHOR_NOT_FINAL with Retry-After until its message reached consensus); otherwise a repeat
 * POST /v1/records answers 200 with the record's current anchorState, and one verification
 * confirms it once anchored. Records anchor roughly in the order they were made, so when one is
 * not final yet the whole pool holds until the Retry-After it was given, instead of asking about
 * every later record in turn.
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DocverifyError } from "../../packages/client/src/index.ts";
import type { ManifestIndex, ManifestLine, ManifestWriter } from "./manifest.ts";
import type { Reporter } from "./output.ts";
import { Pace, runPool } from "./pool.ts";
import { errorCode, errorMessage, isFatal, patiently, type Session } from "./session.ts";

export interface Counts {
  files: number;
  hashed: number;
  created: number;
  existing: number;
  skipped: number;
  failed: number;
  anchored: number;
  verified: number;
  receipts: number;
  notFinal: number;
}

/** A record this run follows: a file's, created now or found in the manifest. */
export interface Tracked {
  readonly path: string;
  readonly hash: string;
  recordId: string;
  anchored: boolean;
  verified: boolean;
  receipt: string | null;
}

export interface WaitContext {
  readonly session: Session;
  readonly manifest: ManifestWriter;
  readonly index: ManifestIndex;
  readonly reporter: Reporter;
  readonly counts: Counts;
  readonly wait: boolean;
  readonly receiptsDir: string | undefined;
  readonly deadline: number;
  readonly concurrency: number;
  readonly signal: AbortSignal;
  /** An error after which nothing more can succeed: the run stops. */
  fatal(e: unknown): void;
}

type Step = { done: true } | { done: false; retryAfterSeconds: number } | { failed: string; message: string };

/** Whether `t` still needs anything from the ledger in this run. */
export function pending(t: Tracked, ctx: Pick<WaitContext, "wait" | "receiptsDir">): boolean {
  return (ctx.receiptsDir !== undefined && t.receipt === null) || (ctx.wait && !t.verified);
}

export function result(t: Tracked, state: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { path: t.path, hash: t.hash, recordId: t.recordId, state, receipt: t.receipt ?? undefined, ...extra };
}

export async function waitForLedger(items: readonly Tracked[], ctx: WaitContext): Promise<void> {
  // Shared by the pool: a record not final yet holds every worker until its Retry-After.
  const hold = new Pace(ctx.concurrency);
  const line = (t: Tracked, state: ManifestLine["state"], extra: Partial<ManifestLine> = {}) => {
    const l: ManifestLine = { path: t.path, hash: t.hash, recordId: t.recordId, state, at: new Date().toISOString(), ...extra };
    ctx.manifest.append(l);
    ctx.index.add(l);
  };

  const step = async (t: Tracked): Promise<Step> => {
    const { client } = ctx.session;
    if (ctx.receiptsDir !== undefined && t.receipt === null) {
      let text: string;
      try {
        text = (await patiently(ctx.session, ctx.signal, () => client.receipt(t.recordId))).text;
      } catch (e) {
        if (e instanceof DocverifyError && e.code === "ANCHOR_NOT_FINAL") return { done: false, retryAfterSeconds: e.retryAfterSeconds ?? 1 };
        // 404: the record was abandoned (the ledger never confirmed it); the hash is authenticated anew below.
        if (!(e instanceof DocverifyError && e.code === "NOT_FOUND")) throw e;
        return await renew(t);
      }
      const file = join(ctx.receiptsDir, `${t.recordId}.json`);
      // Written aside and renamed: a receipt file is whole or absent, whenever the run stops.
      writeFileSync(`${file}.partial`, text);
      renameSync(`${file}.partial`, file);
      t.receipt = file;
      ctx.counts.receipts++;
      if (!t.anchored) ctx.counts.anchored++;
      t.anchored = true;
      // Also for a record already anchored when it was made: the line names its receipt.
      line(t, "anchored", { anchorState: "anchored", receipt: file });
    }
    if (ctx.wait && !t.anchored) {
      const { record, created } = await patiently(ctx.session, ctx.signal, () => client.createRecord({ originalDocHash: t.hash }));
      if (created || record.recordId !== t.recordId) return await renewed(t, record.recordId, created);
      if (record.anchorState !== "anchored") return { done: false, retryAfterSeconds: record.retryAfterSeconds ?? 1 };
      t.anchored = true;
      ctx.counts.anchored++;
      line(t, "anchored", { anchorState: "anchored" });
    }
    if (ctx.wait && !t.verified) {
      const v = await patiently(ctx.session, ctx.signal, () => client.verify(t.hash));
      if (v.verdict === "pending_anchor") return { done: false, retryAfterSeconds: v.retryAfterSeconds ?? 1 };
      // At most 100 matches are listed: beyond that the verdict alone vouches.
      const ours = v.matches.some((m) => m.recordId === t.recordId && m.status === "active") || v.matches.length >= 100;
      if ((v.verdict !== "verified_org" && v.verdict !== "verified") || !ours) return { failed: v.verdict === "verified_org" ? "NOT_MATCHED" : v.verdict.toUpperCase(), message: `verification answered ${v.verdict}` };
      t.verified = true;
      ctx.counts.verified++;
      line(t, "verified_org");
    }
    return { done: true };
  };

  /** The service answers for the hash with a record other than ours: it is now the one followed. */
  const renewed = (t: Tracked, recordId: string, created: boolean): Step => {
    t.recordId = recordId;
    t.anchored = false;
    line(t, created ? "created" : "existing");
    return { done: false, retryAfterSeconds: 1 };
  };
  const renew = async (t: Tracked): Promise<Step> => {
    const { record, created } = await patiently(ctx.session, ctx.signal, () => ctx.session.client.createRecord({ originalDocHash: t.hash }));
    return renewed(t, record.recordId, created);
  };

  await runPool(
    items,
    ctx.concurrency,
    async (t) => {
      for (;;) {
        if (ctx.signal.aborted) return;
        if (Date.now() >= ctx.deadline) {
          ctx.counts.notFinal++;
          ctx.reporter.failure(t.path, "NOT_FINAL", `record ${t.recordId} not ${ctx.wait ? "verified" : "anchored"} within --wait-timeout`);
          ctx.reporter.file(result(t, t.anchored ? "anchored" : "created", { error: "NOT_FINAL" }));
          return;
        }
        await hold.ready(ctx.signal);
        await ctx.session.pace.ready(ctx.signal);
        if (ctx.signal.aborted) return;
        let s: Step;
        try {
          s = await step(t);
        } catch (e) {
          if (ctx.signal.aborted) return;
          if (isFatal(e)) return ctx.fatal(e);
          s = { failed: errorCode(e), message: errorMessage(e) };
        }
        if ("failed" in s) {
          ctx.counts.failed++;
          line(t, "failed", { error: s.failed, message: s.message });
          ctx.reporter.failure(t.path, s.failed, s.message);
          ctx.reporter.file(result(t, "failed", { error: s.failed }));
          return;
        }
        if (s.done) {
          ctx.reporter.file(result(t, t.verified ? "verified_org" : "anchored"));
          return;
        }
        hold.pauseFor(Math.min(s.retryAfterSeconds * 1000, Math.max(0, ctx.deadline - Date.now())));
      }
    },
    ctx.signal,
  );
}
