/**
 * Authentication's reads on PostgreSQL (keys/ports.ts, `CredentialReads`): each statement one
 * awaited query; no data version can be told, so the change counter is read on every check.
 */
import type { CredentialReads } from "../../keys/ports.ts";
import { UNKNOWN } from "../data-version.ts";
import type { PostgresStore } from "../pg-store.ts";
import { API_KEY_WITH_ORG, CHANGE_COUNTER, TOUCH_API_KEY } from "../statements.ts";
import { changes, firstRow, q } from "../store.ts";

export function postgresCredentialReads(store: PostgresStore): CredentialReads {
  return {
    version: () => UNKNOWN,
    changeCounter: () => store.read(function* () {
      return (yield* q(firstRow(CHANGE_COUNTER)))?.value ?? null;
    }),
    keyWithOrg: (keyId) => store.read(function* () {
      return (yield* q(firstRow(API_KEY_WITH_ORG, keyId))) ?? null;
    }),
    touch: (uses, resolutionMs) =>
      store.write(function* () {
        for (const [keyId, at] of uses) yield* q(changes(TOUCH_API_KEY, at, keyId, at - resolutionMs + 1));
      }),
  };
}
