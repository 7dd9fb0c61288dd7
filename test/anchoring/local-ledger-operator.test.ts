/**
 * The local ledger's operator key (docs/local-ledger.md "The operator key: a public development
 * key"): a fixed, documented development key for 0.0.2 unless the ledger is created with another;
 * the mirror shows it at /api/v1/accounts/{id}; and `localOperatorKey`, which `serve` uses for a
 * ledger started elsewhere, picks the key the ledger shows without any setting, or refuses naming
 * the setting.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { localOperatorKey } from "../../src/anchoring/setup.ts";
import { DEVELOPMENT_OPERATOR_KEY, LOCAL_LEDGER_FILES, startLocalLedger } from "../../src/local-ledger/index.ts";
import { ed25519KeyPairFromDer } from "../../src/local-ledger/keys.ts";
import { parseConfig } from "../../src/config/index.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";

afterEach(cleanup);

/** Hedera's local node publishes this pair for 0.0.2 (hiero-local-node, "network variables"). */
const HEDERA_LOCAL_NODE_PUBLIC = "0aa8e21064c61eab86e2a9c164565b4e7a9a4146106e0a6cd03a8c395a110e92";

async function freshKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as unknown as CryptoKeyPair;
  return Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey)).toString("hex");
}

async function ledgerIn(dir: string, operatorKey?: string) {
  const ledger = await startLocalLedger({ dataDir: dir, consensusMs: 50, ...(operatorKey !== undefined ? { operatorKey } : {}) });
  onCleanup(() => ledger.close());
  return ledger;
}

describe("the development key", () => {
  test("is Hedera's local-node key, and a new ledger gives it to 0.0.2 and the system accounts", async () => {
    const pair = await ed25519KeyPairFromDer(DEVELOPMENT_OPERATOR_KEY.privateKeyDer);
    expect(Buffer.from(pair.publicKey).toString("hex")).toBe(HEDERA_LOCAL_NODE_PUBLIC);
    expect(pair.publicKeyDer).toBe(DEVELOPMENT_OPERATOR_KEY.publicKeyDer);

    const dir = tempDir();
    const ledger = await ledgerIn(dir);
    expect(ledger.operator).toEqual({ accountId: "0.0.2", ...DEVELOPMENT_OPERATOR_KEY });
    expect(readFileSync(join(dir, LOCAL_LEDGER_FILES.operatorKey), "utf8").trim()).toBe(DEVELOPMENT_OPERATOR_KEY.privateKeyDer);
    for (const id of ["0.0.2", "0.0.3", "0.0.98"]) {
      const res = await fetch(`${ledger.mirrorUrl}/api/v1/accounts/${id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { account: string; key: unknown }).key).toEqual({ _type: "ED25519", key: HEDERA_LOCAL_NODE_PUBLIC });
    }
    expect((await fetch(`${ledger.mirrorUrl}/api/v1/accounts/0.0.999999`)).status).toBe(404);
    expect((await fetch(`${ledger.mirrorUrl}/api/v1/accounts/not-an-id`)).status).toBe(400);
  });

  test("a malformed operator key is refused before anything is created", async () => {
    const dir = join(tempDir(), "ledger");
    await expect(startLocalLedger({ dataDir: dir, operatorKey: "not hex" })).rejects.toThrow(/hex DER/);
    await expect(startLocalLedger({ dataDir: dir, operatorKey: "30" + "00".repeat(40) })).rejects.toThrow(/ED25519/);
    expect(existsSync(dir)).toBe(false);
  });
});

describe("a key of its own", () => {
  test("is used when the ledger is created, kept across restarts, and a different one is refused", async () => {
    const dir = tempDir();
    const own = await freshKey();
    const first = await ledgerIn(dir, own);
    expect(first.operator.privateKeyDer).toBe(own);
    await first.close();

    // Restarted without a key: it keeps its own (a ledger's key is fixed at creation).
    const again = await ledgerIn(dir);
    expect(again.operator.privateKeyDer).toBe(own);
    await again.close();

    await expect(startLocalLedger({ dataDir: dir, operatorKey: DEVELOPMENT_OPERATOR_KEY.privateKeyDer })).rejects.toThrow(/created with another operator key/);
    // The refusal left the folder usable.
    expect((await ledgerIn(dir, own)).operator.privateKeyDer).toBe(own);
  });
});

describe("localOperatorKey: which key serve uses for a ledger started elsewhere", () => {
  test("no setting: the development key, which the ledger shows", async () => {
    const ledger = await ledgerIn(tempDir());
    const config = parseConfig({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl });
    expect(await localOperatorKey(config, ledger.mirrorUrl, "0.0.2")).toEqual({ privateKeyDer: DEVELOPMENT_OPERATOR_KEY.privateKeyDer, source: "development key" });
  });

  test("no setting, a ledger with its own key: the copy in DATA_DIR/ledger/operator.key if it is that key, else a refusal naming the setting", async () => {
    const own = await freshKey();
    const ledger = await ledgerIn(tempDir(), own);
    const data = tempDir();
    const config = parseConfig({ DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl });
    await expect(localOperatorKey(config, ledger.mirrorUrl, "0.0.2")).rejects.toThrow(/^DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: .*not the development key/);

    // A ledger created before the development key, started with --data on this very folder.
    mkdirSync(join(data, "ledger"), { recursive: true });
    const copy = join(data, "ledger", LOCAL_LEDGER_FILES.operatorKey);
    writeFileSync(copy, own + "\n");
    expect(await localOperatorKey(config, ledger.mirrorUrl, "0.0.2")).toEqual({ privateKeyDer: own, source: copy });
  });

  test("DOCVERIFY_LEDGER_OPERATOR_KEY_FILE wins, and is refused when the ledger shows another key", async () => {
    const ledger = await ledgerIn(tempDir());
    const file = join(tempDir(), "operator.key");
    writeFileSync(file, DEVELOPMENT_OPERATOR_KEY.privateKeyDer + "\n");
    const config = parseConfig({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl, DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: file });
    expect(await localOperatorKey(config, ledger.mirrorUrl, "0.0.2")).toEqual({ privateKeyDer: DEVELOPMENT_OPERATOR_KEY.privateKeyDer, source: file });

    writeFileSync(file, (await freshKey()) + "\n");
    await expect(localOperatorKey(config, ledger.mirrorUrl, "0.0.2")).rejects.toThrow(/^DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: .* does not hold the key/);
  });
});
