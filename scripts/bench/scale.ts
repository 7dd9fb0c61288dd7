/**
 * The scale part of `npm run bench` (docs/benchmarks.md "The 10,000,000-record dataset"): the
 * compiled binary on the cached 10,000,000-record dataset (scale-dataset.ts), public verification
 * and the log's first and 1,000,000-rows-deep pages.
 *
 * Served in place, not copied: a copy would be another 17 GB of disk and about 40 s per run. The
 * run's own data folder gets a hard link to the cached database file (its own master key copy,
 * lock file, embedded ledger and SQLite side files, since SQLite names the -wal and -shm after
 * the path it opened), and the scenarios only read: public verification writes nothing, and
 * the log key's last use is set ahead in the cache (scale-dataset.ts), so authenticating with it
 * writes nothing either. That is checked, not assumed: in WAL mode every change reaches the
 * database file only through the WAL, so the run's WAL must still be empty when the load ends,
 * and the cached file's size and modification time must be unchanged after the server stopped.
 * If either is not so, the run is BROKEN and the cache is dropped (rebuilt by the next run). When
 * a hard link is impossible (the work folder on another file system) the file is copied instead,
 * and the copy's time printed.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { encodeCursor } from "../../src/verification/log/cursor.ts";
import type { Server } from "./processes.ts";
import { freeBytes, type ScaleDataset } from "./scale-dataset.ts";
import { scaleScenarios, type Scenario } from "./scenarios.ts";

export interface ScaleServing {
  /** "in place": a hard link to the cached file; "copy": copied (cross-device work folder). */
  readonly served: "in place" | "copy";
  readonly copySeconds: number | null;
  /** The deep page's cursor, its row and the first page's row, as the API answered them. */
  readonly firstPageFirstId: string;
  readonly deepPageFirstId: string;
  /** The WAL was empty after the load, and the cached file's size and mtime unchanged. */
  readonly cacheUnchanged: boolean;
  /** The first and the deep page measured in alternation (bench.ts `alternate`), when asked for. */
  readonly pagePair: PagePair | null;
}

/** Two scenarios measured in turn, several rounds, on one server: their ratio is the median of the rounds'. */
export interface PagePair {
  readonly firstPerSecond: readonly number[];
  readonly deepPerSecond: readonly number[];
  /** Median over the rounds of deep / first. */
  readonly ratio: number;
}

/**
 * The cursor after `data.depth` rows of organisation 0's live log, as the service would issue it:
 * encodeCursor (src/verification/log/cursor.ts) over the folder's cursor key, which createApp keeps in
 * service_meta as hex (src/app/compose.ts).
 */
export function deepCursor(dbFile: string, data: Pick<ScaleDataset, "deepAfterId" | "logOrgId">): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    const row = db.query<{ value: string }, []>("SELECT value FROM service_meta WHERE key = 'cursor_key'").get();
    if (row === null) throw new Error(`${dbFile} has no cursor key`);
    return encodeCursor(Buffer.from(row.value, "hex"), data.deepAfterId, { orgId: data.logOrgId, environment: "live", filters: {} });
  } finally {
    db.close();
  }
}

interface FileState {
  readonly size: number;
  readonly mtimeMs: number;
}

function stateOf(file: string): FileState {
  const s = statSync(file);
  return { size: s.size, mtimeMs: s.mtimeMs };
}

/** The first row of a log page, after checking that the API answered 200 with rows. */
async function firstRowOf(server: Server, key: string, query: string): Promise<string> {
  const response = await fetch(`${server.url}/v1/verifications${query}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /v1/verifications${query.slice(0, 20)}… answered ${response.status}: ${text.slice(0, 300)}`);
  const first = (JSON.parse(text) as { data?: { verificationId?: string }[] }).data?.[0]?.verificationId;
  if (first === undefined) throw new Error(`GET /v1/verifications${query.slice(0, 20)}… answered a page without rows`);
  return first;
}

export interface ScaleRunOptions {
  readonly data: ScaleDataset;
  /** The run's folder for this part (its data folder is made inside). */
  readonly dir: string;
  readonly start: (dataDir: string) => Promise<Server>;
  /** Measures the scenarios against the server (bench.ts's loop, floor included). */
  readonly run: (list: readonly Scenario[], server: Server) => Promise<void>;
  readonly stop: (server: Server) => Promise<void>;
  readonly say: (line: string) => void;
  /** Measures the first and the deep page in alternation (bench.ts), after the scenarios. */
  readonly alternate?: (first: Scenario, deep: Scenario, server: Server) => Promise<PagePair>;
}

