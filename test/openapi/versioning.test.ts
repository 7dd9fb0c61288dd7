/**
 * The changelog and the versioning policy (docs/versioning.md) agree with the product: the
 * changelog's latest release is package.json's version, with the Unreleased section above it;
 * the policy page is indexed and linked; the API document's info.version has the path's major
 * number, and nothing in it is deprecated, as the page says today.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, cleanup, testApp } from "../support/env.ts";
import { VERSION } from "../../src/version.ts";

afterAll(cleanup);

const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

describe("CHANGELOG.md", () => {
  test("its latest release is package.json's version, under an Unreleased section; each heading once, newest first", () => {
    const headings = [...read("CHANGELOG.md").matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]!);
    expect(headings[0]).toBe("Unreleased");
    expect(headings[1]).toBe(VERSION);
    expect(JSON.parse(read("package.json")).version).toBe(VERSION);
    const released = headings.slice(1);
    expect(new Set(released).size).toBe(released.length);
    const order = (v: string) => v.split(".").map(Number);
    const sorted = [...released].sort((a, b) => { const [x, y] = [order(a), order(b)]; return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!; });
    expect(released).toEqual(sorted);
  });

  test("every docs page it names exists", () => {
    for (const m of read("CHANGELOG.md").matchAll(/docs\/([a-z-]+\.md)/g)) expect([m[1], read(`docs/${m[1]}`).length > 0]).toEqual([m[1], true]);
  });
});

describe("docs/versioning.md", () => {
  test("is indexed in docs/README.md and linked from README.md", () => {
    expect(read("docs/README.md")).toContain("[versioning.md](versioning.md)");
    expect(read("README.md")).toContain("`docs/versioning.md`");
    expect(read("README.md")).toContain("`CHANGELOG.md`");
  });

  test("the document's info.version has the path's major number, the operation ids the page names exist, and nothing is deprecated", async () => {
    const { request } = await testApp();
    const doc = (await (await request("/v1/openapi.json")).json()) as { info: { version: string }; paths: Record<string, Record<string, { operationId: string; deprecated?: boolean }>> };
    const page = read("docs/versioning.md");
    expect(doc.info.version).toStartWith("1.");
    expect(page).toContain(`\`${doc.info.version}\``);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    for (const id of ["createRecord", "verifyDocument", "getPublicReceipt", "headPublicReceipt"]) {
      expect(page).toContain(`\`${id}\``);
      expect(ids).toContain(id);
    }
    expect(page).toContain("Nothing is deprecated today.");
    expect(Object.values(doc.paths).flatMap((ops) => Object.values(ops)).filter((op) => op.deprecated === true)).toEqual([]);
  });
});
