/**
 * Liveness and readiness, outside `/v1` so probes never touch rate limits or credentials.
 * `/healthz`: the process answers. `/readyz`: each readiness check passes (storage writable,
 * and the ledger reachable once anchoring is wired in); 503 names the checks that failed.
 */
import { Elysia, t } from "elysia";
import { jsonResponse as json } from "../errors.ts";

/** A readiness check resolves to `true`, or to a short reason it is not ready. */
export type ReadinessCheck = () => Promise<true | string> | true | string;

export interface HealthDeps {
  readonly readiness: Readonly<Record<string, ReadinessCheck>>;
}

const Checks = t.Record(t.String(), t.String(), { description: "Each check: `ok`, or why it is not" });

export function healthRoutes(deps: HealthDeps) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => json(200, { status: "ok" }), {
      detail: { tags: ["health"], summary: "Liveness: the process answers" },
      response: { 200: t.Object({ status: t.Literal("ok") }) },
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
            result = e instanceof Error ? e.message : "failed";
          }
          checks[name] = result === true ? "ok" : result;
          if (result !== true) ready = false;
        }
        return ready ? json(200, { status: "ready", checks }) : json(503, { status: "not_ready", checks }, { "retry-after": "5" });
      },
      {
        detail: { tags: ["health"], summary: "Readiness: storage writable and the ledger reachable" },
        response: {
          200: t.Object({ status: t.Literal("ready"), checks: Checks }),
          503: t.Object({ status: t.Literal("not_ready"), checks: Checks }, { description: "Not ready; `checks` names what failed" }),
        },
      },
    );
}
