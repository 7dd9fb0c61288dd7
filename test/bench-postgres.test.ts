/**
 * `npm run bench -- --postgres` (scripts/bench/postgres-run.ts): its flag and its plan,
 * checked without running a bench.
 */
import { describe, expect, test } from "bun:test";
import { parseBenchArgs } from "../scripts/bench/args.ts";
import { datasetCacheName, MILLION, type Dataset } from "../scripts/bench/dataset.ts";
import { ENGINES, FAILOVER, POSTGRES_DATASET, POSTGRES_SCENARIOS, postgresPlan } from "../scripts/bench/postgres-run.ts";
import { millionScenarios } from "../scripts/bench/scenarios.ts";

describe("bench: the --postgres flag", () => {
  test("the default run is what it was: no flag gives neither --postgres nor --scale-only", () => {
    expect(parseBenchArgs([])).toEqual({ quick: false, scaleOnly: false, postgres: false, json: null, help: false });
    expect(parseBenchArgs(["--quick", "--json", "out.json"])).toEqual({ quick: true, scaleOnly: false, postgres: false, json: "out.json", help: false });
  });

  test("--postgres, alone or with --quick and --json", () => {
    expect(parseBenchArgs(["--postgres"]).postgres).toBe(true);
    expect(parseBenchArgs(["--postgres", "--quick", "--json", "pg.json"])).toEqual({ quick: true, scaleOnly: false, postgres: true, json: "pg.json", help: false });
  });

  test("--postgres with --scale-only, and unknown flags, are refused with the reason", () => {
    expect(() => parseBenchArgs(["--postgres", "--scale-only"])).toThrow("--postgres and --scale-only");
    expect(() => parseBenchArgs(["--postgre"])).toThrow();
    expect(() => parseBenchArgs(["postgres"])).toThrow();
  });
});

describe("bench: the --postgres plan", () => {
  const realHashes = Array.from({ length: 1_000 }, (_, i) => `sha256:${i.toString(16).padStart(64, "0")}`);
  const data: Dataset = {
    dir: "/nowhere",
    realHashes,
    realIds: realHashes.map((_, i) => `0190b3a2-0000-7000-8000-${i.toString(16).padStart(12, "0")}`),
    logKey: "dv_live_log",
    recordsKey: "dv_live_records",
    recordCount: POSTGRES_DATASET.records,
    logRowsOfOrg0: 6_000,
    leavesPerBatch: 256,
  };

  test("public verification, the organisation tier and record creation, each on SQLite then PostgreSQL", () => {
    const plan = postgresPlan(data);
    expect(plan.map((p) => p.scenario.name)).toEqual([...POSTGRES_SCENARIOS]);
    expect(POSTGRES_SCENARIOS).toEqual(["verify-public", "verify-organisation", "records-create"]);
    for (const p of plan) expect(p.engines).toEqual(["sqlite", "postgres"]);
    expect(ENGINES).toEqual(["sqlite", "postgres"]);
  });

  test("the default run's scenarios, unchanged: verification on serve, record creation (every 201 durable) unpaced", () => {
    const plan = postgresPlan(data);
    const defaults = millionScenarios(data, "");
    for (const p of plan) expect(p.scenario).toEqual(defaults.find((s) => s.name === p.scenario.name)!);
    expect(plan.map((p) => p.server)).toEqual(["serve", "serve", "unpaced"]);
    const org = plan.find((p) => p.scenario.name === "verify-organisation")!.scenario;
    expect(org.headers?.authorization).toBe(`Bearer ${data.logKey}`);
    const create = plan.find((p) => p.scenario.name === "records-create")!.scenario;
    expect(create.headers?.authorization).toBe(`Bearer ${data.recordsKey}`);
  });

  test("one dataset for both engines, a tenth of the default run's, cached under a name of its own", () => {
    expect(POSTGRES_DATASET).toEqual({ records: 100_000, logRows: 20_000 });
    expect(datasetCacheName(MILLION, "abc")).toBe("records-1m-g3-schema-abc");
    expect(datasetCacheName(POSTGRES_DATASET, "abc")).toBe("records-100000r-20000l-g3-schema-abc");
  });

  test("failover: three nodes, the leader killed well inside the load", () => {
    expect(FAILOVER.nodes).toBe(3);
    expect(FAILOVER.killAfterS).toBeLessThan(FAILOVER.quickLoadS);
    expect(FAILOVER.quickLoadS).toBeLessThanOrEqual(FAILOVER.loadS);
  });
});
