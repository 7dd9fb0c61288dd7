/**
 * What `npm run bench` loads. Each scenario is sent with identical wrk settings to docverify
 * and to the floor server (a bare Bun.serve), so the ratio between the two shows what the
 * service's own code costs on top of the runtime. Add a scenario here when a route lands.
 */
import type { Dataset } from "./dataset.ts";
import type { ScaleDataset } from "./scale-dataset.ts";

/** Which docverify process a scenario loads (see docs/benchmarks.md). */
export type Target =
  /** The compiled binary on a fresh, empty data folder. */
  | "empty"
  /** The compiled binary on a copy of the 1,000,000-record dataset. */
  | "million"
  /** The same data, served from source by scripts/bench/app-server.ts with the signature memo off. */
  | "million-memo-off"
  /** The same data, served from source by scripts/bench/app-server.ts with record creation not paced to the ledger. */
  | "million-unpaced"
  /** The compiled binary on the 10,000,000-record scale dataset, served in place. */
  | "scale"
  /** Three compiled binaries, `serve` on one PostgreSQL database (`--postgres`'s failover, postgres-run.ts). */
  | "cluster";

export interface Scenario {
  /** Short identifier, used in the printed table and the --json output. */
  readonly name: string;
  readonly target: Target;
  readonly method: string;
  /** Path and query, as sent to both servers. */
  readonly path: string;
  /** Request body, sent with every request (wrk adds Content-Length). */
  readonly body?: string;
  /** Bodies sent in turn, each wrk thread starting at its own offset. */
  readonly bodies?: readonly string[];
  /** Paths (with query) requested in turn, like `bodies`; `path` is then only the first request's. */
  readonly paths?: readonly string[];
  /**
   * A body in which `{{hash}}` becomes a DocHash never sent before (a per-run random prefix,
   * the wrk thread and a counter), for operations that must not repeat.
   */
  readonly freshHashBody?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Open connections kept by wrk. */
  readonly connections: number;
  /** Seconds of measured load in a full run, after the warm-up; `--quick` shortens it. */
  readonly duration: number;
  /** Lowest acceptable docverify/floor ratio of requests per second, where a target sets one. */
  readonly floorRatioTarget?: number;
  /** Highest acceptable docverify p99 latency, where a target sets one. */
  readonly p99TargetMs?: number;
  /** Lowest acceptable docverify requests per second, where a target is an absolute figure. */
  readonly minRequestsPerSecond?: number;
  /** The check request before the load retries a 503 for up to 30 s (a service still setting up). */
  readonly preflightRetryOn503?: boolean;
}

/** The verification scenarios cycle through this many real records (see docs/benchmarks.md). */
export const HOT_SET = 1_000;
/** How deep the deep log page is. */
export const LOG_DEPTH = 10_000;

export const EMPTY_SCENARIOS: readonly Scenario[] = [
  {
    name: "healthz",
    target: "empty",
    method: "GET",
    path: "/healthz",
    connections: 50,
    duration: 10,
  },
];

/**
 * HOT_SET values spread evenly over `values` (the real records, in id order): a hot set over the
 * whole table and year, small enough for the signature memo to hold (2 entries per record),
 * large enough not to be one cached row.
 */
export function hotSet<T>(values: readonly T[]): T[] {
  return values.filter((_, i) => i % Math.floor(values.length / HOT_SET) === 0).slice(0, HOT_SET);
}

/**
 * The scenarios on the 1,000,000-record dataset. `deepCursor` is the log cursor after
 * LOG_DEPTH rows of organisation 0's live log, obtained by paging before the load.
 */
export function millionScenarios(data: Dataset, deepCursor: string): Scenario[] {
  // Every tenth real record (hotSet).
  const hot = hotSet(data.realHashes);
  const verifyBodies = hot.map((h) => JSON.stringify({ originalDocHash: h }));
  const hotIds = hotSet(data.realIds);
  const orgVerifyBodies = hot.map((h, i) => JSON.stringify({ originalDocHash: h, reference: `bench-${i}` }));
  const json = { "content-type": "application/json" };
  const logAuth = { authorization: `Bearer ${data.logKey}` };
  return [
    {
      name: "log-first-page",
      target: "million",
      method: "GET",
      path: "/v1/verifications",
      headers: logAuth,
      connections: 50,
      duration: 5,
    },
    {
      name: "log-page-10k-deep",
      target: "million",
      method: "GET",
      path: `/v1/verifications?after=${deepCursor}`,
      headers: logAuth,
      connections: 50,
      duration: 5,
    },
    {
      name: "verify-public",
      target: "million",
      method: "POST",
      path: "/v1/verifications",
      bodies: verifyBodies,
      headers: json,
      connections: 50,
      duration: 10,
      floorRatioTarget: 0.25,
      p99TargetMs: 5,
    },
    {
      name: "verify-organisation",
      target: "million",
      method: "POST",
      path: "/v1/verifications",
      bodies: orgVerifyBodies,
      headers: { ...json, ...logAuth },
      connections: 50,
      duration: 10,
      floorRatioTarget: 0.15,
    },
    {
      name: "records-create",
      // Not paced to the ledger: this measures the creation path (sign, seal, durable write).
      // Through the product, sustained creation runs at the anchoring rate (the anchoring bench).
      target: "million-unpaced",
      method: "POST",
      path: "/v1/records",
      freshHashBody: '{"originalDocHash":"{{hash}}","filename":"bench.pdf"}',
      headers: { ...json, authorization: `Bearer ${data.recordsKey}` },
      connections: 50,
      duration: 10,
      // The organisation's topic is created on the embedded ledger when the service starts.
      preflightRetryOn503: true,
    },
    {
      // The public receipt (docs/receipts.md §2), for the same hot set of records: every
      // request reads the record, its keys, its ledger rows and the announcement, and encodes
      // about 14 KB of JSON. Target: at least half the public verification rate (compare()).
      name: "receipt-public",
      target: "million",
      method: "GET",
      path: `/verify/${hotIds[0]}/receipt`,
      paths: hotIds.map((id) => `/verify/${id}/receipt`),
      connections: 50,
      duration: 10,
    },
    {
      name: "verify-public-memo-off",
      target: "million-memo-off",
      method: "POST",
      path: "/v1/verifications",
      bodies: verifyBodies,
      headers: json,
      connections: 50,
      duration: 10,
      minRequestsPerSecond: 5_000,
    },
  ];
}

/**
 * The scale scenarios on the 10,000,000-record dataset: public verification as
 * `verify-public` (its p99 compared with that scenario's), and organisation 0's log, first page
 * and `depth` (1,000,000) rows deep (compared with each other). `deepCursor` is made from the
 * folder's cursor key (scale.ts), not by paging a million rows.
 */
export function scaleScenarios(data: ScaleDataset, deepCursor: string): Scenario[] {
  const logAuth = { authorization: `Bearer ${data.logKey}` };
  return [
    {
      name: "verify-public-10m",
      target: "scale",
      method: "POST",
      path: "/v1/verifications",
      bodies: hotSet(data.realHashes).map((h) => JSON.stringify({ originalDocHash: h })),
      headers: { "content-type": "application/json" },
      connections: 50,
      duration: 10,
    },
    {
      name: "log-first-page-10m",
      target: "scale",
      method: "GET",
      path: "/v1/verifications",
      headers: logAuth,
      connections: 50,
      duration: 5,
    },
    {
      name: "log-page-1m-deep",
      target: "scale",
      method: "GET",
      path: `/v1/verifications?after=${deepCursor}`,
      headers: logAuth,
      connections: 50,
      duration: 5,
    },
  ];
}
