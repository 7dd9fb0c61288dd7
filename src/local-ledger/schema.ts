/**
 * The local ledger's database layout: the pragmas every connection sets, in their order, and the
 * schema with its version. The store (store.ts) creates it on a fresh file and refuses a file of
 * another version; nothing here opens a database.
 */

/**
 * Set in this order on purpose:
 * 1. `busy_timeout` first, so even the next pragmas wait for a lock another connection holds
 *    rather than failing at once with SQLITE_BUSY.
 * 2. `journal_mode=WAL`: the mirror's readers never block the consensus writer, nor it them.
 * 3. `foreign_keys=ON`: off by default and per connection.
 * 4. `synchronous=FULL`: a precheck OK promises the transaction will reach consensus, and the
 *    product relies on that promise across crashes; in WAL mode NORMAL may lose the last commits
 *    on power loss, FULL syncs the WAL on every commit.
 */
export const LEDGER_PRAGMAS = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL"];

export const SCHEMA_VERSION = 1;

export const SCHEMA = `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE accounts (
  num INTEGER PRIMARY KEY,
  key BLOB NOT NULL,              -- proto.Key bytes
  balance INTEGER NOT NULL        -- tinybars
) STRICT;

CREATE TABLE topics (
  num INTEGER PRIMARY KEY,
  memo TEXT NOT NULL,
  admin_key BLOB,                 -- proto.Key bytes, NULL when immutable
  submit_key BLOB,                -- proto.Key bytes, NULL when anyone may submit
  auto_renew_account INTEGER,
  auto_renew_period INTEGER NOT NULL,
  expiration_seconds INTEGER NOT NULL,
  sequence_number INTEGER NOT NULL,
  running_hash BLOB NOT NULL,
  created_seconds INTEGER NOT NULL,
  created_nanos INTEGER NOT NULL
) STRICT;

-- Every transaction accepted at precheck, in acceptance order (seq). The unique key is the
-- transaction id: the deduplication the nodes do.
CREATE TABLE transactions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  payer INTEGER NOT NULL,
  valid_start_seconds INTEGER NOT NULL,
  valid_start_nanos INTEGER NOT NULL,
  nonce INTEGER NOT NULL,
  scheduled INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('CONSENSUSCREATETOPIC', 'CONSENSUSSUBMITMESSAGE')),
  transaction_bytes BLOB NOT NULL,  -- proto.Transaction exactly as received
  transaction_hash BLOB NOT NULL,   -- SHA-384 of signedTransactionBytes, as the SDK computes it
  valid_duration_seconds INTEGER NOT NULL,
  max_fee INTEGER NOT NULL,
  memo BLOB NOT NULL,
  accepted_ms INTEGER NOT NULL,
  due_ms INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'dropped', 'final')),
  forced_status INTEGER,            -- fault hook: the result to give at consensus
  consensus_seconds INTEGER,
  consensus_nanos INTEGER,
  result INTEGER,                   -- ResponseCodeEnum
  entity_num INTEGER,               -- the topic created, or the topic submitted to
  charged_fee INTEGER,
  topic_sequence_number INTEGER,
  topic_running_hash BLOB,
  UNIQUE (payer, valid_start_seconds, valid_start_nanos, nonce, scheduled)
) STRICT;
CREATE INDEX transactions_pending ON transactions (due_ms, seq) WHERE state = 'pending';
CREATE INDEX transactions_consensus ON transactions (consensus_seconds, consensus_nanos) WHERE state = 'final';
CREATE INDEX transactions_hash ON transactions (transaction_hash);

CREATE TABLE topic_messages (
  topic_num INTEGER NOT NULL REFERENCES topics (num),
  sequence_number INTEGER NOT NULL,
  consensus_seconds INTEGER NOT NULL,
  consensus_nanos INTEGER NOT NULL,
  message BLOB NOT NULL,
  payer INTEGER NOT NULL,
  running_hash BLOB NOT NULL,
  running_hash_version INTEGER NOT NULL,
  chunk_number INTEGER,
  chunk_total INTEGER,
  initial_transaction_id BLOB,      -- proto.TransactionID bytes
  tx_seq INTEGER NOT NULL REFERENCES transactions (seq),
  PRIMARY KEY (topic_num, sequence_number)
) STRICT;
CREATE INDEX topic_messages_consensus ON topic_messages (consensus_seconds, consensus_nanos);
CREATE INDEX topic_messages_topic_consensus ON topic_messages (topic_num, consensus_seconds, consensus_nanos);
`;
