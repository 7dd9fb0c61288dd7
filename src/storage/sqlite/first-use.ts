/**
 * Statements prepared at their first use rather than when a driver is made: an idle `serve` never
 * prepares those it does not run (each holds SQLite's compiled program and an object on the heap;
 * docs/benchmarks.md "Idle memory"). A connection closed before then refuses the read, as the
 * store's own statements do.
 */

/** `make()`'s result, made at the first call and the same at every call after. */
export function onFirstUse<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

/** An object of statements, each made by its function at the first read of its property. */
export function preparedOnFirstUse<T extends Record<string, () => unknown>>(makers: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const statements = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const name of Object.keys(makers) as (keyof T & string)[]) {
    const made = onFirstUse(makers[name] as () => ReturnType<T[typeof name]>);
    Object.defineProperty(statements, name, { enumerable: true, get: made });
  }
  return statements;
}
