/**
 * The one request a scenario sends before its load (scripts/bench.ts and `--postgres` alike), so
 * that a scenario that gets errors fails at once with the server's answer.
 */
import type { Server } from "./processes.ts";
import type { Scenario } from "./scenarios.ts";
import { HASH_SLOT } from "./wrk.ts";

/** A body for the one request before the load: the first of `bodies`, or a fresh hash. */
function preflightBody(scenario: Scenario): string | undefined {
  if (scenario.bodies !== undefined) return scenario.bodies[0];
  if (scenario.freshHashBody !== undefined) {
    const hash = `sha256:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    return scenario.freshHashBody.replace(HASH_SLOT, hash);
  }
  return scenario.body;
}

/** One request before the load, so a scenario that gets errors fails at once with the reason. */
export async function preflight(server: Pick<Server, "url">, scenario: Scenario): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const response = await fetch(server.url + scenario.path, { method: scenario.method, headers: scenario.headers, body: preflightBody(scenario) });
    const text = await response.text();
    if (response.status >= 200 && response.status <= 299) return;
    if (response.status === 503 && scenario.preflightRetryOn503 === true && performance.now() < deadline) {
      await Bun.sleep(250);
      continue;
    }
    throw new Error(`${scenario.method} ${server.url}${scenario.path} answered ${response.status} before the load: ${text.slice(0, 500)}`);
  }
}

