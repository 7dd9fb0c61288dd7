/**
 * The anchoring bench's exactly-once check with batches (scripts/bench/exactly-once.ts): a topic
 * served by a fake mirror and a data folder's rows, each fault it must see made once.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { merkleTree } from "../src/anchoring/merkle.ts";
import { encodeBatchMessage } from "../src/records/messages.ts";
import { checkExactlyOnce } from "../scripts/bench/exactly-once.ts";

const ORG = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
const TOPIC = "0.0.1001";
const id = (n: number) => `0190f5a3-7c1e-7d2a-9b4c-${String(n).padStart(12, "0")}`;
const leafMessage = (n: number) => new TextEncoder().encode(JSON.stringify({ v: 1, type: "record", recordId: id(n) }));

/** What the fake mirror lists: sequence number → bytes. */
let onTopic: Uint8Array[] = [];
const mirror = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () =>
    Response.json({
      messages: onTopic.map((m, i) => ({ sequence_number: i + 1, consensus_timestamp: `1700000000.${String(i).padStart(9, "0")}`, message: Buffer.from(m).toString("base64") })),
      links: { next: null },
    }),
});
afterAll(() => mirror.stop(true));
const mirrorUrl = `http://127.0.0.1:${mirror.port}`;

interface World {
  readonly db: Database;
  /** Anchors batch `batch` (organisation sequence) at the next sequence number with these records' leaves; returns its transaction id. */
  batch(batch: number, records: number[]): string;
}

function world(): World {
  const db = new Database(":memory:");
  db.run(`CREATE TABLE ledger_transactions (transaction_id TEXT PRIMARY KEY, kind TEXT, topic_id TEXT, state TEXT, message BLOB, sequence_number INTEGER,
    batch_size INTEGER, batch_leaf INTEGER DEFAULT 0, batch_transaction_id TEXT, leaf_index INTEGER, record_id TEXT)`);
  db.run("CREATE TABLE records (id TEXT PRIMARY KEY, topic_id TEXT, anchor_state TEXT, transaction_id TEXT, sequence_number INTEGER)");
  const announcement = new TextEncoder().encode(JSON.stringify({ v: 1, type: "key", orgId: ORG }));
  onTopic = [announcement];
  db.query("INSERT INTO ledger_transactions (transaction_id, kind, topic_id, state, message, sequence_number) VALUES ('a', 'key_announcement', ?, 'anchored', ?, 1)").run(TOPIC, announcement);
  return {
    db,
    batch(batch, records) {
      const tree = merkleTree(records.map(leafMessage));
      const message = encodeBatchMessage({ orgId: ORG, batch, size: records.length, root: tree.root, revoked: [] });
      onTopic.push(message);
      const seq = onTopic.length;
      const tx = `batch-${batch}-${seq}`;
      db.query("INSERT INTO ledger_transactions (transaction_id, kind, topic_id, state, message, sequence_number, batch_size) VALUES (?, 'batch_message', ?, 'anchored', ?, ?, ?)").run(tx, TOPIC, message, seq, records.length);
      records.forEach((r, i) => {
        db.query(
          "INSERT INTO ledger_transactions (transaction_id, kind, topic_id, state, message, sequence_number, batch_leaf, batch_transaction_id, leaf_index, record_id) VALUES (?, 'record_message', ?, 'anchored', ?, ?, 1, ?, ?, ?)",
        ).run(`leaf-${tx}-${r}`, TOPIC, leafMessage(r), seq, tx, i, id(r));
        db.query("INSERT INTO records (id, topic_id, anchor_state, transaction_id, sequence_number) VALUES (?, ?, 'anchored', ?, ?) ON CONFLICT DO NOTHING").run(id(r), TOPIC, tx, seq);
      });
      return tx;
    },
  };
}

test("two batches, each record's leaf in one of them: exactly once, messages and leaves counted", async () => {
  const w = world();
  w.batch(1, [1, 2, 3]);
  w.batch(2, [4]);
  const c = await checkExactlyOnce(w.db, mirrorUrl, TOPIC, [1, 2, 3, 4].map(id));
  expect(c).toMatchObject({ records: 4, ledgerMessages: 3, batchMessages: 2, otherMessages: 1, leaves: 4, meanLeavesPerBatch: 2, largestBatch: 3, exactlyOnce: true });
});

test("a record's leaf in two anchored batches is a duplicate", async () => {
  const w = world();
  w.batch(1, [1, 2]);
  w.batch(2, [2, 3]);
  const c = await checkExactlyOnce(w.db, mirrorUrl, TOPIC, [1, 2, 3].map(id));
  expect(c.duplicates).toBe(1);
  expect(c.exactlyOnce).toBe(false);
});

test("the same batch twice on the topic is a duplicate, and the second copy unknown", async () => {
  const w = world();
  w.batch(1, [1, 2]);
  onTopic.push(onTopic[1]!);
  const c = await checkExactlyOnce(w.db, mirrorUrl, TOPIC, [1, 2].map(id));
  expect(c.duplicates).toBe(1);
  expect(c.unknown).toBe(1);
  expect(c.exactlyOnce).toBe(false);
});

test("leaves that do not give the root on the ledger, or are not numbered from 0, are a wrong root", async () => {
  const w = world();
  const tx = w.batch(1, [1, 2, 3]);
  w.db.query("UPDATE ledger_transactions SET message = ? WHERE batch_transaction_id = ? AND leaf_index = 1").run(leafMessage(9), tx);
  expect((await checkExactlyOnce(w.db, mirrorUrl, TOPIC, [])).wrongRoot).toBe(1);

  const v = world();
  const tx2 = v.batch(1, [1, 2]);
  v.db.query("UPDATE ledger_transactions SET leaf_index = 5 WHERE batch_transaction_id = ? AND leaf_index = 1").run(tx2);
  expect((await checkExactlyOnce(v.db, mirrorUrl, TOPIC, [])).wrongRoot).toBe(1);
});

test("an acknowledged record the data folder does not have, a record in no batch, one naming another batch: each counted", async () => {
  const w = world();
  w.batch(1, [1, 2]);
  const other = w.batch(2, [3]);
  w.db.query("INSERT INTO records (id, topic_id, anchor_state, transaction_id, sequence_number) VALUES (?, ?, 'accepted', 'x', NULL)").run(id(7), TOPIC);
  w.db.query("UPDATE records SET transaction_id = ? WHERE id = ?").run(other, id(1));
  const c = await checkExactlyOnce(w.db, mirrorUrl, TOPIC, [id(1), id(8)]);
  expect(c).toMatchObject({ acknowledgedMissing: 1, missing: 1, notAnchored: 1, wrongAnchor: 1, exactlyOnce: false });
});

test("an anchored batch row whose message is not on the topic is missing; a message no row has is unknown", async () => {
  const w = world();
  w.batch(1, [1]);
  onTopic.pop();
  onTopic.push(encodeBatchMessage({ orgId: ORG, batch: 1, size: 1, root: new Uint8Array(32), revoked: [] }));
  const c = await checkExactlyOnce(w.db, mirrorUrl, TOPIC, []);
  expect(c.batchesMissing).toBe(1);
  expect(c.unknown).toBe(1);
  expect(c.missing).toBe(1);
});
