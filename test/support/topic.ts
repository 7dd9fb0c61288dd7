/**
 * The first record of an organisation, against a running service. The service creates an
 * organisation's ledger topic on its own once the add-on is on; until the topic exists, POST
 * /v1/records answers 503 with Retry-After and writes nothing (docs/records.md §1).
 */
import { expect } from "bun:test";
import { waitFor } from "./wait.ts";

/** An answer from any transport: fetch's Response, raw-http's RawReply, or a test's own wrapper. */
export interface CreateAnswer {
  readonly status: number | null;
  readonly headers: { get(name: string): string | null | undefined };
}

/**
 * Sends `create` (one POST /v1/records) again while it answers 503, each 503 with Retry-After,
 * and resolves with the first other answer, which must be 201 (its body left unread).
 */
export function createRecordOnceTopicExists<A extends CreateAnswer>(create: () => Promise<A>, timeoutMs = 30_000): Promise<A> {
  return waitFor(
    "the organisation's topic (POST /v1/records answers 503 until it exists)",
    async () => {
      const answer = await create();
      if (answer.status === 503) {
        expect(answer.headers.get("retry-after") ?? null).not.toBeNull();
        return undefined;
      }
      expect(answer.status).toBe(201);
      return answer;
    },
    timeoutMs,
    100,
  );
}
