/**
 * The receipt (docs/receipts.md §2.1), parsed strictly: a receipt that is not exactly the
 * documented shape is refused with the path of the first field that is wrong, never guessed at.
 * Byte strings come back decoded. Unknown fields are refused too: a version-1 receipt has exactly
 * these, and a field the verifier would silently ignore is one a reader might believe was checked.
 */
import { base64ToBytes } from "./encoding.ts";

export const RECEIPT_VERSION = 1;

/** A document parsed strictly (a receipt, a trust file) is refused naming the field at fault. */
export class FieldFormatError extends Error {
  /** The dotted path of the field at fault (`anchor.sequenceNumber`), or `""` for the whole document. */
  readonly field: string;
  constructor(field: string, problem: string) {
    super(field === "" ? problem : `${field}: ${problem}`);
    this.field = field;
  }
}

export class ReceiptFormatError extends FieldFormatError {
  override readonly name = "ReceiptFormatError";
}

export interface SignedPart {
  readonly algorithm: "ML-DSA-65";
  readonly publicKey: Uint8Array;
  readonly payload: Uint8Array;
  readonly signature: Uint8Array;
}

/**
 * A batched record's inclusion proof (docs/receipts.md §2.1): its leaf message (the record's, or
 * the revocation's, ledger message as it would have been sent alone), where the leaf is in the
 * batch's tree, and the RFC 9162 path of hashes from it to the root the batch message carries.
 */
export interface Inclusion {
  readonly algorithm: "RFC9162-SHA256";
  readonly leafMessage: Uint8Array;
  /** 0-based. */
  readonly leafIndex: number;
  readonly treeSize: number;
  /** Leaf to root, 32 bytes each. */
  readonly path: readonly Uint8Array[];
}

/** The longest path a tree of 2^53 leaves could need: anything longer is no proof. */
const MAX_PATH = 64;

export interface Anchor {
  readonly network: "mainnet" | "testnet" | "previewnet" | "local";
  readonly topicId: string;
  readonly sequenceNumber: number;
  /** `seconds.nanoseconds`, nine digits of nanoseconds, as the mirror node writes it. */
  readonly consensusAt: string;
  readonly transactionId: string;
  readonly message: Uint8Array;
  readonly runningHash: Uint8Array;
  readonly inclusion: Inclusion | null;
}

/** A revocation's anchor as known when the receipt was issued: null times until consensus. */
export interface RevocationAnchor extends Omit<Anchor, "sequenceNumber" | "consensusAt" | "runningHash"> {
  readonly sequenceNumber: number | null;
  readonly consensusAt: string | null;
  readonly runningHash: Uint8Array | null;
}

export interface Receipt {
  readonly v: 1;
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly authenticatedAt: string;
  readonly kind: "record_only" | "pdf_embedded";
  readonly signerType: "org" | "user";
  readonly signer: SignedPart;
  readonly seal: SignedPart;
  readonly anchor: Anchor;
  readonly keyAnnouncement: { readonly topicId: string; readonly sequenceNumber: number; readonly consensusAt: string; readonly message: Uint8Array };
  readonly revocation: { readonly reason: string; readonly revokedAt: string; readonly anchor: RevocationAnchor } | null;
  readonly mirrorNodes: readonly string[];
  readonly issuedAt: string;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const DOC_HASH_RE = /^sha256:[0-9a-f]{64}$/;
export const CONSENSUS_RE = /^\d{1,12}\.\d{9}$/;
const RFC3339_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const ENTITY_RE = /^0\.0\.\d{1,19}$/;
const TRANSACTION_ID_RE = /^0\.0\.\d{1,19}@\d{1,12}\.\d{1,9}$/;
const REASON_RE = /^[A-Z_]{1,64}$/;
export const NETWORKS = ["mainnet", "testnet", "previewnet", "local"] as const;
export type Network = (typeof NETWORKS)[number];

/** Whole milliseconds of an RFC 3339 UTC time with exactly three fractional digits, or null. */
export function rfc3339MsToMillis(text: string): number | null {
  if (!RFC3339_MS_RE.test(text)) return null;
  const ms = Date.parse(text);
  // Date.parse accepts 2026-02-30 as March 2nd: the round trip refuses it.
  return Number.isFinite(ms) && new Date(ms).toISOString() === text ? ms : null;
}

/**
 * A mirror node's base URL in its one comparable spelling (scheme and host lowercased by the
 * URL parser, no trailing `/`), or null when it is not an http(s) URL without query, fragment or
 * credentials.
 */
export function normaliseMirrorUrl(text: string): string | null {
  if (typeof text !== "string" || !/^https?:\/\//i.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "" || text.includes("?") || text.includes("#")) return null;
  if (url.username !== "" || url.password !== "") return null;
  return (url.origin + url.pathname).replace(/\/+$/, "");
}

type Json = unknown;

/** The error a parser built on Fields throws: a field's dotted path and what is wrong with it. */
export type FieldError = new (field: string, problem: string) => FieldFormatError;

/**
 * Reads one object's fields by name, each exactly once; refuses the fields nobody read. Shared by
 * the receipt's parser and the trust file's (trust.ts), each with its own error class.
 */
export class Fields {
  private readonly seen = new Set<string>();
  constructor(
    private readonly value: Record<string, Json>,
    private readonly path: string,
    private readonly Err: FieldError = ReceiptFormatError,
  ) {}

  static of(value: Json, path: string, Err: FieldError = ReceiptFormatError): Fields {
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Err(path, "expected an object");
    return new Fields(value as Record<string, Json>, path, Err);
  }

  /** The object at `key`, read the same way. */
  object(key: string): Fields {
    return Fields.of(this.raw(key), this.name(key), this.Err);
  }

  /** The array at `key`, each element read by `read` with its path (`key[i]`). */
  array<T>(key: string, read: (value: Json, path: string) => T): T[] {
    const v = this.raw(key);
    if (!Array.isArray(v)) throw new this.Err(this.name(key), "expected an array");
    return v.map((item, i) => read(item, `${this.name(key)}[${i}]`));
  }

  /** Whether the object has `key` (optional fields). */
  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.value, key);
  }

