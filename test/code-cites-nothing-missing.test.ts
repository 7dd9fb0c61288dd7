/**
 * The code speaks of the product and cites only what a clone has, as the docs do
 * (test/docs.test.ts, "the docs stand alone"): no file under src/ or scripts/ points at a
 * document outside the repository or at the history of its making. A rule is stated where it is
 * used, or its docs/*.md section is named.
 *
 * Each pattern applies to the folders listed beside it, every file in them.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

const RULES: readonly { readonly name: string; readonly pattern: RegExp; readonly folders: readonly string[] }[] = [
  { name: "interface-spec", pattern: /interface-spec/i, folders: ["src", "scripts"] },
  { name: "decisions.md", pattern: /decisions\.md/i, folders: ["src", "scripts"] },
  { name: "../shared", pattern: /\.\.\/shared/, folders: ["src", "scripts"] },
  { name: "work session", pattern: /\b(first|second|third|fourth|fifth|sixth|this|last|earlier) session\b/i, folders: ["src", "scripts"] },
  { name: "issue number", pattern: /\bissue [0-9]+/i, folders: ["src", "scripts"] },
  { name: "spec or decisions section", pattern: /(spec|decisions) §/i, folders: ["src", "scripts"] },
];

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

describe("the code cites nothing a clone lacks", () => {
  for (const rule of RULES) {
    test(`no ${rule.name} in ${rule.folders.map((f) => `${f}/`).join(" or ")}`, () => {
      const files = rule.folders.flatMap(filesUnder);
      expect(files.length).toBeGreaterThan(rule.folders.includes("src") ? 100 : 10);
      const found: string[] = [];
      for (const file of files) {
        readFileSync(join(ROOT, file), "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (rule.pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
          });
      }
      expect(found).toEqual([]);
    });
  }

  test("the patterns catch what they are for, and leave the product's own words alone", () => {
    const caught = (line: string) => RULES.filter((r) => r.pattern.test(line)).map((r) => r.name);
    expect(caught("see ../shared/spec/interface-spec.md")).toEqual([
      "interface-spec",
      "../shared",
    ]);
    expect(caught("(decisions.md, decisions §12)")).toEqual(["decisions.md", "spec or decisions section"]);
    expect(caught("measured in the fourth session")).toEqual(["work session"]);
    expect(caught("slower by a tenth (Issue 17)")).toEqual(["issue number"]);
    expect(caught("the spec §2.7 table")).toEqual(["spec or decisions section"]);
    for (const fine of [
      "a session cookie ends after 15 minutes unused",
      "HTTP/2 sessions are destroyed on close",
      "issue a new link from the person's screen",
      "docs/records.md §2 and docs/receipts.md §1",
      "the issued challenge",
    ]) {
      expect([fine, caught(fine)]).toEqual([fine, []]);
    }
  });
});
