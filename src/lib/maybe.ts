/**
 * Code written once for a synchronous and an asynchronous dependency (the embedded SQLite and
 * PostgreSQL; a node's own rate limiter and the one shared by several nodes): a generator yields
 * each value it needs, which may be a promise. `runMaybe` drives it synchronously for as long as
 * no promise comes, so the embedded path stays synchronous, and awaits from the first promise on.
 */

/** A value now or later. */
export type Maybe<T> = T | Promise<T>;

/** Yields `value` to the driver and gets it back settled. */
export function* settled<T>(value: Maybe<T>): Generator<Maybe<T>, T, unknown> {
  return (yield value) as T;
}

/** Runs `gen` to its end: its result at once when nothing it yielded was a promise, a promise otherwise. */
export function runMaybe<T>(gen: Generator<unknown, T, unknown>): Maybe<T> {
  let r = gen.next();
  while (!r.done) {
    if (r.value instanceof Promise) return continueAsync(gen, r.value);
    r = gen.next(r.value);
  }
  return r.value;
}

async function continueAsync<T>(gen: Generator<unknown, T, unknown>, first: Promise<unknown>): Promise<T> {
  let pending: unknown = first;
  for (;;) {
    let value: unknown;
    let failed = false;
    try {
      value = await pending;
    } catch (e) {
      failed = true;
      value = e;
    }
    // A rejection is thrown into the generator where it yielded; what the generator throws
    // itself rejects the returned promise.
    const r = failed ? gen.throw(value) : gen.next(value);
    if (r.done) return r.value;
    pending = r.value;
  }
}

/**
 * `fn` of `value`: at once when `value` is there, a promise of it when `value` is a promise (or
 * when `fn` answers with one). The one step of code written once over `Maybe` values where a
 * generator's `yield` costs too much (a hot path of a few microseconds).
 */
export function mapMaybe<T, U>(value: Maybe<T>, fn: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(fn) : fn(value as T);
}
