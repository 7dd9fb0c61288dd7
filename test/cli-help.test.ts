/**
 * Every subcommand answers `--help` and `-h` with its usage on stdout and exit 0,
 * wherever the flag stands and whatever else is on the line, without opening or creating anything;
 * and still refuses an unknown flag (exit 2, with a pointer to its usage).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "./support/env.ts";

afterAll(cleanup);

const MAIN = join(ROOT, "src", "main.ts");

async function run(args: string[], cwd: string) {
  const p = Bun.spawn([BUN, MAIN, ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** [the command line before --help, the usage line it must start with] */
const SUBCOMMANDS: [string[], string][] = [
  [["serve"], "Usage: docverify serve"],
  [["admin"], "Usage: docverify admin"],
  [["org"], "Usage: docverify org create|set|list|rotate-key|key-compromised"],
  [["org", "create"], "Usage: docverify org create --name NAME"],
  [["org", "set"], "Usage: docverify org set ORG"],
  [["org", "list"], "Usage: docverify org list"],
  [["org", "rotate-key"], "Usage: docverify org rotate-key ORG"],
  [["org", "key-compromised"], "Usage: docverify org key-compromised ORG --since TIME"],
  [["key"], "Usage: docverify key mint|list|revoke"],
  [["key", "mint"], "Usage: docverify key mint --org ORG --env live|test"],
  [["key", "list"], "Usage: docverify key list"],
  [["key", "revoke"], "Usage: docverify key revoke KEYID"],
  [["seal"], "Usage: docverify seal rotate-key [OPTIONS]"],
  [["seal", "rotate-key"], "Usage: docverify seal rotate-key [--json] [--data DIR]"],
  [["person"], "Usage: docverify person add|list|suspend|link"],
  [["person", "add"], "Usage: docverify person add --org ORG --name NAME --email EMAIL --identity TEXT"],
  [["person", "list"], "Usage: docverify person list"],
  [["person", "suspend"], "Usage: docverify person suspend PERSON"],
  [["person", "link"], "Usage: docverify person link PERSON"],
  [["status"], "Usage: docverify status"],
  [["trust"], "Usage: docverify trust export"],
  [["trust", "export"], "Usage: docverify trust export [--org ORG]"],
  [["backup"], "Usage: docverify backup FILE"],
  [["restore"], "Usage: docverify restore FILE"],
  [["master-key"], "Usage: docverify master-key rotate [OPTIONS]"],
  [["master-key", "rotate"], "Usage: docverify master-key rotate [--json] [--data DIR]"],
  [["local-ledger"], "Usage: docverify local-ledger"],
];

describe("--help and -h", () => {
  for (const [args, usage] of SUBCOMMANDS) {
    test(`docverify ${args.join(" ")}: usage on stdout, exit 0, nothing created; an unknown flag still exit 2`, async () => {
      const cwd = tempDir();
      // Alone, after other flags and arguments (even ones that would be refused), and with a data folder.
      const lines = [
        [...args, "--help"],
        [...args, "-h"],
        [...args, "--data", join(cwd, "data"), "--json", "-h"],
        [...args, "--bogus", "x", "--help"],
      ];
      const results = await Promise.all(lines.map((l) => run(l, cwd)));
      for (const [i, r] of results.entries()) {
        expect({ line: lines[i], code: r.code, stderr: r.stderr }).toEqual({ line: lines[i]!, code: 0, stderr: "" });
        expect(r.stdout.startsWith(usage)).toBe(true);
        expect(r.stdout).toContain("--data DIR");
        expect(r.stdout).toEndWith("\n");
      }
      expect(results.every((r) => r.stdout === results[0]!.stdout)).toBe(true);
      // Nothing opened or created: no data folder appeared.
      expect(readdirSync(cwd)).toEqual([]);

      if (args.length === 1 && (args[0] === "org" || args[0] === "key" || args[0] === "person")) return; // no parser of their own
      const refused = await run([...args, "--bogus", "--data", join(cwd, "data")], cwd);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`Run docverify ${args.join(" ")} --help for its usage.`);
    });
  }

  // verify-receipt has no data folder (it reads only the receipt, the document and mirror nodes)
  // and shares its usage errors with the standalone verifier: one line, docs/receipts.md §4.2.
  test("docverify verify-receipt: usage on stdout, exit 0, nothing created; an unknown flag exit 2 in one line", async () => {
    const cwd = tempDir();
    const lines = [
      ["verify-receipt", "--help"],
      ["verify-receipt", "-h"],
      ["verify-receipt", "receipt.json", "--json", "--hash", "nonsense", "-h"],
      ["verify-receipt", "--bogus", "x", "--help"],
      ["help", "verify-receipt"],
    ];
    const results = await Promise.all(lines.map((l) => run(l, cwd)));
    for (const [i, r] of results.entries()) {
      expect({ line: lines[i], code: r.code, stderr: r.stderr }).toEqual({ line: lines[i]!, code: 0, stderr: "" });
      expect(r.stdout).toStartWith("Usage: docverify verify-receipt RECEIPT (--file DOC | --hash sha256:HEX)");
      expect(r.stdout).toEqual(results[0]!.stdout);
    }
    expect(readdirSync(cwd)).toEqual([]);
    const refused = await run(["verify-receipt", "--bogus"], cwd);
    expect({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }).toEqual({ code: 2, stdout: "", stderr: 'docverify verify-receipt: unknown option "--bogus" (see --help)\n' });
  });

  test("docverify help COMMAND gives the same usage; -h after -- is an argument, not a flag", async () => {
    const cwd = tempDir();
    const [viaHelp, viaFlag, unknown] = await Promise.all([run(["help", "key", "mint"], cwd), run(["key", "mint", "--help"], cwd), run(["help", "nonsense"], cwd)]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(unknown.code).toBe(2);

    const data = join(cwd, "data");
    const revoke = await run(["key", "revoke", "--data", data, "--", "-h"], cwd);
    expect(revoke.stdout).toBe("");
    expect(revoke.code).toBe(1); // no key "-h": the command ran
  });

  test("key mint's usage documents --expires: the forms DATE takes, that it must be in the future, and what expiry does; key list's names the expiry", async () => {
    const cwd = tempDir();
    const [mint, list, key, all] = await Promise.all([run(["key", "mint", "--help"], cwd), run(["key", "list", "--help"], cwd), run(["key", "--help"], cwd), run(["--help"], cwd)]);
    expect(mint.stdout).toStartWith("Usage: docverify key mint --org ORG --env live|test [--revoke] [--expires DATE] [--json] [--data DIR]\n");
    expect(mint.stdout).toMatch(/^ {2}--expires DATE +when the key stops working \(default: never\)$/m);
    expect(mint.stdout).toContain("DATE is YYYY-MM-DD (that day's 00:00 UTC) or an RFC 3339 time with its zone");
    expect(mint.stdout).toContain("must be in the future");
    expect(mint.stdout).toContain("the key is refused (401) like a revoked one");
    expect(list.stdout).toContain("expiry and whether it has passed");
    for (const usage of [key.stdout, all.stdout]) expect(usage).toContain("docverify key mint --org ORG --env live|test [--revoke] [--expires DATE]\n");
  });

  test("docverify org alone is still a usage error, pointing at its usage", async () => {
    const r = await run(["org"], tempDir());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("org needs a subcommand");
    expect(r.stderr).toContain("Run docverify org --help for its usage.");
  });
});
