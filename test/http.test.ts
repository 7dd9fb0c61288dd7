/**
 * The shared HTTP machinery, in-process: the error envelope on every path out, 404/405,
 * request ids, body limits and body shapes. Body handling is exercised through a route that
 * uses the same reader every /v1 operation uses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { readJsonObject } from "../src/http/body.ts";
import { cleanup, testApp } from "./support/env.ts";

afterAll(cleanup);

const LIMIT = 64;
const probe = new Elysia()
  .post("/probe/body", async ({ request }) => ({ got: await readJsonObject(request, LIMIT) }), { parse: "none" })
  .get("/probe/boom", () => {
    throw new Error("secret internal detail at /var/lib/docverify/docverify.db");
  })
  .get("/probe/items/:id", ({ params }) => ({ id: params.id }));

let request: Awaited<ReturnType<typeof testApp>>["request"];
let log: Awaited<ReturnType<typeof testApp>>["log"];
beforeAll(async () => {
  ({ request, log } = await testApp({ plugins: [probe] }));
});

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toStartWith("application/json");
  const body = (await res.json()) as { error: { code: string; message: string; details?: Record<string, string> } };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

const post = (body: RequestInit["body"] | null, headers: Record<string, string> = { "content-type": "application/json" }) =>
  request("/probe/body", { method: "POST", body, headers });

describe("routing", () => {
  test("unknown route: 404 NOT_FOUND in the envelope", async () => {
    const err = await expectError(await request("/v2/nothing"), 404, "NOT_FOUND");
    expect(err.details).toBeUndefined();
  });

  test("known path, wrong method: 405 METHOD_NOT_ALLOWED with Allow", async () => {
    const res = await request("/healthz", { method: "DELETE" });
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    await expectError(res, 405, "METHOD_NOT_ALLOWED");
    const res2 = await request("/probe/body", { method: "GET" });
    expect(res2.headers.get("allow")).toBe("POST");
    await expectError(res2, 405, "METHOD_NOT_ALLOWED");
    const res3 = await request("/probe/items/42", { method: "PUT" });
    expect(res3.headers.get("allow")).toBe("GET, HEAD");
  });

  test("HEAD answers like GET without a body", async () => {
    const res = await request("/healthz", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  test("an unexpected failure is 500 INTERNAL_ERROR with nothing internal in the body; the detail is logged", async () => {
    const res = await request("/probe/boom");
    const id = res.headers.get("x-request-id");
    const text = await res.clone().text();
    expect(text).not.toContain("secret");
    expect(text).not.toContain("/var/lib");
    expect(text).not.toContain("at ");
    await expectError(res, 500, "INTERNAL_ERROR");
    const logged = log.lines.find((l) => l.msg === "unhandled error" && l.requestId === id);
    expect(JSON.stringify(logged)).toContain("secret internal detail");
  });

  test("every response carries a unique request id that is also in its log line", async () => {
    const a = await request("/healthz");
    const b = await request("/nowhere");
    const ida = a.headers.get("x-request-id")!;
    const idb = b.headers.get("x-request-id")!;
    expect(ida).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idb).not.toBe(ida);
    const line = log.lines.find((l) => l.msg === "request" && l.requestId === ida)!;
    expect(line).toMatchObject({ method: "GET", route: "/healthz", status: 200 });
    expect(typeof line.durationMs).toBe("number");
    expect(log.lines.find((l) => l.requestId === idb)).toMatchObject({ route: "(unmatched)", status: 404 });
  });

  test("the log line names the route pattern, never the raw path with its ids", async () => {
    const res = await request("/probe/items/sensitive-id-123");
    const id = res.headers.get("x-request-id");
    const line = log.lines.find((l) => l.msg === "request" && l.requestId === id)!;
    expect(line.route).toBe("/probe/items/:id");
    expect(JSON.stringify(line)).not.toContain("sensitive-id-123");
  });
});

describe("request bodies", () => {
  test("a JSON object is accepted", async () => {
    const res = await post(JSON.stringify({ a: "é" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ got: { a: "é" } });
  });

  test("without a Content-Type the body is still read as JSON", async () => {
    const res = await request("/probe/body", { method: "POST", body: new Blob(['{"a":1}']) });
    expect(res.status).toBe(200);
  });

  const refused: [string, RequestInit["body"] | null, string][] = [
    ["malformed JSON", '{"a":', "not valid JSON"],
    ["an array", "[1,2]", "must be a JSON object, not an array"],
    ["null", "null", "must be a JSON object, not null"],
    ["a string", '"hello"', "must be a JSON object, not a string"],
    ["a number", "42", "must be a JSON object, not a number"],
    ["an empty body", "", "required: a JSON object"],
    ["no body at all", null, "required: a JSON object"],
    ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), "not valid UTF-8"],
  ];
  for (const [name, body, detail] of refused) {
    test(`${name}: 400 VALIDATION_FAILED with details.body`, async () => {
      const err = await expectError(await post(body), 400, "VALIDATION_FAILED");
      expect(err.details).toEqual({ body: detail });
    });
  }

  test("a non-JSON Content-Type: 400 naming the body", async () => {
    const err = await expectError(await post("a=1", { "content-type": "application/x-www-form-urlencoded" }), 400, "VALIDATION_FAILED");
    expect(err.details?.body).toContain("not application/json");
  });

  test("a declared Content-Length over the limit: 413 before reading", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(16).fill(0x20));
      },
    });
    const res = await request("/probe/body", {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "content-length": String(LIMIT + 1) },
      duplex: "half",
    });
    await expectError(res, 413, "PAYLOAD_TOO_LARGE");
    expect(pulled).toBeLessThanOrEqual(1);
  });

  test("a chunked body without Content-Length is cut off once it passes the limit", async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += 16;
        c.enqueue(new TextEncoder().encode(" ".repeat(16)));
      },
    });
    // An endless stream: the request only completes because the reader stops at the limit.
    const res = await request("/probe/body", { method: "POST", body, headers: { "content-type": "application/json" } });
    await expectError(res, 413, "PAYLOAD_TOO_LARGE");
    expect(sent).toBeLessThan(LIMIT * 4);
  });

  test("a body exactly at the limit is accepted", async () => {
    const json = JSON.stringify({ k: "x".repeat(LIMIT - 8) });
    expect(json.length).toBe(LIMIT);
    expect((await post(json)).status).toBe(200);
  });
});
