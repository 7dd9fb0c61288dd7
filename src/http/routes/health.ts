/**
 * Liveness and readiness, outside `/v1` so probes never touch rate limits or credentials.
 * `/healthz`: the process answers. `/readyz`: each readiness check passes (storage writable,
 * and the ledger reachable once anchoring is wired in); 503 names the checks that failed.
 */
import { Elysia, t } from "elysia";
import type { Logger } from "../../lib/log.ts";
import { jsonResponse as json } from "../errors.ts";

/**
 * A readiness check resolves to `true`, or to why it is not ready: a short reason that anyone
 * may read (`ledger starting`), optionally followed by `: ` and the detail (an error message
 * naming hosts, ports, files), which goes to the log only. A check that throws is `failed`.
 */
export type ReadinessCheck = () => Promise<true | string> | true | string;

export interface HealthDeps {
  readonly readiness: Readonly<Record<string, ReadinessCheck>>;
  readonly log: Logger;
}

/** The public part of a readiness reason: `/readyz` answers anonymous callers. */
export function publicReason(reason: string): string {
  const colon = reason.indexOf(":");
  return colon < 0 ? reason : reason.slice(0, colon);
}

const Checks = t.Record(t.String(), t.String(), { description: "Each check: `ok`, or why it is not" });

export function healthRoutes(deps: HealthDeps) {
  // The last reason logged per check: a probe every second logs a failure once, and its end.
  const logged = new Map<string, string>();
  function note(name: string, result: true | string): void {
    const before = logged.get(name);
    if (result === true) {
      if (before !== undefined) deps.log.info("readiness check passes again", { check: name });
      logged.delete(name);
    } else if (before !== result) {
      deps.log.warn("readiness check fails", { check: name, reason: result });
      logged.set(name, result);
    }
  }
  return new Elysia({ name: "health" })
    .get("/healthz", () => json(200, { status: "ok" }), {
      detail: { tags: ["Service"], operationId: "getHealth", summary: "Liveness: the process answers" },
      response: { 200: t.Object({ status: t.Literal("ok") }, { title: "Health", description: "The process answers" }) },
    })
    .get(
      "/readyz",
      async () => {
        const checks: Record<string, string> = {};
        let ready = true;
        for (const [name, check] of Object.entries(deps.readiness)) {
          let result: true | string;
          try {
            result = await check();
          } catch (e) {
            result = `failed: ${e instanceof Error ? e.message : String(e)}`;
          }
          note(name, result);
          checks[name] = result === true ? "ok" : publicReason(result);
          if (result !== true) ready = false;
        }
        return ready ? json(200, { status: "ready", checks }) : json(503, { status: "not_ready", checks }, { "retry-after": "5" });
      },
      {
        detail: { tags: ["Service"], operationId: "getReadiness", summary: "Readiness: storage writable and the ledger reachable" },
        response: {
          200: t.Object({ status: t.Literal("ready"), checks: Checks }, { title: "Ready", description: "Every check passes" }),
          503: t.Object({ status: t.Literal("not_ready"), checks: Checks }, { title: "NotReady", description: "Not ready; `checks` names what failed (with `Retry-After`)" }),
        },
      },
    );
}
