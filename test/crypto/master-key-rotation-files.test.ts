/**
 * The master key rotation's files (crypto/master-key.ts): what `settleRotation` does with each
 * state a crash can leave, given the check value the database remembers, and that it leaves alone
 * what it cannot decide.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateMasterKey, installPendingMasterKey, masterKeyCheckValue, pendingKeyFile, previousKeyFile, settleRotation, writePendingMasterKey } from "../../src/crypto/index.ts";
import { cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

const hex = (k: Uint8Array) => Buffer.from(k).toString("hex") + "\n";

function folder() {
  const file = join(tempDir(), "master.key");
  const oldKey = generateMasterKey();
  const newKey = generateMasterKey();
  writeFileSync(file, hex(oldKey), { mode: 0o600 });
  return { file, oldKey, newKey, old: masterKeyCheckValue(oldKey), next: masterKeyCheckValue(newKey) };
}
const files = (file: string) => ({ key: readFileSync(file, "utf8"), next: existsSync(pendingKeyFile(file)), previous: existsSync(previousKeyFile(file)) });

describe("settleRotation", () => {
  test("nothing pending: nothing done", () => {
    const f = folder();
    expect(settleRotation(f.file, f.old)).toBeNull();
    expect(files(f.file)).toEqual({ key: hex(f.oldKey), next: false, previous: false });
  });

  test("a new key the database never switched to is removed", () => {
    const f = folder();
    writePendingMasterKey(f.file, f.newKey);
    expect(readFileSync(pendingKeyFile(f.file), "utf8")).toBe(hex(f.newKey));
    expect(settleRotation(f.file, f.old)).toBe("discarded");
    expect(files(f.file)).toEqual({ key: hex(f.oldKey), next: false, previous: false });
  });

  test("a committed rotation is finished, from before or after the previous key was kept", () => {
    for (const kept of [false, true]) {
      const f = folder();
      writePendingMasterKey(f.file, f.newKey);
      const crash = () => {
        throw new Error("crash after keeping the previous key");
      };
      if (kept) expect(() => installPendingMasterKey(f.file, crash)).toThrow("crash after keeping the previous key");
      expect(existsSync(previousKeyFile(f.file))).toBe(kept);
      expect(settleRotation(f.file, f.next)).toBe("finished");
      expect(files(f.file)).toEqual({ key: hex(f.newKey), next: false, previous: false });
    }
  });

  test("only the previous key left: removed once the file holds the database's key", () => {
    const f = folder();
    writePendingMasterKey(f.file, f.newKey);
    installPendingMasterKey(f.file);
    expect(files(f.file)).toEqual({ key: hex(f.newKey), next: false, previous: true });
    expect(settleRotation(f.file, f.next)).toBe("confirmed");
    expect(files(f.file)).toEqual({ key: hex(f.newKey), next: false, previous: false });
  });

  test("a key file that matches neither the database nor the pending key: everything left for the operator", () => {
    const f = folder();
    writePendingMasterKey(f.file, f.newKey);
    const other = masterKeyCheckValue(generateMasterKey());
    expect(settleRotation(f.file, other)).toBeNull();
    expect(files(f.file)).toEqual({ key: hex(f.oldKey), next: true, previous: false });
  });

  test("a pending key planted as a symbolic link is never read through it", () => {
    const f = folder();
    const elsewhere = join(tempDir(), "elsewhere.key");
    writeFileSync(elsewhere, hex(f.newKey), { mode: 0o600 });
    symlinkSync(elsewhere, pendingKeyFile(f.file));
    expect(settleRotation(f.file, f.next)).toBeNull();
    expect(readFileSync(f.file, "utf8")).toBe(hex(f.oldKey));
  });
});
