/**
 * The ledger that loads the SDK on first use (src/anchoring/deferred-ledger.ts), over a real
 * local ledger: what answers without the SDK (mirror reads, a submit key, the TCP ping), one load
 * for concurrent first uses, a failed load tried again, close before and during a load, and
 * what `serve`'s ledger setup gives a local ledger.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createServer } from "node:net";
import { deferredLedger } from "../../src/anchoring/deferred-ledger.ts";
import type { Ledger } from "../../src/anchoring/ledger.ts";
import { ed25519RawSigner } from "../../src/crypto/ed25519.ts";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";
import { hederaLedgerOver } from "./rig.ts";

afterEach(cleanup);

async function ledgerAndLoads(local: LocalLedger, load?: () => Promise<Ledger>) {
  const loads = { count: 0, pings: 0 };
  const real = () => {
    const l = hederaLedgerOver(local, { grpcDeadlineMs: 1000 });
    return { ...l, ping: () => (loads.pings++, l.ping()) };
  };
  const ledger = deferredLedger({
    network: "local",
    operatorAccountId: local.operator.accountId,
    mirrorUrl: local.mirrorUrl,
    nodes: { [local.grpcAddress]: local.nodeAccountId },
    grpcDeadlineMs: 1000,
    load: async () => {
      loads.count++;
      return load ? await load() : real();
    },
  });
  onCleanup(() => ledger.close());
  return { ledger, loads };
}

async function localLedger(): Promise<LocalLedger> {
  const local = await startLocalLedger({ dataDir: join(tempDir("docverify-deferred-"), "ledger"), consensusMs: 200 });
  onCleanup(() => local.close());
  return local;
}

describe("deferred ledger", () => {
  test("answers without the SDK: ping (a node accepts a connection), the mirror, a new submit key; the first transaction loads it once", async () => {
    const local = await localLedger();
    const { ledger, loads } = await ledgerAndLoads(local);
    expect(await ledger.ping()).toBe(true);
    expect(await ledger.topicMessages!("0.0.1001", { afterSequenceNumber: 0 }, 10)).toEqual({ kind: "found", value: [] }); // an unknown topic lists nothing, as on Hedera's mirror
    expect(await ledger.lookupTransaction(`${local.operator.accountId}@1768469400.000000001`)).toEqual({ kind: "not_found" });
    const key = ledger.generateSubmitKey();
    expect([key.privateKey.length, key.publicKey.length]).toEqual([32, 32]);
    expect(Buffer.from(ed25519RawSigner(key.privateKey).publicKey).equals(Buffer.from(key.publicKey))).toBe(true);
    expect(Buffer.from(ledger.generateSubmitKey().privateKey).equals(Buffer.from(key.privateKey))).toBe(false);
    expect(loads.count).toBe(0);

    // Concurrent first uses share one load, and the transaction is the SDK's.
    const validStart = Math.floor(Date.now() / 1000) - 1;
    const [bytes] = await Promise.all([
      ledger.prepareTopicCreate({ transactionId: `${local.operator.accountId}@${validStart}.000000001`, validSeconds: 120, submitPublicKey: key.publicKey, memo: "deferred" }),
      ledger.receipt(`${local.operator.accountId}@${validStart}.000000002`),
    ]);
    expect(loads.count).toBe(1);
    expect(await ledger.submit(bytes)).toEqual({ kind: "accepted", duplicate: false });
    // Loaded, ping is the SDK's query.
    expect(await ledger.ping()).toBe(true);
    expect(loads.pings).toBe(1);
    expect(loads.count).toBe(1);
  }, 30_000);

  test("ping says why when no consensus node accepts a connection", async () => {
    const local = await localLedger();
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const ledger = deferredLedger({ network: "local", operatorAccountId: "0.0.2", mirrorUrl: local.mirrorUrl, nodes: { [`127.0.0.1:${closed}`]: "0.0.3" }, grpcDeadlineMs: 500, load: () => Promise.reject(new Error("not loaded")) });
    expect(await ledger.ping()).toMatch(new RegExp(`^consensus node unreachable: 127\\.0\\.0\\.1:${closed}: ECONNREFUSED`));
  }, 30_000);

  test("a load that fails rejects its callers and is tried again by the next call", async () => {
    const local = await localLedger();
    let fail = true;
    const real = hederaLedgerOver(local);
    const { ledger, loads } = await ledgerAndLoads(local, async () => {
      if (fail) throw new Error("module not found");
      return real;
    });
    await expect(ledger.receipt(`${local.operator.accountId}@1768469400.000000001`)).rejects.toThrow("module not found");
    fail = false;
    expect((await ledger.receipt(`${local.operator.accountId}@1768469400.000000001`)).kind).toBe("not_found");
    expect(loads.count).toBe(2);
  }, 30_000);

  test("closed before any load: nothing loads and every call that needs the SDK is refused; closed while loading: the loaded adapter is closed", async () => {
    const local = await localLedger();
    const first = await ledgerAndLoads(local);
    await first.ledger.close();
    await expect(first.ledger.receipt(`${local.operator.accountId}@1768469400.000000001`)).rejects.toThrow("ledger closed");
    expect(await first.ledger.ping()).toBe("ledger closed");
    expect(first.loads.count).toBe(0);

    let closedAdapter = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const second = await ledgerAndLoads(local, async () => {
      await gate;
      const l = hederaLedgerOver(local);
      return { ...l, close: async () => ((closedAdapter = true), await l.close()) };
    });
    const waiting = second.ledger.receipt(`${local.operator.accountId}@1768469400.000000001`);
    const closing = second.ledger.close();
    release();
    await closing;
    expect(closedAdapter).toBe(true);
    await waiting.catch(() => undefined);
  }, 30_000);
});
