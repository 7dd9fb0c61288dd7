/**
 * The systemd unit, checked by systemd's own tools: it parses cleanly, carries the hardening
 * docs/operations.md "Run under systemd" describes, and `systemd-analyze security` rates its exposure ≤ 2.0.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireProgram } from "./support/programs.ts";
import { ROOT, cleanup, tempDir } from "./support/env.ts";

afterAll(cleanup);

const unit = readFileSync(join(ROOT, "systemd", "docverify.service"), "utf8");

test("the unit carries the required settings", () => {
  for (const line of [
    "Type=notify",
    "NotifyAccess=main",
    "StateDirectory=docverify",
    "User=docverify",
    "LoadCredential=master-key:",
    "Restart=on-failure",
    "TimeoutStopSec=30s",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
    "SystemCallFilter=@system-service",
    "CapabilityBoundingSet=\n",
  ]) {
    expect(unit).toContain(line);
  }
  // Bun's JIT needs writable-executable memory.
  expect(unit).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
  // The stop timeout outlasts the service's own drain (src/app/serve.ts DRAIN_MS = 10 s).
  expect(Number(/^TimeoutStopSec=(\d+)s$/m.exec(unit)![1])).toBeGreaterThan(10);
});

test("systemd-analyze verifies the unit and rates its exposure at most 2.0", () => {
  const analyze = requireProgram("systemd-analyze");
  const dir = tempDir();
  // verify checks that ExecStart exists; point it at a real executable for the check.
  const file = join(dir, "docverify.service");
  writeFileSync(file, unit.replace("ExecStart=/usr/local/bin/docverify serve", `ExecStart=${process.execPath} --version`));
  const verify = Bun.spawnSync([analyze, "verify", file]);
  const said = verify.stdout.toString() + verify.stderr.toString();
  expect(said.split("\n").filter((l) => l.includes("docverify.service"))).toEqual([]);
  const security = Bun.spawnSync([analyze, "security", "--offline=true", file]);
  const out = security.stdout.toString();
  const m = /Overall exposure level for docverify\.service: (\d+\.\d)/.exec(out);
  expect(m, out + security.stderr.toString()).not.toBeNull();
  expect(Number(m![1])).toBeLessThanOrEqual(2.0);
});
