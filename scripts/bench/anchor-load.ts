/**
 * What the anchoring benchmarks share (anchoring.ts, batched-anchoring.ts): an organisation and
 * its key made with the admin command line, a service's first record (which waits for the
 * organisation's topic), record creation from client loops with the backlog sampled every second
 * from the service's database (read-only), the drain after the load, and the topic read back from
 * the ledger's mirror REST.
 *
 * The backlog and the anchored count are the `record_message` rows of `ledger_transactions` by
 * state: a record's message is one such row whether it is sent alone (DOCVERIFY_BATCH_WINDOW_MS=0)
 * or is a leaf of a batch (`batch_leaf` 1: it takes its batch's state, docs/anchoring.md
 * "Batches"), so the same counts serve both: records waiting (`pending`, `accepted`; a leaf of an
 * open batch is `pending`) and records anchored.
 */
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { baseEnv } from "./processes.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
export const MAIN = join(ROOT, "src", "main.ts");

/** A backlog whose second half rises above the first half's maximum by more than this share (and by more than 50 rows) is "growing". */
const FLAT_TOLERANCE = 0.25;
/** Anchored in the window at least this share of what was created in it (the backlog's own swing is the rest). */
export const KEEPS_PACE_SHARE = 0.95;

export type Json = Record<string, any>;

/** `docverify ARGS --json --data DIR` from source; its JSON output. */
export async function admin(args: string[], dataDir: string): Promise<Json> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args, "--json", "--data", dataDir], { env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`docverify ${args.join(" ")} failed (exit ${code}): ${err}${out}`);
  return JSON.parse(out) as Json;
}

/** An organisation (API access, the add-on, validated) and a live key of it, on `dataDir`. */
export async function benchOrganisation(dataDir: string, name: string): Promise<{ orgId: string; key: string }> {
  const org = await admin(["org", "create", "--name", name, "--api-access", "--addon", "--validated"], dataDir);
  const key = String((await admin(["key", "mint", "--org", String(org.id), "--env", "live"], dataDir)).key);
  return { orgId: String(org.id), key };
}

export function docHash(n: number, run: string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(`${run}/${n}`).digest("hex")}`;
}

export const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

export interface Poster {
  /** POST /v1/records with a new hash; the answer, its Retry-After, and the hash sent. */
  post(): Promise<{ status: number; body: Json; retryAfter: number; hash: string }>;
}

/** Creates records for organisation key `key` on `url`, each with a hash never sent before. */
export function poster(url: string, key: string): Poster {
  const run = Bun.randomUUIDv7();
  let counter = 0;
  return {
    async post() {
      const hash = docHash(counter++, run);
      const res = await fetch(`${url}/v1/records`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ originalDocHash: hash }),
      });
      return { status: res.status, body: (await res.json()) as Json, retryAfter: Number(res.headers.get("retry-after") ?? "1"), hash };
    },
  };
}

/** Posts until the first 201 (503 while the service creates the organisation's topic); the topic id and that record's id. */
export async function firstRecord(p: Poster): Promise<{ topicId: string; recordId: string }> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const r = await p.post();
    if (r.status === 201) return { topicId: String(r.body.anchor.topicId), recordId: String(r.body.recordId) };
    if (r.status !== 503) throw new Error(`POST /v1/records answered ${r.status} while waiting for the topic: ${JSON.stringify(r.body)}`);
    if (performance.now() > deadline) throw new Error("the service did not create the organisation's topic within 60 s");
    await Bun.sleep(200);
  }
}

export interface Sample {
  readonly at: number;
  readonly backlog: number;
  readonly anchored: number;
  readonly abandoned: number;
}

/** Reads the service's `docverify.db` read-only: the records' messages by state. */
export function sampler(db: Database): () => Sample {
  const query = db.query("SELECT state, count(*) AS n FROM ledger_transactions WHERE kind = 'record_message' GROUP BY state");
  return () => {
    const rows = query.all() as { state: string; n: number }[];
    const n = (s: string) => rows.find((r) => r.state === s)?.n ?? 0;
    return { at: performance.now(), backlog: n("pending") + n("accepted"), anchored: n("anchored"), abandoned: n("abandoned") };
  };
}

export interface LoadResult {
  readonly windowS: number;
  /** Records acknowledged (201) in the whole load, warm-up included, by id. */
  readonly acknowledged: string[];
  readonly createdInWindow: number;
  readonly anchoredInWindow: number;
  readonly refused503: number;
  readonly refused503InWindow: number;
  readonly errors: number;
  readonly firstError: string | null;
  readonly backlog: { readonly start: number; readonly end: number; readonly max: number; readonly first10Avg: number; readonly last10Avg: number; readonly flat: boolean; readonly samples: number[] };
}

/**
 * `connections` client loops each POST /v1/records back to back; a 503 is the service's
 * back-pressure, and that loop waits its Retry-After, as a client should. `warmupS` of load fill
 * the pipeline, then `seconds` are measured: created (201s) and anchored in the window, and the
 * backlog sampled every second. `say` prints a line every 10 s.
 */
export async function runLoad(options: { poster: Poster; sample: () => Sample; connections: number; warmupS: number; seconds: number; say: (line: string) => void }): Promise<LoadResult> {
  const { poster: p, sample, seconds, say } = options;
  const acknowledged: string[] = [];
  let refused = 0;
  let refusedInWindow = 0;
  let errors = 0;
  let firstError: string | null = null;
  let loading = true;
  let inWindow = false;
  let createdInWindow = 0;
  const loop = async () => {
    while (loading) {
      try {
        const r = await p.post();
        if (r.status === 201) {
          acknowledged.push(String(r.body.recordId));
          if (inWindow) createdInWindow++;
        } else if (r.status === 503) {
          refused++;
          if (inWindow) refusedInWindow++;
          await Bun.sleep(Math.max(1, r.retryAfter) * 1000);
        } else {
          errors++;
          firstError ??= `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
        }
      } catch (e) {
        errors++;
        firstError ??= (e as Error).message;
        await Bun.sleep(100);
      }
    }
  };
  const loops = Array.from({ length: options.connections }, loop);
  await Bun.sleep(options.warmupS * 1000);
  const start = sample();
  inWindow = true;
  const samples = [start];
  for (let i = 1; i <= seconds; i++) {
    await Bun.sleep(Math.max(0, start.at + i * 1000 - performance.now()));
    samples.push(sample());
    if (i % 10 === 0 || i === seconds) {
      const s = samples.at(-1)!;
      say(`  ${String(i).padStart(3)} s  created ${createdInWindow}  anchored ${s.anchored - start.anchored}  backlog ${s.backlog}${refused > 0 ? `  503s ${refused}` : ""}`);
    }
  }
  inWindow = false;
  const end = samples.at(-1)!;
  loading = false;
  await Promise.all(loops);
  const windowS = (end.at - start.at) / 1000;

  const backlogs = samples.map((s) => s.backlog);
  // The first and last 10 s; in a short run the first and last third, so the two never overlap.
  const edge = Math.max(1, Math.min(10, Math.floor(backlogs.length / 3)));
  // Flat means bounded, not constant: the service's back-pressure lets the backlog swing between
  // empty and about ten seconds of anchoring. It is growing when the second half of the window
  // reaches clearly higher than the first half did (a backlog that climbs without bound).
  const half = Math.floor(backlogs.length / 2);
  const firstHalfMax = Math.max(0, ...backlogs.slice(0, half));
  const secondHalfMax = Math.max(0, ...backlogs.slice(half));
  const flat = secondHalfMax <= firstHalfMax * (1 + FLAT_TOLERANCE) + 50;
  return {
    windowS,
    acknowledged,
    createdInWindow,
    anchoredInWindow: end.anchored - start.anchored,
    refused503: refused,
    refused503InWindow: refusedInWindow,
    errors,
    firstError,
    backlog: { start: start.backlog, end: end.backlog, max: Math.max(...backlogs), first10Avg: mean(backlogs.slice(0, edge)), last10Avg: mean(backlogs.slice(-edge)), flat, samples: backlogs },
  };
}