  /** The names of the object's own fields (maps keyed by name). */
  keys(): string[] {
    return Object.keys(this.value);
  }

  name(key: string): string {
    return this.path === "" ? key : `${this.path}.${key}`;
  }

  raw(key: string): Json {
    this.seen.add(key);
    if (!Object.prototype.hasOwnProperty.call(this.value, key)) throw new this.Err(this.name(key), "missing");
    return this.value[key];
  }

  string(key: string, re: RegExp, expected: string): string {
    const v = this.raw(key);
    if (typeof v !== "string" || !re.test(v)) throw new this.Err(this.name(key), `expected ${expected}`);
    return v;
  }

  oneOf<T extends string>(key: string, values: readonly T[]): T {
    const v = this.raw(key);
    if (typeof v !== "string" || !(values as readonly string[]).includes(v)) throw new this.Err(this.name(key), `expected one of ${values.map((x) => JSON.stringify(x)).join(", ")}`);
    return v as T;
  }

  time(key: string): string {
    const v = this.raw(key);
    if (typeof v !== "string" || rfc3339MsToMillis(v) === null) throw new this.Err(this.name(key), "expected an RFC 3339 UTC time with milliseconds (2026-01-15T09:30:00.123Z)");
    return v;
  }

  integer(key: string, min = 1): number {
    const v = this.raw(key);
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) throw new this.Err(this.name(key), `expected an integer ≥ ${min}`);
    return v;
  }

  bytes(key: string, nonEmpty = true): Uint8Array {
    const v = this.raw(key);
    const b = typeof v === "string" ? base64ToBytes(v) : null;
    if (b === null) throw new this.Err(this.name(key), "expected standard base64 with padding");
    if (nonEmpty && b.length === 0) throw new this.Err(this.name(key), "expected non-empty bytes");
    return b;
  }

  /** `null`, or what `read` makes of the present value. */
  nullable<T>(key: string, read: (f: Fields, key: string) => T): T | null {
    return this.raw(key) === null ? null : read(this, key);
  }

  done(): void {
    for (const key of Object.keys(this.value)) {
      if (!this.seen.has(key)) throw new this.Err(this.name(key), "unexpected field");
    }
  }
}

function signedPart(parent: Fields, key: string): SignedPart {
  const f = Fields.of(parent.raw(key), parent.name(key));
  const part: SignedPart = {
    algorithm: f.oneOf("algorithm", ["ML-DSA-65"] as const),
    publicKey: f.bytes("publicKey"),
    payload: f.bytes("payload"),
    signature: f.bytes("signature"),
  };
  f.done();
  return part;
}

function inclusion(parent: Fields, key: string): Inclusion | null {
  const v = parent.raw(key);
  if (v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) throw new ReceiptFormatError(parent.name(key), "expected null or an object");
  const f = Fields.of(v, parent.name(key));
  const proof: Inclusion = {
    algorithm: f.oneOf("algorithm", ["RFC9162-SHA256"] as const),
    leafMessage: f.bytes("leafMessage"),
    leafIndex: f.integer("leafIndex", 0),
    treeSize: f.integer("treeSize"),
    path: f.array("path", (h, at) => {
      const b = typeof h === "string" ? base64ToBytes(h) : null;
      if (b === null || b.length !== 32) throw new ReceiptFormatError(at, "expected 32 bytes in standard base64 with padding");
      return b;
    }),
  };
  if (proof.path.length > MAX_PATH) throw new ReceiptFormatError(f.name("path"), `expected at most ${MAX_PATH} hashes`);
  f.done();
  return proof;
}

