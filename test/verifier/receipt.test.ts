/**
 * parseReceipt is strict (docs/receipts.md §2.1): every field present, of its type and encoding;
 * anything else is a ReceiptFormatError naming the field. Walks every leaf of a real receipt and
 * breaks each one in every way that type allows.
 */
import { describe, expect, test } from "bun:test";
import { parseReceipt, ReceiptFormatError } from "../../src/verifier/index.ts";
import { buildReceipt, consensusOf, revocationBytes } from "./fixtures.ts";

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

/** An inclusion proof of the revocation's leaf, well formed (the parser checks its shape; verify.ts its arithmetic). */
const INCLUSION = { algorithm: "RFC9162-SHA256", leafMessage: b64(revocationBytes()), leafIndex: 1, treeSize: 3, path: [b64(new Uint8Array(32).fill(7)), b64(new Uint8Array(32).fill(9))] };

/** A receipt with a revocation anchored in a batch, so its fields and its inclusion proof's are walked too. */
function fullReceipt(): Record<string, any> {
  const r = buildReceipt().receipt;
  r.revocation = {
    reason: "SUPERSEDED",
    revokedAt: "2026-01-16T09:30:00.123Z",
    anchor: { network: "testnet", topicId: "0.0.5012345", sequenceNumber: 3, consensusAt: consensusOf(3), transactionId: "0.0.1234@1768469500.5", message: b64(revocationBytes()), runningHash: b64(new Uint8Array(48)), inclusion: structuredClone(INCLUSION) },
  };
  r.mirrorNodes = ["https://testnet.mirrornode.hedera.com", "http://127.0.0.1:5551/"];
  return r;
}

/** Every path to a leaf (or to an array or null), dotted. */
function leaves(value: unknown, path = ""): string[] {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    return [...(path === "" ? [] : [path]), ...Object.entries(value).flatMap(([k, v]) => leaves(v, path === "" ? k : `${path}.${k}`))];
  }
  return [path];
}

function setAt(root: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split(".");
  let o = root;
  for (const k of keys.slice(0, -1)) o = o[k];
  if (value === undefined) delete o[keys.at(-1)!];
  else o[keys.at(-1)!] = value;
}

function getAt(root: Record<string, any>, path: string): unknown {
  return path.split(".").reduce((o: any, k) => o[k], root);
}

function formatError(text: string): ReceiptFormatError {
  try {
    parseReceipt(text);
  } catch (e) {
    if (e instanceof ReceiptFormatError) return e;
    throw e;
  }
  throw new Error(`accepted: ${text.slice(0, 200)}`);
}

/** The values of another type for a field currently holding `v`. */
function wrongTypes(v: unknown): unknown[] {
  if (typeof v === "string") return [42, true, {}, [], null, [v], { value: v }];
  if (typeof v === "number") return [String(v), 1.5, 0, -1, true, null, {}, [v]];
  if (Array.isArray(v)) return ["x", {}, null, 1, [1], [{}]];
  return ["x", [], 1, true, null];
}

const NULLABLE = new Set(["revocation", "anchor.inclusion", "revocation.anchor.inclusion", "revocation.anchor.sequenceNumber", "revocation.anchor.consensusAt", "revocation.anchor.runningHash"]);

describe("a good receipt", () => {
  test("parses, with its byte strings decoded", () => {
    const r = parseReceipt(JSON.stringify(fullReceipt()));
    expect(r.v).toBe(1);
    expect(r.signer.publicKey).toBeInstanceOf(Uint8Array);
    expect(r.signer.publicKey.length).toBe(1952);
    expect(r.signer.signature.length).toBe(3309);
    expect(r.seal.payload.length).toBe(3495);
    expect(r.anchor.runningHash.length).toBe(48);
    expect(new TextDecoder().decode(r.anchor.message)).toStartWith('{"v":1,"type":"record"');
    expect(r.anchor.sequenceNumber).toBe(2);
    expect(r.revocation!.anchor.sequenceNumber).toBe(3);
    expect(r.mirrorNodes).toEqual(["https://testnet.mirrornode.hedera.com", "http://127.0.0.1:5551/"]);
  });

  test("the nullable fields take null", () => {
    const r = fullReceipt();
    Object.assign(r.revocation.anchor, { sequenceNumber: null, consensusAt: null, runningHash: null });
    r.revocation.anchor.inclusion = null;
    r.anchor.inclusion = { algorithm: "RFC9162-SHA256", leafMessage: r.anchor.message, leafIndex: 0, treeSize: 1, path: [] };
    const parsed = parseReceipt(JSON.stringify(r));
    expect(parsed.revocation!.anchor.runningHash).toBeNull();
    expect(parsed.revocation!.anchor.inclusion).toBeNull();
    expect(parsed.anchor.inclusion).toEqual({ algorithm: "RFC9162-SHA256", leafMessage: new Uint8Array(Buffer.from(r.anchor.message, "base64")), leafIndex: 0, treeSize: 1, path: [] });
    expect(parseReceipt(JSON.stringify(fullReceipt())).revocation!.anchor.inclusion).toEqual({
      algorithm: "RFC9162-SHA256",
      leafMessage: revocationBytes(),
      leafIndex: 1,
      treeSize: 3,
      path: [new Uint8Array(32).fill(7), new Uint8Array(32).fill(9)],
    });
    const none = buildReceipt().receipt;
    expect(parseReceipt(JSON.stringify(none)).revocation).toBeNull();
  });
});

