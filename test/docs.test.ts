/**
 * The documentation is true to the product: the docs UI loads nothing from outside the
 * binary (checked in a real browser), the OpenAPI document describes the routes, and the
 * README's commands and settings are the ones the code has. The docs stand alone: they cite
 * nothing a clone lacks, and docs/README.md indexes every page.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { SETTINGS } from "../src/config/index.ts";
import { APP_NOTE } from "../src/http/docs-document.ts";
import { CHROMIUM_ARGS, requireProgram } from "./support/programs.ts";
import { ROOT, cleanup, startService, testApp } from "./support/env.ts";

afterAll(cleanup);

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

describe("README", () => {
  test("the quick start is the two commands, and CI runs exactly the test one", () => {
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(blocks[0]).toBe("npm ci && npm start");
    expect(blocks[1]).toBe("npm ci && npm test");
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8").trim().split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    expect(ci.at(-1)).toBe("npm ci && npm test");
    expect(pkg.scripts.start).toBe("bun src/main.ts serve");
    expect(pkg.scripts.test).toContain("bun test");
  });

  test("every npm script the README names exists", () => {
    for (const m of readme.matchAll(/npm run ([\w:-]+)/g)) expect(Object.keys(pkg.scripts)).toContain(m[1]!);
  });

  test("the verification example answers as the README says", async () => {
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("curl") && b.includes("/v1/verifications"));
    expect(block).toBeDefined();
    const url = /curl -s (\S+)/.exec(block!)![1]!;
    const body = /-d '([^']+)'/.exec(block!)![1]!;
    const contentType = /-H 'content-type: ([^']+)'/.exec(block!)![1]!;
    const { request } = await testApp();
    const res = await request(new URL(url).pathname, { method: "POST", headers: { "content-type": contentType }, body });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { verdict: string }).verdict).toBe("no_record");
  });

  test("the settings table lists exactly the settings the code reads", () => {
    const listed = new Set([...readme.matchAll(/`(DOCVERIFY_[A-Z_]+)`/g)].map((m) => m[1]!));
    expect([...listed].sort()).toEqual([...SETTINGS].sort());
  });
});

describe("OpenAPI document", () => {
  test("is OpenAPI 3.1 with every route but the docs themselves and /metrics", async () => {
    const { request, app } = await testApp();
    const res = await request("/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.info).toMatchObject({ title: "docverify", version: "1.0.0-draft" });
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`));
    // Hidden: the docs UI and its assets, the document itself, and /metrics (the operator's, not the API's)…
    // …and the enrolment and signing pages with their scripts (docs/persons.md: pages for people, whose JSON endpoints, /app, are documented).
    const pages = ["GET /enrol/:token", "GET /sign", "GET /app/assets/enrol.js", "GET /app/assets/sign.js"];
    const served = app.http.routes
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => !r.includes("/docs") && !r.endsWith("/openapi.json") && r !== "GET /metrics" && !pages.includes(r));
    // Every GET route answers HEAD too (the HTTP layer routes it as the GET): declared beside each.
    served.push(...served.filter((r) => r.startsWith("GET ")).map((r) => r.replace(/^GET /, "HEAD ")));
    expect(documented.sort()).toEqual(served.sort());
    expect(app.http.routes.map((r) => `${r.method} ${r.path}`)).toContain("GET /metrics");
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
  });
});

describe("docs/clients.md", () => {
  const clients = readFileSync(join(ROOT, "docs", "clients.md"), "utf8");
  test("the README links it", () => {
    expect(readme).toContain("`docs/clients.md`");
  });

  test("its transaction-id conversion gives the service's own mirror form", async () => {
    const code = /```ts\n(\/\*\* `0\.0\.2@[\s\S]*?)```/.exec(clients)![1]!;
    const convert = new Function(`${code.replace(/: string/g, "").replace(/!\./g, ".")}; return mirrorTransactionId;`)() as (id: string) => string;
    const { mirrorFormTransactionId } = await import("../src/anchoring/ledger.ts");
    for (const id of ["0.0.2@1795507107.624000000", "0.0.1234@1700000000.5", "0.0.9@1.000000001"]) expect(convert(id)).toBe(mirrorFormTransactionId(id));
    expect(convert("0.0.2@1795507107.624000000")).toBe("0.0.2-1795507107-624000000");
    expect(() => convert("0.0.2-1795507107-624000000")).toThrow();
  });

  test("the versions it names are the ones the tests pin", () => {
    const dev = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies;
    expect(clients).toContain(`openapi-typescript@${dev["openapi-typescript"]}`);
    expect(clients).toContain(`openapi-fetch@${dev["openapi-fetch"]}`);
    expect(clients).toContain(`"typescript5": "${dev["typescript5"]}"`);
  });
});

describe("documentation UI", () => {
  test("turns Try it out off and says why, with the curl command instead", async () => {
    const { request } = await testApp();
    const init = await (await request("/docs/assets/init.js")).text();
    expect(init).toContain("supportedSubmitMethods: []");
    const doc = (await (await request("/v1/openapi.json")).json()) as { info: { description: string } };
    expect(doc.info.description).toContain("adds an `Origin` header even to a same-origin POST");
    const curl = /```sh\ncurl -s (\S+) -H 'content-type: ([^']+)' \\\n\s+-d '([^']+)'\n```/.exec(doc.info.description)!;
    const res = await request(new URL(curl[1]!).pathname, { method: "POST", headers: { "content-type": curl[2]! }, body: curl[3]! });
    expect(res.status).toBe(200);
    const refused = await request(new URL(curl[1]!).pathname, { method: "POST", headers: { "content-type": curl[2]!, origin: "http://localhost" }, body: curl[3]! });
    expect(refused.status).toBe(403);
  });

  test("every operation shows a curl command, and each is a well-formed request", async () => {
    const { app, request } = await testApp();
    const org = await app.organisations.create({ name: "Curl", apiAccess: true, addon: true, validated: true }, "test");
    const key = (await app.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
    const doc = (await (await request("/v1/openapi.json")).json()) as { servers: { url: string }[]; paths: Record<string, Record<string, { description: string }>> };
    let count = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (path.startsWith("/app/")) {
          // A browser's step (a passkey answers it): the sequence is in docs/persons.md.
          expect(op.description).toEndWith(APP_NOTE);
          expect(op.description).not.toContain("curl");
          continue;
        }
        const block = /From a terminal:\n\n```sh\n(curl[\s\S]*?)\n```$/.exec(op.description)?.[1];
        expect([path, method, block === undefined]).toEqual([path, method, false]);
        const command = block!.replace(/ \\\n\s+/g, " ");
        const url = /curl -s(I)?(?: -X (\w+))? '([^']+)'/.exec(command)!;
        expect(url[1] !== undefined ? "HEAD" : url[2] ?? (command.includes(" -d ") ? "POST" : "GET")).toBe(method.toUpperCase());
        const target = new URL(url[3]!.replace(/<\w+Id>/g, crypto.randomUUID()));
        // The service's public URL (test/openapi/site.test.ts).
        expect(target.origin).toBe(doc.servers[0]!.url);
        const headers: Record<string, string> = {};
        for (const h of command.matchAll(/-H (?:'([^']+)'|"([^"]+)")/g)) {
          const [name, value] = (h[1] ?? h[2]!).split(": ");
          headers[name!] = value!.replace("$DOCVERIFY_KEY", key);
        }
        const body = /-d '([^']+)'/.exec(command)?.[1];
        const res = await request(target.pathname, { method: method.toUpperCase(), headers, ...(body === undefined ? {} : { body }) });
        // Well-formed: routed, authorised, body accepted (a random id is unknown; a record may wait for its topic).
        expect([path, method, [400, 401, 403, 405, 413].includes(res.status)]).toEqual([path, method, false]);
        count++;
      }
    }
    // 12 operations a terminal makes, and the HEAD of each of the 9 GETs among them.
    expect(count).toBe(21);
  });

  test(
    "renders in Chromium with every request served by docverify itself",
    async () => {
      const executablePath = requireProgram("chromium");
      const svc = await startService();
      const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
      try {
        const page = await browser.newPage();
        const requested: string[] = [];
        page.on("request", (r) => requested.push(r.url()));
        await page.goto(`${svc.url}/docs`);
        await page.waitForSelector(".swagger-ui .info .title", { timeout: 15_000 });
        expect(await page.textContent(".swagger-ui .info .title")).toContain("docverify");
        // No "Try it out" (init.js): an expanded operation offers none, and shows its curl command.
        await page.click(".opblock-post .opblock-summary");
        await page.waitForSelector(".opblock-post .opblock-description-wrapper", { timeout: 15_000 });
        expect(await page.locator(".try-out__btn").count()).toBe(0);
        expect(await page.textContent(".opblock-post .opblock-description-wrapper")).toContain("curl -s");
        expect(requested.length).toBeGreaterThan(2);
        const foreign = requested.filter((u) => !u.startsWith(svc.url) && !u.startsWith("data:"));
        expect(foreign).toEqual([]);
      } finally {
        await browser.close();
        await svc.stop();
      }
    },
    120_000,
  );
});

describe("the docs stand alone", () => {
  const docsDir = join(ROOT, "docs");
  const pages = readdirSync(docsDir).filter((f) => f.endsWith(".md")).sort();
  const index = readFileSync(join(docsDir, "README.md"), "utf8");
  /** `[text](target)` links whose target is a file of this repository (no scheme, not an anchor alone). */
  const relativeLinks = (markdown: string) =>
    [...markdown.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#"));

  test("README.md and docs/*.md cite nothing a clone does not have", () => {
    const outside = [/\.\.\/shared/, /interface-spec/i, /decisions\.md/i, /decisions §/i, /spec §/i];
    const found: string[] = [];
    for (const [name, text] of [["README.md", readme], ...pages.map((p) => [`docs/${p}`, readFileSync(join(docsDir, p), "utf8")])] as const) {
      text.split("\n").forEach((line, i) => {
        for (const pattern of outside) if (pattern.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  test("every file of the repository the docs name in backticks exists (src/, scripts/, test/)", () => {
    const missing: string[] = [];
    for (const [name, text] of [["README.md", readme], ...pages.map((p) => [`docs/${p}`, readFileSync(join(docsDir, p), "utf8")])] as const) {
      for (const m of text.matchAll(/`((?:src|scripts|test)\/[A-Za-z0-9_./-]+\.(?:ts|js|mjs|json|html|css))`/g)) if (!existsSync(join(ROOT, m[1]!))) missing.push(`${name}: ${m[1]}`);
    }
    expect(missing).toEqual([]);
  });

  test("docs/README.md links every page of docs/", () => {
    const linked = new Set(relativeLinks(index).map((t) => t.split("#")[0]!));
    expect(pages.filter((p) => p !== "README.md" && !linked.has(p))).toEqual([]);
  });

  test("every relative link in docs/README.md names a file that exists", () => {
    const links = relativeLinks(index);
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((t) => !existsSync(join(docsDir, decodeURIComponent(t.split("#")[0]!))))).toEqual([]);
  });

  test("docs/records.md's revocation reasons are the ones the code accepts, with the verify page's words", async () => {
    const { REVOCATION_MEANINGS } = await import("../src/records/validate.ts");
    const records = readFileSync(join(docsDir, "records.md"), "utf8");
    const rows = [...records.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1]!, { meaning: m[2]!.trim(), conclusion: m[3]!.trim() }] as const);
    expect(Object.fromEntries(rows)).toEqual(REVOCATION_MEANINGS);
  });
});
