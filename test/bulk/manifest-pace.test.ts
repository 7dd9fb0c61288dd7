/**
 * The pieces of the bulk commands whose rules are easiest to state alone: the manifest (what a
 * resume believes, whatever a kill left), the pace every request of a run waits on, and the
 * progress line's fit to the terminal.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManifestIndex, ManifestWriter, readManifest, type ManifestLine } from "../../src/bulk/manifest.ts";
import { Reporter } from "../../src/bulk/output.ts";
import { Pace } from "../../src/bulk/pool.ts";
import { cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

const at = "2026-12-02T10:00:00.000Z";
const hash = (n: number) => `sha256:${String(n).padStart(64, "0")}`;
const line = (path: string, n: number, state: ManifestLine["state"], recordId?: string): ManifestLine => ({ path, hash: hash(n), state, at, ...(recordId === undefined ? {} : { recordId }) });

describe("the manifest", () => {
  test("a torn last line is skipped by the reader and closed off by the next writer; a missing file is an empty manifest", () => {
    const file = join(tempDir(), "m.jsonl");
    expect(readManifest(file)).toEqual([]);
    const w = new ManifestWriter(file);
    w.append(line("a", 1, "created", "r1"));
    w.close();
    appendFileSync(file, '{"path":"b","ha');
    expect(readManifest(file).map((l) => l.path)).toEqual(["a"]);
    const again = new ManifestWriter(file);
    again.append(line("c", 3, "created", "r3"));
    again.close();
    expect(readManifest(file).map((l) => l.path)).toEqual(["a", "c"]);
    expect(readFileSync(file, "utf8").split("\n")).toEqual([expect.stringContaining('"path":"a"'), '{"path":"b","ha', expect.stringContaining('"path":"c"'), ""]);
  });

  test("nothing is written, not even an empty file, before the first line", () => {
    const dir = tempDir();
    new ManifestWriter(join(dir, "m.jsonl")).close();
    expect(() => readFileSync(join(dir, "m.jsonl"))).toThrow();
  });

  test("lines that are not the manifest's are ignored: other JSON, unknown states, no path", () => {
    const file = join(tempDir(), "m.jsonl");
    writeFileSync(file, ['{"path":"a","state":"created","recordId":"r1"}', "[1,2]", '{"path":"b","state":"lost"}', '{"state":"created"}', "null", ""].join("\n"));
    expect(readManifest(file).map((l) => l.path)).toEqual(["a"]);
  });

  test("the index: a file is held by its path and hash, while its record is not revoked; each record once, with its latest state", () => {
    const index = new ManifestIndex([
      line("a", 1, "created", "r1"),
      line("a", 1, "anchored", "r1"),
      line("b", 2, "failed"),
      line("c", 3, "created", "r3"),
      line("c", 3, "revoked", "r3"),
      line("d", 4, "existing", "r4"),
      line("d", 5, "created", "r5"),
    ]);
    expect(index.held("a", hash(1))).toMatchObject({ recordId: "r1", state: "anchored" });
    // Same path, other content: not held; other path, same content: not held (the service answers 200).
    expect(index.held("a", hash(9))).toBeUndefined();
    expect(index.held("z", hash(1))).toBeUndefined();
    expect(index.held("b", hash(2))).toBeUndefined();
    expect(index.held("c", hash(3))).toBeUndefined();
    expect(index.held("d", hash(4))).toMatchObject({ recordId: "r4" });
    expect(index.held("d", hash(5))).toMatchObject({ recordId: "r5" });
    expect(index.records().map((l) => [l.recordId, l.state])).toEqual([
      ["r1", "anchored"],
      ["r3", "revoked"],
      ["r4", "existing"],
      ["r5", "created"],
    ]);
  });
});

describe("the pace", () => {
  test("a 429 holds every request until its Retry-After; a 503's Retry-After too", async () => {
    for (const status of [429, 503]) {
      const pace = new Pace(8);
      pace.observe({ status, retryAfterSeconds: 1 });
      const start = performance.now();
      await Promise.all([pace.ready(), pace.ready(), pace.ready()]);
      expect(performance.now() - start).toBeGreaterThanOrEqual(990);
      expect([pace.rateLimited, pace.unavailable]).toEqual(status === 429 ? [1, 0] : [0, 1]);
    }
  });

  test("with the bucket empty, requests are spaced at its refill rate; with room again, not at all", async () => {
    const pace = new Pace(4);
    // 6,000 a minute: one token every 10 ms.
    pace.observe({ status: 201, rateLimitLimit: 6_000, rateLimitRemaining: 0 });
    const start = performance.now();
    for (let i = 0; i < 6; i++) await pace.ready();
    expect(performance.now() - start).toBeGreaterThanOrEqual(49);
    pace.observe({ status: 201, rateLimitLimit: 6_000, rateLimitRemaining: 100 });
    await pace.ready();
    const free = performance.now();
    for (let i = 0; i < 6; i++) await pace.ready();
    expect(performance.now() - free).toBeLessThan(49);
  });
});

describe("the progress line", () => {
  test("is cut to the terminal's width (a wrapped line cannot be redrawn in place), then ended with a newline", () => {
    const written: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => void written.push(t), stderrIsTTY: true, columns: 30, env: {} };
    const reporter = new Reporter(io, "authenticate", false, false, () => "hashed 1200/2000 · created 1150 · already 40 · failed 2");
    reporter.progress.update();
    reporter.finish({}, "");
    expect(written).toEqual(["\rhashed 1200/2000 · created 1…\x1b[K", "\rhashed 1200/2000 · created 1…\x1b[K", "\n"]);
    expect(written[0]!.length - "\r\x1b[K".length).toBeLessThan(30);
  });
});
