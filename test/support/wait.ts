/**
 * Waiting in tests: on an event, never for a fixed time. `waitFor` polls a condition until it
 * yields a value or the deadline passes; the test then asserts on that value. A test that means
 * "nothing happens within N ms" sleeps on purpose and says so beside the sleep.
 */

/**
 * Calls `fn` every `everyMs` until it returns something other than `null` or `undefined`, and
 * resolves with that. Throws, naming `what`, once `timeoutMs` has passed without it. An error
 * thrown by `fn` (an `expect` that fails) ends the wait at once.
 */
export async function waitFor<T>(what: string, fn: () => T | null | undefined | Promise<T | null | undefined>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
