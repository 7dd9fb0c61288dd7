/**
 * A loopback stand-in for the service that answers from a script, to drive the client's retry
 * rules at the wire: each request is recorded (method, path, Authorization, arrival time) and
 * answered by the script, which sees how many requests came before.
 */
import { onCleanup } from "../support/env.ts";

export interface Seen {
  method: string;
  path: string;
  authorization: string | null;
  at: number;
}

export interface FakeService {
  url: string;
  seen: Seen[];
}

export function fakeService(answer: (n: number, seen: Seen) => Response | Promise<Response>): FakeService {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const s: Seen = { method: req.method, path: new URL(req.url).pathname, authorization: req.headers.get("authorization"), at: performance.now() };
      seen.push(s);
      return answer(seen.length, s);
    },
  });
  onCleanup(() => server.stop(true));
  return { url: `http://127.0.0.1:${server.port}`, seen };
}

/** The service's error envelope with its status and headers. */
export function envelope(status: number, code: string, headers: Record<string, string> = {}, details?: Record<string, string>): Response {
  return Response.json({ error: { code, message: `${code} (fake)`, ...(details === undefined ? {} : { details }) } }, { status, headers: { "x-request-id": "req-" + status, ...headers } });
}

export const HASH = "sha256:" + "f0".repeat(32);

export const RECORD = {
  recordId: "01a23557-8d10-70d7-8ec9-ae84ea560d57",
  originalDocHash: HASH,
  authenticatedAt: "2026-12-02T06:00:59.921Z",
  anchorState: "pending",
  verifyUrl: "http://127.0.0.1/verify/01a23557-8d10-70d7-8ec9-ae84ea560d57",
  anchor: { topicId: "0.0.1001", transactionId: "0.0.2@1796191259.948000000", hashscanUrl: "http://127.0.0.1/transaction/0.0.2-1796191259-948000000" },
  retryAfterSeconds: 1,
};

export function verification(verdict: string, retryAfterSeconds?: number): Response {
  return Response.json({
    verdict,
    disclosureTier: "organisation",
    assuranceLevel: "docverify.registry.v1",
    mode: "partial",
    environment: "live",
    originalDocHash: HASH,
    verifiedAt: new Date().toISOString(),
    matches: [],
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}
