/**
 * The mirror node's response shapes, written for these tests from the public mirror node's
 * published REST document (hiero-mirror-node `rest/api/v1/openapi.yml`, read 2026-11-24): field
 * names, types, formats (as patterns), nullability and required fields of what docverify and its
 * verifier read. Written by hand, in a small subset of JSON Schema, with a checker of its own.
 *
 * One deliberate difference from the document: objects are closed (`closed: true`), so a field
 * the published document does not name is reported; the real service may send more than its
 * document says, the local one should not invent fields. Where the real service is known to
 * differ from its document, the schema follows the service and says so (NetworkNode's
 * `grpc_proxy_endpoint`, sent as null).
 */

export type Schema =
  | { type: "string"; nullable?: boolean; pattern?: RegExp; enum?: readonly string[] }
  | { type: "integer"; nullable?: boolean; minimum?: number }
  | { type: "boolean"; nullable?: boolean }
  | { type: "array"; nullable?: boolean; items: Schema }
  | { type: "object"; nullable?: boolean; properties: Readonly<Record<string, Schema>>; required?: readonly string[]; closed?: boolean };

/** Problems with `value` against `schema`, each as `path: what`; empty when it conforms. */
export function check(schema: Schema, value: unknown, path = "$"): string[] {
  if (value === null) return schema.nullable ? [] : [`${path}: null where ${schema.type} is required`];
  switch (schema.type) {
    case "string":
      if (typeof value !== "string") return [`${path}: ${typeof value}, not a string`];
      if (schema.pattern && !schema.pattern.test(value)) return [`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`];
      if (schema.enum && !schema.enum.includes(value)) return [`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`];
      return [];
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) return [`${path}: ${JSON.stringify(value)} is not an integer`];
      if (schema.minimum !== undefined && value < schema.minimum) return [`${path}: ${value} is below ${schema.minimum}`];
      return [];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${path}: ${JSON.stringify(value)} is not a boolean`];
    case "array":
      if (!Array.isArray(value)) return [`${path}: not an array`];
      return value.flatMap((v, i) => check(schema.items, v, `${path}[${i}]`));
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return [`${path}: not an object`];
      const o = value as Record<string, unknown>;
      const problems: string[] = [];
      for (const r of schema.required ?? []) if (!(r in o)) problems.push(`${path}.${r}: missing`);
      for (const [k, v] of Object.entries(o)) {
        const s = schema.properties[k];
        if (s) problems.push(...check(s, v, `${path}.${k}`));
        else if (schema.closed) problems.push(`${path}.${k}: not in the published document`);
      }
      return problems;
    }
  }
}

const nullable = <S extends Schema>(s: S): S => ({ ...s, nullable: true });
const object = (properties: Record<string, Schema>, required: readonly string[] = []): Schema => ({ type: "object", properties, required, closed: true });
const array = (items: Schema): Schema => ({ type: "array", items });

// The document's building blocks.
/** EntityId: `shard.realm.num`, each 1 to 10 digits; nullable in the document. */
export const EntityId: Schema = { type: "string", pattern: /^\d{1,10}\.\d{1,10}\.\d{1,10}$/, nullable: true };
/** Timestamp: `seconds(.nanos)`, at most 10 digits of seconds and 9 of nanos. */
export const Timestamp: Schema = { type: "string", pattern: /^\d{1,10}(\.\d{1,9})?$/ };
export const TimestampNullable: Schema = nullable(Timestamp);
export const TimestampRange: Schema = object({ from: Timestamp, to: TimestampNullable });
export const TimestampRangeNullable: Schema = nullable(TimestampRange);
/** Key: `{_type, key}`, or null. */
export const Key: Schema = nullable(object({ _type: { type: "string", enum: ["ECDSA_SECP256K1", "ED25519", "ProtobufEncoded"] }, key: { type: "string" } }));
export const Links: Schema = object({ next: { type: "string", nullable: true } });
/** format: byte, standard base64 with padding. */
const Bytes: Schema = { type: "string", pattern: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/ };

export const TransactionId: Schema = object({
  account_id: EntityId,
  nonce: { type: "integer", minimum: 0, nullable: true },
  scheduled: { type: "boolean", nullable: true },
  transaction_valid_start: Timestamp,
});
export const ChunkInfo: Schema = nullable(object({ initial_transaction_id: TransactionId, number: { type: "integer" }, total: { type: "integer" } }));

/** GET /api/v1/topics/{id}/messages/{seq}, /api/v1/topics/messages/{ts}, and each of a page's messages. */
export const TopicMessage: Schema = object(
  {
    chunk_info: ChunkInfo,
    consensus_timestamp: Timestamp,
    // `base64` by default; with `encoding=utf-8` the text itself, so any string.
    message: { type: "string" },
    payer_account_id: EntityId,
    running_hash: Bytes,
    running_hash_version: { type: "integer" },
    sequence_number: { type: "integer" },
    topic_id: EntityId,
  },
  ["consensus_timestamp", "message", "payer_account_id", "running_hash", "running_hash_version", "sequence_number", "topic_id"],
);
/** GET /api/v1/topics/{id}/messages */
export const TopicMessagesResponse: Schema = object({ messages: array(TopicMessage), links: Links }, ["messages", "links"]);

const FixedCustomFee: Schema = object({ amount: { type: "integer" }, collector_account_id: EntityId, denominating_token_id: EntityId });
/** GET /api/v1/topics/{id} */
export const Topic: Schema = object(
  {
    admin_key: Key,
    auto_renew_account: EntityId,
    auto_renew_period: { type: "integer", nullable: true },
    created_timestamp: TimestampNullable,
    custom_fees: object({ created_timestamp: Timestamp, fixed_fees: array(FixedCustomFee) }),
    deleted: { type: "boolean", nullable: true },
    fee_exempt_key_list: array(Key),
    fee_schedule_key: Key,
    memo: { type: "string" },
    submit_key: Key,
    timestamp: TimestampRange,
    topic_id: EntityId,
  },
  ["admin_key", "auto_renew_account", "auto_renew_period", "created_timestamp", "custom_fees", "deleted", "fee_exempt_key_list", "fee_schedule_key", "memo", "submit_key", "timestamp", "topic_id"],
);

const TRANSACTION_TYPES = ["CONSENSUSCREATETOPIC", "CONSENSUSSUBMITMESSAGE", "CONSENSUSUPDATETOPIC", "CONSENSUSDELETETOPIC", "CRYPTOTRANSFER", "CRYPTOCREATEACCOUNT", "CRYPTOUPDATEACCOUNT", "UNKNOWN"];
/** One transaction (the document's Transaction; TransactionDetail adds the optional `assessed_custom_fees`). */
export const Transaction: Schema = object({
  assessed_custom_fees: array(object({ amount: { type: "integer" }, collector_account_id: EntityId, effective_payer_account_ids: array(EntityId), token_id: EntityId })),
  batch_key: Key,
  bytes: { type: "string", nullable: true },
  charged_tx_fee: { type: "integer" },
  consensus_timestamp: Timestamp,
  entity_id: EntityId,
  max_custom_fees: array(object({ account_id: EntityId, amount: { type: "integer" }, denominating_token_id: EntityId })),
  max_fee: { type: "string" },
  memo_base64: nullable(Bytes),
  // TransactionTypes is a closed list in the document; these are the ones a local ledger can write.
  name: { type: "string", enum: TRANSACTION_TYPES },
  nft_transfers: array(
    object({ is_approval: { type: "boolean" }, receiver_account_id: EntityId, sender_account_id: EntityId, serial_number: { type: "integer" }, token_id: EntityId }, [
      "is_approval",
      "receiver_account_id",
      "sender_account_id",
      "token_id",
      "serial_number",
    ]),
  ),
  node: EntityId,
  nonce: { type: "integer", minimum: 0 },
  parent_consensus_timestamp: TimestampNullable,
  result: { type: "string" },
  scheduled: { type: "boolean" },
  staking_reward_transfers: array(object({ account: EntityId, amount: { type: "integer" } }, ["account", "amount"])),
  token_transfers: array(object({ token_id: EntityId, account: EntityId, amount: { type: "integer" }, is_approval: { type: "boolean" } }, ["token_id", "account", "amount"])),
  transaction_hash: Bytes,
  transaction_id: { type: "string", pattern: /^(\d+)\.(\d+)\.(\d+)-(\d{1,19})-(\d{1,9})$/ },
  transfers: array(object({ account: EntityId, amount: { type: "integer" }, is_approval: { type: "boolean" } }, ["account", "amount"])),
  valid_duration_seconds: { type: "string" },
  valid_start_timestamp: Timestamp,
});
/** GET /api/v1/transactions/{id} */
export const TransactionByIdResponse: Schema = object({ transactions: array(Transaction) });

/** GET /api/v1/accounts/{id}: AccountInfo with the account's transactions and links. */
export const AccountBalanceTransactions: Schema = object(
  {
    account: EntityId,
    alias: { type: "string", nullable: true, pattern: /^(?:[A-Z2-7]{8})*(?:[A-Z2-7]{2}|[A-Z2-7]{4,5}|[A-Z2-7]{7,8})$/ },
    auto_renew_period: { type: "integer", nullable: true },
    balance: nullable(object({ timestamp: TimestampNullable, balance: { type: "integer", nullable: true }, tokens: array(object({ token_id: EntityId, balance: { type: "integer" } })) }, ["timestamp", "balance", "tokens"])),
    created_timestamp: TimestampNullable,
    decline_reward: { type: "boolean" },
    deleted: { type: "boolean", nullable: true },
    ethereum_nonce: { type: "integer", nullable: true },
    evm_address: { type: "string", nullable: true, pattern: /^(0x)?[A-Fa-f0-9]{40}$/ },
    expiry_timestamp: TimestampNullable,
    key: Key,
    max_automatic_token_associations: { type: "integer", nullable: true },
    memo: { type: "string", nullable: true },
    pending_reward: { type: "integer" },
    receiver_sig_required: { type: "boolean", nullable: true },
    staked_account_id: EntityId,
    staked_node_id: { type: "integer", nullable: true },
    stake_period_start: TimestampNullable,
    transactions: array(Transaction),
    links: Links,
  },
  [
    "account", "alias", "auto_renew_period", "balance", "created_timestamp", "decline_reward", "deleted", "ethereum_nonce", "evm_address", "expiry_timestamp", "key",
    "max_automatic_token_associations", "memo", "receiver_sig_required", "staked_account_id", "staked_node_id", "stake_period_start", "transactions", "links",
  ],
);

const ServiceEndpoint: Schema = object({ domain_name: { type: "string" }, ip_address_v4: { type: "string" }, port: { type: "integer" } }, ["domain_name", "ip_address_v4", "port"]);
/** One node of GET /api/v1/network/nodes. */
export const NetworkNode: Schema = object(
  {
    admin_key: Key,
    decline_reward: { type: "boolean", nullable: true },
    description: { type: "string", nullable: true },
    file_id: EntityId,
    // The document says ServiceEndpoint (not nullable); the real service sends null when the node
    // has none, and so does the local one: the schema follows the service.
    grpc_proxy_endpoint: nullable(ServiceEndpoint),
    max_stake: { type: "integer", nullable: true },
    memo: { type: "string", nullable: true },
    min_stake: { type: "integer", nullable: true },
    node_account_id: EntityId,
    node_id: { type: "integer" },
    node_cert_hash: { type: "string", nullable: true },
    public_key: { type: "string", nullable: true },
    reward_rate_start: { type: "integer", nullable: true },
    service_endpoints: array(ServiceEndpoint),
    stake: { type: "integer", nullable: true },
    stake_not_rewarded: { type: "integer", nullable: true },
    stake_rewarded: { type: "integer", nullable: true },
    staking_period: TimestampRangeNullable,
    timestamp: TimestampRange,
  },
  [
    "admin_key", "decline_reward", "description", "file_id", "grpc_proxy_endpoint", "max_stake", "memo", "min_stake", "node_account_id", "node_id", "node_cert_hash",
    "public_key", "reward_rate_start", "service_endpoints", "stake", "stake_not_rewarded", "stake_rewarded", "staking_period", "timestamp",
  ],
);
/** GET /api/v1/network/nodes */
export const NetworkNodesResponse: Schema = object({ nodes: array(NetworkNode), links: Links }, ["nodes", "links"]);

/** Every error body: `_status.messages[]`, each a `message` and, from the rest-java routes, a `detail`. */
export const ErrorBody: Schema = object(
  {
    _status: object(
      {
        messages: array(
          object({ data: { type: "string", nullable: true, pattern: /^0x[0-9a-fA-F]+$/ }, detail: { type: "string", nullable: true }, message: { type: "string" } }, ["message"]),
        ),
      },
      ["messages"],
    ),
  },
  ["_status"],
);
