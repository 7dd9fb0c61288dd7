/**
 * What `npm run bench` loads. Each scenario is sent with identical wrk settings to docverify
 * and to the floor server (a bare Bun.serve), so the ratio between the two shows what the
 * service's own code costs on top of the runtime. Add a scenario here when a route lands.
 */
export interface Scenario {
  /** Short identifier, used in the printed table and the --json output. */
  readonly name: string;
  readonly method: string;
  /** Path and query, as sent to both servers. */
  readonly path: string;
  /** Request body, sent with every request (wrk adds Content-Length). */
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Open connections kept by wrk. */
  readonly connections: number;
  /** Seconds of measured load in a full run, after the warm-up; `--quick` shortens it. */
  readonly duration: number;
  /** Lowest acceptable docverify/floor ratio of requests per second, where an issue set one. */
  readonly floorRatioTarget?: number;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "healthz",
    method: "GET",
    path: "/healthz",
    connections: 50,
    duration: 10,
  },
];
