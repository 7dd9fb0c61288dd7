/**
 * Authentication's reads on the embedded SQLite (keys/ports.ts, `CredentialReads`): the
 * statements' SQLite texts (storage/statements.ts) prepared once on the connection and run
 * directly, synchronously; the data version is the connection's own (`others()`). Each is
 * prepared at its first use, as the store prepares its statements: a connection closed before
 * then refuses the read.
 */
import type { Statement } from "bun:sqlite";
import type { CredentialReads, CredentialRow } from "../../keys/ports.ts";
import { API_KEY_WITH_ORG, CHANGE_COUNTER, TOUCH_API_KEY } from "../statements.ts";
import { changes, q, type SqliteStore } from "../store.ts";

export function sqliteCredentialReads(store: SqliteStore): CredentialReads {
  const client = store.db.$client;
  let counter: Statement<{ value: number }, []> | null = null;
  let keyById: Statement<CredentialRow, [string]> | null = null;
  return {
    version: () => store.version.others(),
    changeCounter: () => (counter ??= client.prepare(CHANGE_COUNTER.sqlite)).get()?.value ?? null,
    keyWithOrg: (keyId) => (keyById ??= client.prepare(API_KEY_WITH_ORG.sqlite)).get(keyId) ?? null,
    touch: (uses, resolutionMs) =>
      store.write(function* () {
        for (const [keyId, at] of uses) yield* q(changes(TOUCH_API_KEY, at, keyId, at - resolutionMs + 1));
      }),
  };
}
