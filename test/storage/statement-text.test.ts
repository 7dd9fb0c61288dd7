/**
 * A statement written once for both engines (storage/store.ts `statement({ name, sql })`): the
 * PostgreSQL text numbers the parameters as SQLite reads them, and a text that mixes the two
 * spellings is refused when the module defining it loads.
 */
import { describe, expect, test } from "bun:test";
import { statement } from "../../src/storage/store.ts";
import { INSERT_SESSION, TAKE_CHALLENGE, TRIM_SUBJECT_CHALLENGES } from "../../src/storage/statements.ts";

describe("one text for both engines", () => {
  test("`?` are numbered in order; `?N` keep their numbers, repeated or not", () => {
    expect(statement({ name: "a", sql: "UPDATE t SET a = ? WHERE b = ? AND c = ?" })).toEqual({
      name: "a",
      sqlite: "UPDATE t SET a = ? WHERE b = ? AND c = ?",
      postgres: "UPDATE t SET a = $1 WHERE b = $2 AND c = $3",
    });
    expect(statement({ name: "b", sql: "INSERT INTO t VALUES (?1, ?2, ?2, ?10)" }).postgres).toBe("INSERT INTO t VALUES ($1, $2, $2, $10)");
    expect(statement({ name: "c", sql: "SELECT 1" }).postgres).toBe("SELECT 1");
  });

  test("a text mixing `?` and `?N` is refused", () => {
    expect(() => statement({ name: "d", sql: "SELECT * FROM t WHERE a = ?1 AND b = ?" })).toThrow("mixed");
  });

  test("the statements written once read as they were written for each engine", () => {
    expect(TAKE_CHALLENGE.postgres).toBe("DELETE FROM app_challenges WHERE challenge = $1");
    expect(INSERT_SESSION.postgres).toBe("INSERT INTO app_sessions (token_digest, person_id, created_at, last_seen_at) VALUES ($1, $2, $3, $3)");
    expect(TRIM_SUBJECT_CHALLENGES.postgres).toContain("WHERE purpose = $1 AND subject = $2 ORDER BY expires_at DESC LIMIT $3)");
  });
});