describe("refused, naming the field", () => {
  const paths = leaves(fullReceipt());

  test("every field missing", () => {
    expect(paths.length).toBeGreaterThan(40);
    for (const path of paths) {
      const r = fullReceipt();
      setAt(r, path, undefined);
      const e = formatError(JSON.stringify(r));
      expect({ path, field: e.field, message: e.message }).toEqual({ path, field: path, message: `${path}: missing` });
    }
  });

  test("every field with a value of another type", () => {
    let cases = 0;
    for (const path of paths) {
      for (const wrong of wrongTypes(getAt(fullReceipt(), path))) {
        if (wrong === null && NULLABLE.has(path)) continue;
        // A leaf index starts at 0.
        if (path.endsWith("inclusion.leafIndex") && wrong === 0) continue;
        const r = fullReceipt();
        setAt(r, path, wrong);
        const e = formatError(JSON.stringify(r));
        // A wrong `v` is reported as an unsupported version; an array element by its index.
        const expected = (path === "mirrorNodes" || path.endsWith("inclusion.path")) && Array.isArray(wrong) ? `${path}[0]` : path;
        expect({ path, wrong, field: e.field }).toEqual({ path, wrong, field: expected });
        expect(e.message).toStartWith(`${expected}: `);
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(250);
  });

  test("an unknown version, whatever else the receipt holds", () => {
    for (const v of [2, 0, "1", 1.0000001, null]) {
      const e = formatError(JSON.stringify({ ...fullReceipt(), v }));
      expect(e.field).toBe("v");
      expect(e.message).toContain("unsupported receipt version");
    }
    expect(formatError(JSON.stringify({ v: 2 })).message).toContain("unsupported receipt version 2");
  });

  test("truncated anywhere, or not JSON at all", () => {
    const text = JSON.stringify(fullReceipt());
    for (const at of [0, 1, 10, 100, 1000, 5000, text.length - 1]) {
      const e = formatError(text.slice(0, at));
      expect(e.field).toBe("");
      expect(e.message).toContain("not JSON");
    }
    for (const other of ["[1]", "null", "42", '"receipt"']) expect(formatError(other).message).toBe("not a JSON object");
  });

  test("byte strings that are not standard base64 with padding", () => {
    const good: string = fullReceipt().signer.signature;
    const bad = [good.replace(/=+$/, ""), good.replace(/\+/g, "-").replace(/\//g, "_"), good.slice(0, 40) + "\n" + good.slice(40), good.slice(0, -4) + "AB==".replace("B", "F"), "", "====", "a"];
    for (const value of bad) {
      if (value === good) continue;
      const r = fullReceipt();
      r.signer.signature = value;
      const e = formatError(JSON.stringify(r));
      expect(e.field).toBe("signer.signature");
    }
    // Unused bits set: "QR==" would decode like "QQ==", a second spelling of the same byte.
    const r = fullReceipt();
    r.anchor.runningHash = "QR==";
    expect(formatError(JSON.stringify(r)).field).toBe("anchor.runningHash");
  });

  test("values of the right type but the wrong spelling", () => {
    const cases: [string, unknown][] = [
      ["recordId", "0190F5A3-7C1E-7D2A-9B4C-3E5F6A7B8C9D"],
      ["recordId", "{0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d}"],
      ["originalDocHash", "sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824"],
      ["originalDocHash", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"],
      ["authenticatedAt", "2026-01-15T09:30:00Z"],
      ["authenticatedAt", "2026-01-15T09:30:00.123+00:00"],
      ["authenticatedAt", "2026-02-30T09:30:00.123Z"],
      ["issuedAt", "yesterday"],
      ["kind", "pdf"],
      ["signerType", "ORG"],
      ["signer.algorithm", "ML-DSA-87"],
      ["seal.algorithm", "ed25519"],
      ["anchor.network", "Mainnet"],
      ["anchor.topicId", "0.0.-1"],
      ["anchor.topicId", "1.2.3"],
      ["anchor.sequenceNumber", 0],
      ["anchor.sequenceNumber", 2 ** 53],
      ["anchor.consensusAt", "1768469403.512"],
      ["anchor.consensusAt", "2026-01-15T09:30:03.512004001Z"],
      ["anchor.transactionId", "0.0.1234-1768469400-123000000"],
      ["keyAnnouncement.sequenceNumber", -3],
      ["revocation.reason", "superseded"],
      ["revocation.anchor.sequenceNumber", 0],
      ["mirrorNodes", ["ftp://mirror.example"]],
      ["mirrorNodes", ["https://mirror.example/?x=1"]],
      ["mirrorNodes", ["https://user:pw@mirror.example"]],
      ["mirrorNodes", ["mirror.example"]],
    ];
    for (const [path, value] of cases) {
      const r = fullReceipt();
      setAt(r, path, value);
      const field = path === "mirrorNodes" ? "mirrorNodes[0]" : path;
      expect({ path, value, field: formatError(JSON.stringify(r)).field }).toEqual({ path, value, field });
    }
  });

  test("an inclusion proof: its algorithm, 32-byte hashes, an index from 0, at most 64 hashes, nothing else", () => {
    const cases: [string, (i: Record<string, any>) => void][] = [
      ["revocation.anchor.inclusion.algorithm", (i) => (i.algorithm = "RFC6962-SHA256")],
      ["revocation.anchor.inclusion.path[1]", (i) => (i.path[1] = b64(new Uint8Array(31)))],
      ["revocation.anchor.inclusion.path[0]", (i) => (i.path[0] = b64(new Uint8Array(33)))],
      ["revocation.anchor.inclusion.path[0]", (i) => (i.path[0] = Buffer.from(new Uint8Array(32)).toString("hex"))],
      ["revocation.anchor.inclusion.leafIndex", (i) => (i.leafIndex = -1)],
      ["revocation.anchor.inclusion.treeSize", (i) => (i.treeSize = 0)],
      ["revocation.anchor.inclusion.leafMessage", (i) => (i.leafMessage = "")],
      ["revocation.anchor.inclusion.path", (i) => (i.path = Array.from({ length: 65 }, () => b64(new Uint8Array(32))))],
      ["revocation.anchor.inclusion.root", (i) => (i.root = b64(new Uint8Array(32)))],
    ];
    for (const [field, change] of cases) {
      const r = fullReceipt();
      change(r.revocation.anchor.inclusion);
      expect({ field: formatError(JSON.stringify(r)).field }).toEqual({ field });
    }
    // 64 hashes is the most a proof can need, and parses; a leaf index past the tree is the inclusion check's to refuse.
    const r = fullReceipt();
    Object.assign(r.revocation.anchor.inclusion, { path: Array.from({ length: 64 }, () => b64(new Uint8Array(32))), leafIndex: 9 });
    expect(parseReceipt(JSON.stringify(r)).revocation!.anchor.inclusion!.path).toHaveLength(64);
  });

  test("extra nesting and extra fields", () => {
    const nested = fullReceipt();
    nested.signer = { signer: nested.signer };
    expect(formatError(JSON.stringify(nested)).field).toBe("signer.algorithm");
    const wrapped = { receipt: fullReceipt() };
    expect(formatError(JSON.stringify(wrapped)).field).toBe("v");
    const inArray = fullReceipt();
    inArray.anchor = [inArray.anchor];
    expect(formatError(JSON.stringify(inArray))).toMatchObject({ field: "anchor", message: "anchor: expected an object" });
    for (const path of ["", "signer", "anchor", "keyAnnouncement", "revocation", "revocation.anchor", "revocation.anchor.inclusion"]) {
      const r = fullReceipt();
      (path === "" ? r : (getAt(r, path) as Record<string, unknown>)).filename = "secret.pdf";
      const e = formatError(JSON.stringify(r));
      expect(e.field).toBe(path === "" ? "filename" : `${path}.filename`);
      expect(e.message).toContain("unexpected field");
    }
  });
});
