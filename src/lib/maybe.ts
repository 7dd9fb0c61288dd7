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
 * Whether `value` is still to come. The one place a `Maybe` is told apart: an `await` of a value
 * already here would still cost a turn of the event loop, which the embedded path does not pay.
 */
export function pending<T>(value: Maybe<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** `fn` of `value` once it is settled: at once when it is a value, chained when it is a promise. */
export function mapMaybe<T, U>(value: Maybe<T>, fn: (v: T) => Maybe<U>): Maybe<U> {
  return pending(value) ? value.then(fn) : fn(value);
}

/**
 * Runs `run` and hands its outcome to `onValue` or `onError`: at once when it answered (or threw)
 * synchronously, and then returns null; otherwise returns the promise of that hand-over (it
 * rejects only if a handler throws). What tells a caller whether work is still in flight.
 */
export function settleMaybe<T>(run: () => Maybe<T>, onValue: (v: T) => void, onError: (e: unknown) => void): Promise<void> | null {
  let value: Maybe<T>;
  try {
    value = run();
  } catch (e) {
    onError(e);
    return null;
  }
  if (pending(value)) return value.then(onValue, onError);
  onValue(value);
  return null;
}

/**
 * `value` when it is settled now; a TypeError naming `what` when it is a promise (a method that
 * is synchronous on one engine only, called on the other). The promise's outcome is dropped.
 */
export function settledNow<T>(value: Maybe<T>, what: string): T {
  if (pending(value)) {
    value.catch(() => {});
    throw new TypeError(`${what} is synchronous on the embedded SQLite only`);
  }
  return value;
}
