/**
 * The enrolment and signing pages as served (src/http/pages/person-pages.ts), in process with a
 * fake persons capability: who an enrolment is for, escaped; a refused link's page and status;
 * the headers (policy, no referrer, no caching, no indexing); the scripts served from the
 * binary; and the pages holding every element their scripts look up.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appPages, STYLE } from "../../src/http/pages/person-pages.ts";
import { cspHash } from "../../src/http/pages/html.ts";
import { createHttp } from "../../src/http/server.ts";
import { EnrolmentTokenError, type EnrolmentRefusal } from "../../src/persons/persons.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { REVOCATION_REASONS } from "../../src/records/validate.ts";
import { REVOKE_REASONS } from "../../src/sign-pages/words.ts";
import { ROOT } from "../support/env.ts";

const NASTY_NAME = "<script>alert(1)</script>";
const NASTY_ORG = `O'Brien & "Sons" <b>Ltd</b>`;
const TOKEN = "A".repeat(43);

/** A fake persons capability: each token names its outcome. */
const refusals: Record<string, EnrolmentRefusal> = { unknown: "unknown", expired: "expired", used: "used", suspended: "suspended" };
const persons = {
  async peekEnrolment(token: string) {
    if (token in refusals) throw new EnrolmentTokenError(refusals[token]!);
    if (token === "broken") throw new Error("the database is gone");
    return { person: { id: "p1", name: NASTY_NAME, email: "a@example.org" }, organisation: { name: NASTY_ORG } };
  },
};

const http = createHttp({ log: memoryLogger(), version: "test", readiness: {}, plugins: [appPages({ persons, publicUrl: () => "http://localhost" })] });
const get = (path: string) => http.handle(new Request(`http://localhost${path}`), "127.0.0.1");

function directives(csp: string): Record<string, string> {
  return Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(" ")[0]!, d.split(" ").slice(1).join(" ")]));
}

/** Every header a page must carry, and its policy: scripts from this origin only (or none). */
function expectPageHeaders(res: Response, html: string, withScript: boolean): void {
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("x-robots-tag")).toContain("noindex");
  expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
  expect(html).toContain('<meta name="referrer" content="no-referrer">');
  const d = directives(res.headers.get("content-security-policy")!);
  expect(d["default-src"]).toBe("'none'");
  expect(d["script-src"]).toBe(withScript ? "'self'" : "'none'");
  expect(d["connect-src"]).toBe(withScript ? "'self'" : "'none'");
  const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
  expect(style).toBe(STYLE);
  expect(d["style-src"]).toBe(cspHash(style));
  for (const k of ["img-src", "base-uri", "form-action", "frame-ancestors"]) expect(d[k]).toBe("'none'");
  // No inline script, no inline style attribute, nothing from elsewhere.
  expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
  expect(html).not.toMatch(/\sstyle=|\son[a-z]+=|<link|<img|https?:\/\//);
}

/** The ids a script looks up with byId("…"). */
function idsUsedBy(file: string): string[] {
  const text = readFileSync(join(ROOT, "src", "sign-pages", file), "utf8");
  return [...text.matchAll(/byId(?:<[^>]+>)?\("([^"]+)"\)/g)].map((m) => m[1]!);
}

describe("GET /enrol/{token}", () => {
  test("names the person and the organisation, escaped, and says the name is shown to verifiers", async () => {
    const res = await get(`/enrol/${TOKEN}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expectPageHeaders(res, html, true);
    expect(html).toContain('<strong id="person-name"><bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi></strong>');
    expect(html).toContain("<bdi>O&#39;Brien &amp; &quot;Sons&quot; &lt;b&gt;Ltd&lt;/b&gt;</bdi>");
    expect(html).not.toContain(NASTY_NAME);
    expect(html).not.toContain("<b>Ltd</b>");
    expect(html).toContain("will be shown to anyone who verifies a document you sign");
    expect(html).toContain("What enrolment means");
    // Its one script, from this service; the secret token is not written into the page.
    expect(html.match(/<script/g)).toEqual(["<script"]);
    expect(html).toContain('<script src="/app/assets/enrol.js" defer></script>');
    expect(html).not.toContain(TOKEN);
  });

  const CASES: [EnrolmentRefusal, number, string][] = [
    ["unknown", 404, "This enrolment link is not valid"],
    ["expired", 410, "This enrolment link has expired"],
    ["used", 410, "This enrolment link has already been used"],
    ["suspended", 403, "You cannot enrol at the moment"],
  ];
  for (const [reason, status, title] of CASES) {
    test(`a link refused as ${reason}: ${status}, a page saying so in plain words, no script`, async () => {
      const res = await get(`/enrol/${reason}`);
      const html = await res.text();
      expect(res.status).toBe(status);
      expectPageHeaders(res, html, false);
      expect(html).toContain(`<h1>${title}</h1>`);
      expect(html).toContain(`data-reason="${reason}"`);
      expect(html).toContain("No passkey was created");
      expect(html).not.toContain("<script");
      expect(html).not.toContain("&lt;script");
    });
  }

  test("the used link's page points to the signing page; the others ask for a new link", async () => {
    expect(await (await get("/enrol/used")).text()).toContain('<a href="/sign">Go to the signing page</a>');
    for (const r of ["unknown", "expired"]) expect(await (await get(`/enrol/${r}`)).text()).toContain("new");
  });

  test("any other failure is not dressed up as a refused link: the generic 500", async () => {
    const res = await get("/enrol/broken");
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("enrolment link");
  });
});

describe("GET /sign", () => {
  test("the signing page: headers, its one script, signed-in and signed-out parts hidden until the script decides", async () => {
    const res = await get("/sign");
    const html = await res.text();
    expect(res.status).toBe(200);
    expectPageHeaders(res, html, true);
    expect(html).toContain('<script src="/app/assets/sign.js" defer></script>');
    expect(html).toContain('<section id="signed-out" aria-labelledby="signed-out-title" hidden>');
    expect(html).toContain('<section id="signed-in" aria-labelledby="signed-in-title" hidden>');
    expect(html).toContain('<p id="status" role="status" aria-live="polite"></p>');
    expect(html).toContain('accept=".pdf,application/pdf"');
    expect(html).toContain("Anyone who verifies it will see your name.");
  });

  test("every element the scripts look up is on their page", async () => {
    const sign = await (await get("/sign")).text();
    const enrol = await (await get(`/enrol/${TOKEN}`)).text();
    for (const [files, html] of [[["sign.ts", "records.ts"], sign], [["enrol.ts"], enrol]] as const) {
      const ids = files.flatMap(idsUsedBy);
      expect(ids.length).toBeGreaterThan(3);
      expect(ids.filter((id) => !html.includes(`id="${id}"`))).toEqual([]);
    }
  });

  test("the revocation reasons offered are the API's", () => {
    expect(REVOKE_REASONS.map((r) => r.code).filter((c) => !(REVOCATION_REASONS as readonly string[]).includes(c))).toEqual([]);
    expect(new Set(REVOKE_REASONS.map((r) => r.code)).size).toBe(REVOKE_REASONS.length);
  });
});

describe("the scripts", () => {
  for (const [path, file] of [
    ["/app/assets/enrol.js", "app-enrol.js"],
    ["/app/assets/sign.js", "app-sign.js"],
  ] as const) {
    test(`${path} is the committed bundle, as JavaScript, embedded`, async () => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(await res.text()).toBe(readFileSync(join(ROOT, "src", "http", "pages", file), "utf8"));
    });
  }

  test("nothing else under /app/assets", async () => {
    expect((await get("/app/assets/other.js")).status).toBe(404);
  });
});