const consensus = (f: Fields, key: string) => f.string(key, CONSENSUS_RE, "a consensus time, seconds.nanoseconds with nine digits");
const topicId = (f: Fields, key: string) => f.string(key, ENTITY_RE, "an entity id 0.0.N");

function anchor(parent: Fields, key: string): Anchor {
  const f = Fields.of(parent.raw(key), parent.name(key));
  const a: Anchor = {
    network: f.oneOf("network", NETWORKS),
    topicId: topicId(f, "topicId"),
    sequenceNumber: f.integer("sequenceNumber"),
    consensusAt: consensus(f, "consensusAt"),
    transactionId: f.string("transactionId", TRANSACTION_ID_RE, "a transaction id 0.0.A@seconds.nanoseconds"),
    message: f.bytes("message"),
    runningHash: f.bytes("runningHash"),
    inclusion: inclusion(f, "inclusion"),
  };
  f.done();
  return a;
}

function revocationAnchor(parent: Fields, key: string): RevocationAnchor {
  const f = Fields.of(parent.raw(key), parent.name(key));
  const a: RevocationAnchor = {
    network: f.oneOf("network", NETWORKS),
    topicId: topicId(f, "topicId"),
    sequenceNumber: f.nullable("sequenceNumber", (g, k) => g.integer(k)),
    consensusAt: f.nullable("consensusAt", consensus),
    transactionId: f.string("transactionId", TRANSACTION_ID_RE, "a transaction id 0.0.A@seconds.nanoseconds"),
    message: f.bytes("message"),
    runningHash: f.nullable("runningHash", (g, k) => g.bytes(k)),
    inclusion: inclusion(f, "inclusion"),
  };
  f.done();
  return a;
}

function mirrorNodes(parent: Fields, key: string): string[] {
  const v = parent.raw(key);
  if (!Array.isArray(v)) throw new ReceiptFormatError(parent.name(key), "expected an array of mirror node URLs");
  return v.map((u, i) => {
    if (typeof u !== "string" || normaliseMirrorUrl(u) === null) throw new ReceiptFormatError(`${parent.name(key)}[${i}]`, "expected an http(s) URL without query or fragment");
    return u;
  });
}

/** Parses a receipt's text. Throws ReceiptFormatError, naming the field, for anything not a version-1 receipt. */
export function parseReceipt(text: string): Receipt {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ReceiptFormatError("", "not JSON (truncated or damaged?)");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ReceiptFormatError("", "not a JSON object");
  const top = new Fields(value as Record<string, Json>, "");
  const v = top.raw("v");
  if (v !== RECEIPT_VERSION) throw new ReceiptFormatError("v", `unsupported receipt version ${JSON.stringify(v) ?? "undefined"} (this verifier reads version ${RECEIPT_VERSION})`);

  const recordId = top.string("recordId", UUID_RE, "a lowercase canonical UUID");
  const originalDocHash = top.string("originalDocHash", DOC_HASH_RE, "sha256: and 64 lowercase hex digits");
  const authenticatedAt = top.time("authenticatedAt");
  const kind = top.oneOf("kind", ["record_only", "pdf_embedded"] as const);
  const signerType = top.oneOf("signerType", ["org", "user"] as const);
  const signer = signedPart(top, "signer");
  const seal = signedPart(top, "seal");
  const anchored = anchor(top, "anchor");

  const ka = Fields.of(top.raw("keyAnnouncement"), "keyAnnouncement");
  const keyAnnouncement = { topicId: topicId(ka, "topicId"), sequenceNumber: ka.integer("sequenceNumber"), consensusAt: consensus(ka, "consensusAt"), message: ka.bytes("message") };
  ka.done();

  const revocation = top.nullable("revocation", (t, k) => {
    const r = Fields.of(t.raw(k), "revocation");
    const out = { reason: r.string("reason", REASON_RE, "a revocation reason (A-Z and _)"), revokedAt: r.time("revokedAt"), anchor: revocationAnchor(r, "anchor") };
    r.done();
    return out;
  });

  const receipt: Receipt = {
    v: RECEIPT_VERSION,
    recordId,
    originalDocHash,
    authenticatedAt,
    kind,
    signerType,
    signer,
    seal,
    anchor: anchored,
    keyAnnouncement,
    revocation,
    mirrorNodes: mirrorNodes(top, "mirrorNodes"),
    issuedAt: top.time("issuedAt"),
  };
  top.done();
  return receipt;
}