/**
 * Waits until a record is anchored (the service's first): its key announcement, which every batch
 * of its records waits for, is then on the ledger, so the load that follows does not start by
 * piling up behind the announcement's consensus (a backlog the measured window would then drain,
 * counting the warm-up's records as its own).
 */
export async function firstAnchored(sample: () => Sample, timeoutS: number): Promise<void> {
  const started = performance.now();
  while (sample().anchored === 0) {
    if (performance.now() - started > timeoutS * 1000) throw new Error(`the organisation's first record was not anchored within ${timeoutS} s`);
    await Bun.sleep(100);
  }
}

/** Seconds until the backlog is empty, or null when it is not within `timeoutS`. */
export async function drain(sample: () => Sample, timeoutS: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < timeoutS * 1000) {
    if (sample().backlog === 0) return (performance.now() - started) / 1000;
    await Bun.sleep(250);
  }
  return null;
}

/** The target "anchoring keeps pace with creation": enough anchored, the backlog flat, nothing refused (503) in the window. */
export function keepsPace(created: number, anchored: number, flat: boolean, refusedInWindow: number): { readonly share: number; readonly verdict: "PASS" | "MISS" } {
  const share = created === 0 ? 0 : anchored / created;
  return { share, verdict: share >= KEEPS_PACE_SHARE && flat && refusedInWindow === 0 ? "PASS" : "MISS" };
}

export interface TopicMessage {
  readonly sequenceNumber: number;
  readonly consensusAt: string;
  readonly bytes: Uint8Array;
}

/** Every message on `topicId`, in order, through the mirror REST at `mirrorUrl` (every page). */
export async function topicMessages(mirrorUrl: string, topicId: string): Promise<TopicMessage[]> {
  const out: TopicMessage[] = [];
  let next: string | null = `/api/v1/topics/${topicId}/messages?limit=100&order=asc`;
  while (next !== null) {
    const res = await fetch(mirrorUrl + next);
    if (res.status !== 200) throw new Error(`mirror ${next} answered ${res.status}`);
    const page = (await res.json()) as { messages: { sequence_number: number; consensus_timestamp: string; message: string }[]; links: { next: string | null } };
    for (const m of page.messages) out.push({ sequenceNumber: m.sequence_number, consensusAt: m.consensus_timestamp, bytes: new Uint8Array(Buffer.from(m.message, "base64")) });
    next = page.links.next;
  }
  return out;
}

/** The last 3,000 characters of a log file, for an error message. */
export function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").slice(-3000);
  } catch {
    return "";
  }
}
