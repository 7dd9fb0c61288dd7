/**
 * The anchoring bench's verdict on its target "anchoring keeps pace with creation"
 * (scripts/bench/anchor-load.ts, `keepsPace`): enough anchored, backlog flat, and nothing refused
 * inside the measured window.
 */
import { expect, test } from "bun:test";
import { KEEPS_PACE_SHARE, keepsPace } from "../scripts/bench/anchor-load.ts";

test("keeps pace: at least the share anchored, the backlog flat and no 503 in the window; each missing one is a MISS", () => {
  expect(KEEPS_PACE_SHARE).toBe(0.95);
  expect(keepsPace(1000, 950, true, 0)).toEqual({ share: 0.95, verdict: "PASS" });
  expect(keepsPace(1000, 1020, true, 0).verdict).toBe("PASS"); // the window drained what came before it
  expect(keepsPace(1000, 949, true, 0).verdict).toBe("MISS");
  expect(keepsPace(1000, 1000, false, 0).verdict).toBe("MISS");
  expect(keepsPace(1000, 1000, true, 1).verdict).toBe("MISS"); // paced by back-pressure, not keeping pace
  expect(keepsPace(0, 0, true, 0)).toEqual({ share: 0, verdict: "MISS" });
});
