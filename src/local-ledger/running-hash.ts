/**
 * The topic running hash, version 3, byte for byte as Hedera's consensus nodes compute it.
 *
 * HAPI (TransactionReceipt.topicRunningHash) lists the inputs of version 3, in order:
 * previous running hash (48 bytes), running hash version (8), payer shard, realm, number (8 each),
 * topic shard, realm, number (8 each), consensus seconds (8), consensus nanos (4), sequence
 * number (8), SHA-384 of the message (48), all big-endian, hashed with SHA-384.
 *
 * What the comment does not say, and the nodes do (ConsensusSubmitMessageHandler, and MerkleTopic
 * before it): those fields are written through a java.io.ObjectOutputStream, and the two 48-byte
 * arrays with `writeObject`, not `write`. So the SHA-384 input is a Java serialization stream:
 *
 *   AC ED 00 05                                stream magic and version
 *   75 72 00 02 5B 42 AC F3 17 F8 06 08 54 E0  TC_ARRAY, TC_CLASSDESC "[B", serialVersionUID of byte[]
 *   02 00 00 78 70                             SC_SERIALIZABLE, no fields, TC_ENDBLOCKDATA, no superclass
 *   00 00 00 30 <48 bytes>                     array length, previous running hash
 *   77 4C <76 bytes>                           TC_BLOCKDATA of the 76 bytes of longs and the int
 *   75 71 00 7E 00 00                          TC_ARRAY, TC_REFERENCE to the "[B" descriptor
 *   00 00 00 30 <48 bytes>                     array length, SHA-384 of the message
 *
 * A new topic starts with 48 zero bytes. The known-answer test reproduces the values in
 * hedera-services' own MerkleTopicTest, so a client recomputing running hashes from mirror data
 * gets the same result here as on mainnet.
 */
import { createHash } from "node:crypto";

export const RUNNING_HASH_VERSION = 3;
export const RUNNING_HASH_BYTES = 48;

const STREAM_HEADER = Uint8Array.of(0xac, 0xed, 0x00, 0x05);
const FIRST_BYTE_ARRAY = Uint8Array.of(
  0x75, 0x72, 0x00, 0x02, 0x5b, 0x42, 0xac, 0xf3, 0x17, 0xf8, 0x06, 0x08, 0x54, 0xe0, 0x02, 0x00, 0x00, 0x78, 0x70,
);
const LATER_BYTE_ARRAY = Uint8Array.of(0x75, 0x71, 0x00, 0x7e, 0x00, 0x00);
const LENGTH_48 = Uint8Array.of(0x00, 0x00, 0x00, 0x30);

export interface RunningHashInput {
  /** The topic's running hash before this message (48 zero bytes for a new topic). */
  readonly previousRunningHash: Uint8Array;
  readonly payer: { readonly shard: number; readonly realm: number; readonly num: number };
  readonly topic: { readonly shard: number; readonly realm: number; readonly num: number };
  readonly consensusSeconds: number;
  readonly consensusNanos: number;
  /** The sequence number this message receives (the topic's previous one plus 1). */
  readonly sequenceNumber: number;
  readonly message: Uint8Array;
}

export function sha384(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha384").update(data).digest());
}

/** The topic's new running hash after `input.message`, version 3. */
export function nextRunningHash(input: RunningHashInput): Uint8Array {
  if (input.previousRunningHash.length !== RUNNING_HASH_BYTES) throw new Error("previous running hash must be 48 bytes");
  const block = new DataView(new ArrayBuffer(76));
  let off = 0;
  const long = (v: number): void => {
    block.setBigInt64(off, BigInt(v));
    off += 8;
  };
  long(RUNNING_HASH_VERSION);
  long(input.payer.shard);
  long(input.payer.realm);
  long(input.payer.num);
  long(input.topic.shard);
  long(input.topic.realm);
  long(input.topic.num);
  long(input.consensusSeconds);
  block.setInt32(off, input.consensusNanos);
  off += 4;
  long(input.sequenceNumber);

  return sha384(
    Buffer.concat([
      STREAM_HEADER,
      FIRST_BYTE_ARRAY,
      LENGTH_48,
      input.previousRunningHash,
      Uint8Array.of(0x77, 76),
      new Uint8Array(block.buffer),
      LATER_BYTE_ARRAY,
      LENGTH_48,
      sha384(input.message),
    ]),
  );
}