export async function runScale(options: ScaleRunOptions): Promise<ScaleServing> {
  const { data, dir, say } = options;
  const cached = join(data.dir, "docverify.db");
  const dataDir = join(dir, "data");
  const served = join(dataDir, "docverify.db");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Nothing may be pending beside the cached file: a WAL with frames there would be a write.
  if (existsSync(`${cached}-wal`) && statSync(`${cached}-wal`).size > 0) throw new Error(`${cached}-wal is not empty: something wrote to the cached scale dataset`);
  const before = stateOf(cached);
  let how: ScaleServing["served"] = "in place";
  let copySeconds: number | null = null;
  try {
    linkSync(cached, served);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
    if (freeBytes(dir) < before.size + 5e9) throw new Error(`the work folder is on another file system and has no room for a copy of the scale dataset (${(before.size / 1e9).toFixed(1)} GB)`);
    const started = performance.now();
    copyFileSync(cached, served);
    copySeconds = (performance.now() - started) / 1000;
    how = "copy";
  }
  copyFileSync(join(data.dir, "master.key"), join(dataDir, "master.key"));
  say(how === "in place" ? "served in place (a hard link to the cached file; checked below that nothing writes to it)" : `copied the scale dataset in ${copySeconds!.toFixed(1)} s`);

  let cacheUnchanged = false;
  try {
    const cursor = deepCursor(served, data);
    const server = await options.start(dataDir);
    let walEmpty = false;
    let firstPageFirstId: string;
    let deepPageFirstId: string;
    let pagePair: PagePair | null = null;
    try {
      // The API accepts the computed cursor, and both pages start where the dataset says.
      firstPageFirstId = await firstRowOf(server, data.logKey, "");
      deepPageFirstId = await firstRowOf(server, data.logKey, `?after=${cursor}`);
      if (firstPageFirstId !== data.firstId) throw new Error(`the log's first page starts at ${firstPageFirstId}, not at the newest row ${data.firstId}`);
      if (deepPageFirstId !== data.deepFirstId) {
        throw new Error(`the page after the computed cursor starts at ${deepPageFirstId}, not at row ${(data.spec.depth + 1).toLocaleString("en-US")} (${data.deepFirstId})`);
      }
      say(
        `deep cursor (encodeCursor over the folder's cursor key): GET /v1/verifications?after=… answered 200, first row ${deepPageFirstId} = row ` +
          `${(data.spec.depth + 1).toLocaleString("en-US")} of organisation 0's live log, as expected`,
      );
      const scenarios = scaleScenarios(data, cursor);
      await options.run(scenarios, server);
      const first = scenarios.find((sc) => sc.name === "log-first-page-10m");
      const deep = scenarios.find((sc) => sc.name === "log-page-1m-deep");
      pagePair = options.alternate !== undefined && first !== undefined && deep !== undefined ? await options.alternate(first, deep, server) : null;
      walEmpty = !existsSync(`${served}-wal`) || statSync(`${served}-wal`).size === 0;
    } finally {
      await options.stop(server);
    }
    const after = stateOf(cached);
    cacheUnchanged = walEmpty && after.size === before.size && after.mtimeMs === before.mtimeMs;
    if (!cacheUnchanged) {
      // Not as built any more: the next run builds it again.
      if (how === "in place") renameSync(join(data.dir, "manifest.json"), join(data.dir, "manifest.json.written-to"));
      throw new Error(
        `the scale server wrote to ${how === "in place" ? "the cached dataset" : "its copy"} (WAL ${walEmpty ? "empty" : "not empty"}, ` +
          `size ${before.size} → ${after.size}, mtime ${before.mtimeMs} → ${after.mtimeMs})${how === "in place" ? "; the cache is dropped and will be rebuilt" : ""}`,
      );
    }
    say("after the load: the WAL was empty and the cached file's size and modification time are unchanged: nothing was written to it");
    return { served: how, copySeconds, firstPageFirstId, deepPageFirstId, cacheUnchanged, pagePair };
  } finally {
    // The link (or copy), the ledger, lock and side files; the cached file stays.
    rmSync(dataDir, { recursive: true, force: true });
  }
}
