/**
 * The API document speaks of the service that serves it: its `servers` and every example name the
 * public URL (DOCVERIFY_PUBLIC_URL, else the address `serve` listens on), `info.contact` names
 * whom to ask (DOCVERIFY_CONTACT, else the operator at that URL); every operation has one of the
 * document's tags; and every GET path's HEAD, which the service answers, is declared and answers
 * like the GET without a body, over real HTTP.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cleanup, startService, testApp } from "../support/env.ts";

afterAll(cleanup);

type Json = Record<string, any>;

async function documentOf(url: string): Promise<{ doc: Json; text: string }> {
  const res = await fetch(`${url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { doc: JSON.parse(text) as Json, text };
}

/** Every curl command's URL in the document (operations and the description). */
const exampleUrls = (text: string) => [...text.matchAll(/curl -sI? (?:-X \w+ )?'?(https?:\/\/[^'\s\\"]+)/g)].map((m) => m[1]!);

const operations = (doc: Json) => Object.entries(doc.paths as Json).flatMap(([path, ops]) => Object.entries(ops as Json).map(([method, op]) => ({ path, method, op: op as Json })));

describe("the document names this service", () => {
  test("each app its own: two in one process, each with its own public URL", async () => {
    const a = await testApp({ env: { DOCVERIFY_PUBLIC_URL: "https://a.example.org" } });
    const b = await testApp({ env: { DOCVERIFY_PUBLIC_URL: "https://b.example.org/verify" } });
    for (const [{ request }, url] of [[a, "https://a.example.org"], [b, "https://b.example.org/verify"]] as const) {
      const text = await (await request("/v1/openapi.json")).text();
      expect(JSON.parse(text).servers[0].url).toBe(url);
      expect(exampleUrls(text).filter((u) => !u.startsWith(`${url}/`))).toEqual([]);
    }
  });

  test(
    "with DOCVERIFY_PUBLIC_URL and DOCVERIFY_CONTACT: servers, every example and the contact are theirs; the listening address appears nowhere",
    async () => {
      const svc = await startService({ env: { DOCVERIFY_PUBLIC_URL: "https://docs.example.org", DOCVERIFY_CONTACT: "api-support@example.org" } });
      const { doc, text } = await documentOf(svc.url);
      expect(doc.servers[0].url).toBe("https://docs.example.org");
      expect(doc.info.contact).toEqual({ name: "The operator of this docverify service", email: "api-support@example.org" });
      expect(text).not.toContain("127.0.0.1:8080");
      expect(text).not.toContain(new URL(svc.url).host);
      const urls = exampleUrls(text);
      // The description's example, and one per operation a terminal can make (GET, HEAD, POST).
      expect(urls.length).toBe(22);
      expect(urls.filter((u) => !u.startsWith("https://docs.example.org/"))).toEqual([]);
      await svc.stop();
    },
    60_000,
  );

  test(
    "without them: servers, examples and contact name the address serve listens on",
    async () => {
      const svc = await startService();
      expect(svc.url).not.toBe("http://127.0.0.1:8080");
      const { doc, text } = await documentOf(svc.url);
      expect(doc.servers[0].url).toBe(svc.url);
      expect(doc.info.contact).toEqual({ name: `The operator of the docverify service at ${svc.url}`, url: svc.url });
      expect(text).not.toContain("127.0.0.1:8080");
      const urls = exampleUrls(text);
      expect(urls.length).toBe(22);
      expect(urls.filter((u) => !u.startsWith(`${svc.url}/`))).toEqual([]);

      // Tags: every operation exactly one, each listed with a description, each listed one used.
      const tags = (doc.tags as Json[]).map((t) => t.name as string);
      for (const t of doc.tags as Json[]) expect([t.name, typeof t.description === "string" && t.description.length > 20]).toEqual([t.name, true]);
      const used = new Set<string>();
      for (const { path, method, op } of operations(doc)) {
        expect([method, path, op.tags.length, tags.includes(op.tags[0])]).toEqual([method, path, 1, true]);
        used.add(op.tags[0]);
      }
      expect([...used].sort()).toEqual([...tags].sort());
      expect(tags).toEqual(["Verifications", "Records", "Receipts", "Identity", "Pages", "Person application", "Service"]);

      // HEAD: declared for exactly the GET paths, and answered like the GET, without a body.
      const gets = operations(doc).filter((o) => o.method === "get");
      const heads = operations(doc).filter((o) => o.method === "head");
      expect(heads.map((h) => h.path)).toEqual(gets.map((g) => g.path));
      expect(doc.paths["/verify/{recordId}/receipt"].head.operationId).toBe("headPublicReceipt");
      for (const { path, op } of heads) {
        expect(Object.values(op.responses as Json).filter((r) => r.content !== undefined)).toEqual([]);
        const url = svc.url + path.replace(/\{\w+\}/g, "00000000-0000-4000-8000-000000000000");
        const get = await fetch(url);
        await get.arrayBuffer();
        const head = await fetch(url, { method: "HEAD" });
        expect([path, head.status, head.headers.get("content-type"), (await head.arrayBuffer()).byteLength]).toEqual([path, get.status, get.headers.get("content-type"), 0]);
        expect([path, op.responses[String(head.status)] !== undefined]).toEqual([path, true]);
      }
      // A path without GET has no HEAD: 405, naming what it allows.
      const refused = await fetch(`${svc.url}/v1/records`, { method: "HEAD" });
      expect([refused.status, refused.headers.get("allow")]).toEqual([405, "POST"]);
      expect(doc.paths["/v1/records"].head).toBeUndefined();
      await svc.stop();
    },
    60_000,
  );
});
