/**
 * A local ledger with a topic and real messages on it, submitted through the real SDK, for the
 * tests of this folder: mirror answers to read, and a fixture (test/support/lying-mirror.ts) to
 * lie about them.
 */
import { Client, PrivateKey, TopicCreateTransaction, TopicMessageSubmitTransaction } from "@hashgraph/sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";

export interface LedgerWithMessages {
  readonly ledger: LocalLedger;
  readonly client: Client;
  /** `0.0.N` */
  readonly topicId: string;
  readonly submitKey: PrivateKey;
  /** Consensus timestamps of messages 1..n, index = sequence number (index 0 unused). */
  readonly timestamps: readonly string[];
  /** Submits one more message; resolves with its sequence number and consensus timestamp. */
  submit(message: string): Promise<{ sequenceNumber: number; consensusAt: string }>;
  close(): Promise<void>;
}

export async function startLedgerWithMessages(messages: readonly string[], options: { secondMirrorPort?: number } = {}): Promise<LedgerWithMessages> {
  const dir = mkdtempSync(join(tmpdir(), "docverify-ll-"));
  const ledger = await startLocalLedger({ dataDir: dir, consensusMs: 0, ...options });
  const client = Client.forNetwork({ [ledger.grpcAddress]: ledger.nodeAccountId });
  client.setOperator(ledger.operator.accountId, PrivateKey.fromStringDer(ledger.operator.privateKeyDer));
  const submitKey = PrivateKey.generateED25519();
  const topicId = (await (await new TopicCreateTransaction().setSubmitKey(submitKey.publicKey).execute(client)).getReceipt(client)).topicId!.toString();
  const timestamps: string[] = [""];
  const submit = async (message: string) => {
    const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(message).freezeWith(client);
    await tx.sign(submitKey);
    const receipt = await (await tx.execute(client)).getReceipt(client);
    const sequenceNumber = Number(receipt.topicSequenceNumber);
    const res = await fetch(`${ledger.mirrorUrl}/api/v1/topics/${topicId}/messages/${sequenceNumber}`);
    const consensusAt = ((await res.json()) as { consensus_timestamp: string }).consensus_timestamp;
    timestamps[sequenceNumber] = consensusAt;
    return { sequenceNumber, consensusAt };
  };
  for (const m of messages) await submit(m);
  return {
    ledger,
    client,
    topicId,
    submitKey,
    timestamps,
    submit,
    async close() {
      client.close();
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
