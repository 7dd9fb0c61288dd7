/**
 * The local ledger's second mirror listener (`secondMirrorPort`, docs/local-ledger.md): two
 * mirror base URLs over one store, the same answers on both, both closed by close() and by the
 * `unreachable` fault; strict option checks; a taken port leaves nothing behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { memoryLogger } from "../../src/lib/log.ts";
import { startLedger, startLocalLedger } from "../../src/local-ledger/index.ts";
import { startLedgerWithMessages, type LedgerWithMessages } from "./ledger-with-messages.ts";

const tempDirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "docverify-2m-"));
  tempDirs.push(d);
  return d;
};

/** Whether anything accepts a connection at `url` (a refused connection makes fetch throw). */
async function listening(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/v1/network/nodes`);
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

let env: LedgerWithMessages;

beforeAll(async () => {
  env = await startLedgerWithMessages(["alpha", "beta", "gamma"], { secondMirrorPort: 0 });
}, 20_000);

afterAll(async () => {
  await env.close();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

describe("a ledger with a second mirror port", () => {
  test("mirrorUrls names both listeners, mirrorUrl first, on different ports of the same host", () => {
    const { ledger } = env;
    expect(ledger.mirrorUrls).toHaveLength(2);
    expect(ledger.mirrorUrls[0]).toBe(ledger.mirrorUrl);
    const [a, b] = ledger.mirrorUrls.map((u) => new URL(u));
    expect(a!.hostname).toBe("127.0.0.1");
    expect(b!.hostname).toBe("127.0.0.1");
    expect(a!.port).not.toBe(b!.port);
    expect(Object.isFrozen(ledger.mirrorUrls)).toBe(true);
  });

  const paths = () => [
    `/api/v1/topics/${env.topicId}`,
    `/api/v1/topics/${env.topicId}/messages`,
    `/api/v1/topics/${env.topicId}/messages/2`,
    `/api/v1/topics/messages/${env.timestamps[3]}`,
    `/api/v1/topics/${env.topicId}/messages?limit=1&order=desc`,
    `/api/v1/accounts/0.0.2`,
    `/api/v1/topics/${env.topicId}/messages/99`,
    `/api/v1/topics/${env.topicId}/messages?limit=zero`,
  ];
  test("both answer every request alike, from the same store", async () => {
    for (const path of paths()) {
      const [first, second] = await Promise.all(env.ledger.mirrorUrls.map((u) => fetch(u + path)));
      expect({ path, status: second!.status, body: await second!.text() }).toEqual({ path, status: first!.status, body: await first!.text() });
    }
    // A message that reaches consensus now is on both at once.
    const { sequenceNumber } = await env.submit("delta");
    for (const u of env.ledger.mirrorUrls) {
      const m = (await (await fetch(`${u}/api/v1/topics/${env.topicId}/messages/${sequenceNumber}`)).json()) as { message: string };
      expect(Buffer.from(m.message, "base64").toString()).toBe("delta");
    }
  });

  test("unreachable closes both listeners and opens both again on the same ports", async () => {
    const urls = env.ledger.mirrorUrls;
    await env.ledger.faults.unreachable(true);
    expect(await Promise.all(urls.map(listening))).toEqual([false, false]);
    await env.ledger.faults.unreachable(false);
    expect(await Promise.all(urls.map(listening))).toEqual([true, true]);
  });
});

describe("options and lifecycle", () => {
  test("without secondMirrorPort there is one mirror listener", async () => {
    const ledger = await startLocalLedger({ dataDir: tempDir(), consensusMs: 0 });
    try {
      expect(ledger.mirrorUrls).toEqual([ledger.mirrorUrl]);
    } finally {
      await ledger.close();
    }
  });

  test("startLedger (what runs for real) serves the second port too, and close() closes both", async () => {
    const ledger = await startLedger({ dataDir: tempDir(), consensusMs: 0, secondMirrorPort: 0 });
    const urls = [...ledger.mirrorUrls];
    expect(urls).toHaveLength(2);
    expect(await Promise.all(urls.map(listening))).toEqual([true, true]);
    await ledger.close();
    expect(await Promise.all(urls.map(listening))).toEqual([false, false]);
  });

  test("a given second port is used", async () => {
    // A free port, found by listening on 0 and letting go.
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port!;
    await probe.stop(true);
    const ledger = await startLocalLedger({ dataDir: tempDir(), consensusMs: 0, secondMirrorPort: port });
    try {
      expect(ledger.mirrorUrls[1]).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${ledger.mirrorUrls[1]}/api/v1/network/nodes`)).status).toBe(200);
    } finally {
      await ledger.close();
    }
  });

  test("secondMirrorPort is checked strictly", async () => {
    for (const bad of [-1, 65536, 1.5, Number.NaN]) {
      await expect(startLocalLedger({ dataDir: tempDir(), secondMirrorPort: bad })).rejects.toThrow(/secondMirrorPort must be a port number/);
    }
    await expect(startLocalLedger({ dataDir: tempDir(), mirrorPort: 40123, secondMirrorPort: 40123 })).rejects.toThrow(/secondMirrorPort must differ from mirrorPort/);
  });

  test("a second port already taken: the start fails and leaves nothing listening or locked", async () => {
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
    const dir = tempDir();
    try {
      await expect(startLocalLedger({ dataDir: dir, consensusMs: 0, secondMirrorPort: holder.port! })).rejects.toThrow();
      // The folder is free again (its lock released) and the same start without the taken port works.
      const ledger = await startLocalLedger({ dataDir: dir, consensusMs: 0, secondMirrorPort: 0 });
      expect(ledger.mirrorUrls).toHaveLength(2);
      await ledger.close();
      expect(await (await fetch(`http://127.0.0.1:${holder.port}/`)).text()).toBe("someone else");
    } finally {
      await holder.stop(true);
    }
  });

  test("a handler failure is a 500 in the mirror's error shape, with CORS, on both listeners, and logged", async () => {
    const dir = tempDir();
    const log = memoryLogger();
    const ledger = await startLocalLedger({ dataDir: dir, consensusMs: 0, secondMirrorPort: 0, log });
    try {
      // Another connection breaks the store under the mirror: its queries now throw.
      const db = new Database(join(dir, "ledger.sqlite"));
      db.run("DROP TABLE topic_messages");
      db.close();
      for (const u of ledger.mirrorUrls) {
        const res = await fetch(`${u}/api/v1/topics/0.0.1001/messages/1`);
        expect([res.status, res.headers.get("access-control-allow-origin"), await res.json()]).toEqual([500, "*", { _status: { messages: [{ message: "Internal error" }] } }]);
      }
      expect(log.lines.filter((l) => l.msg === "local ledger: mirror handler failed")).toHaveLength(2);
    } finally {
      await ledger.close();
    }
  });
});
