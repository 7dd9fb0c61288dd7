/**
 * The ledger messages (docs/records.md §3, docs/receipts.md §1): exact bytes
 * for fixed inputs, the worked examples in docs/records.md, and the one-chunk size bound over
 * every legal input.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  MAX_BATCH_SIZE,
  MAX_MESSAGE_BYTES,
  decodeLedgerMessage,
  encodeBatchMessage,
  encodeCreationMessage,
  encodeKeyAnnouncementMessage,
  encodeKeyCompromiseMessage,
  encodePersonKeyAnnouncementMessage,
  encodeRevocationMessage,
  fitsBatchMessage,
  maxBatchRevocations,
  sha256Text,
} from "../../src/records/messages.ts";
import { rfc3339Ms } from "../../src/lib/formats.ts";
import { REVOCATION_REASONS } from "../../src/records/validate.ts";
import { ROOT } from "../support/env.ts";

const RECORD_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
const DOC_HASH = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
const SIGNED = 1768469400123;
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe("creation message", () => {
  const fields = { recordId: RECORD_ID, docHash: DOC_HASH, signedAtMs: SIGNED, signerPublicKey: bytes(1952, 1), signature: bytes(3309, 2), sealSignature: bytes(3309, 3) };

  test("is compact JSON with the fields in a fixed order", () => {
    const text = new TextDecoder().decode(encodeCreationMessage(fields));
    expect(text).toBe(
      `{"v":1,"type":"record","recordId":"${RECORD_ID}","originalDocHash":"${DOC_HASH}","signedAt":"2026-01-15T09:30:00.123Z",` +
        `"signerPublicKeySha256":"${sha256Text(fields.signerPublicKey)}","signatureSha256":"${sha256Text(fields.signature)}","sealSignatureSha256":"${sha256Text(fields.sealSignature)}"}`,
    );
    expect(decodeLedgerMessage(encodeCreationMessage(fields))).toMatchObject({ v: 1, type: "record", recordId: RECORD_ID });
  });

  test("matches the worked example in docs/records.md byte for byte", () => {
    const doc = readFileSync(join(ROOT, "docs", "records.md"), "utf8");
    const example = /<!-- example:creation-message -->\n```json\n(.*)\n```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    expect(new TextDecoder().decode(encodeCreationMessage(fields))).toBe(example!);
    const revocation = /<!-- example:revocation-message -->\n```json\n(.*)\n```/.exec(doc)?.[1];
    expect(new TextDecoder().decode(encodeRevocationMessage({ recordId: RECORD_ID, reason: "SUPERSEDED", revokedAtMs: SIGNED + 86_400_000 }))).toBe(revocation!);
  });

  test("its size is fixed and well inside one 1,024-byte chunk, even at the latest time", () => {
    const sizes = new Set<number>();
    for (const ms of [0, SIGNED, 253402300799999]) sizes.add(encodeCreationMessage({ ...fields, signedAtMs: ms }).length);
    expect(sizes.size).toBe(1);
    const [size] = [...sizes];
    expect(size!).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(size!).toBe(489);
  });

  test("never carries the filename or anything but ASCII", () => {
    const m = encodeCreationMessage(fields);
    expect(m.every((b) => b >= 0x20 && b < 0x7f)).toBe(true);
  });

  test("refuses inputs outside their one spelling", () => {
    expect(() => encodeCreationMessage({ ...fields, recordId: RECORD_ID.toUpperCase() })).toThrow(TypeError);
    expect(() => encodeCreationMessage({ ...fields, docHash: DOC_HASH.toUpperCase() })).toThrow(TypeError);
    expect(() => encodeCreationMessage({ ...fields, signature: new Uint8Array() })).toThrow(TypeError);
    expect(() => encodeCreationMessage({ ...fields, signedAtMs: 1.5 })).toThrow(RangeError);
    expect(() => encodeCreationMessage({ ...fields, signedAtMs: -1 })).toThrow(RangeError);
  });
});

describe("revocation message", () => {
  test("carries the record id, the reason and the time", () => {
    const text = new TextDecoder().decode(encodeRevocationMessage({ recordId: RECORD_ID, reason: "KEY_COMPROMISE", revokedAtMs: SIGNED }));
    expect(text).toBe(`{"v":1,"type":"revocation","recordId":"${RECORD_ID}","reason":"KEY_COMPROMISE","revokedAt":"2026-01-15T09:30:00.123Z"}`);
  });

  test("every reason fits one chunk", () => {
    for (const reason of REVOCATION_REASONS) {
      expect(encodeRevocationMessage({ recordId: RECORD_ID, reason, revokedAtMs: 253402300799999 }).length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    }
  });

  test("refuses a reason that is not an enum spelling", () => {
    expect(() => encodeRevocationMessage({ recordId: RECORD_ID, reason: 'x"}', revokedAtMs: SIGNED })).toThrow(TypeError);
  });
});

describe("key announcement", () => {
  const ORG_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
  const KEY = new Uint8Array(32).fill(0xab);
  const SEAL = new Uint8Array(32).fill(0x01);
  const fields = { orgId: ORG_ID, name: "Acme Ltd", algorithm: "ML-DSA-65", keyFingerprint: KEY, sealKeyFingerprint: SEAL };
  const text = (f: Partial<typeof fields>) => new TextDecoder().decode(encodeKeyAnnouncementMessage({ ...fields, ...f }));
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

  test("is compact JSON with the fields in a fixed order (docs/receipts.md §1)", () => {
    expect(text({})).toBe(
      `{"v":1,"type":"key","orgId":"${ORG_ID}","name":"Acme Ltd","algorithm":"ML-DSA-65","keyFingerprint":"${"ab".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`,
    );
    expect(decodeLedgerMessage(encodeKeyAnnouncementMessage(fields))).toEqual({
      v: 1,
      type: "key",
      orgId: ORG_ID,
      name: "Acme Ltd",
      algorithm: "ML-DSA-65",
      keyFingerprint: hex(KEY),
      sealKeyFingerprint: hex(SEAL),
    });
  });

  test("matches the worked example in docs/records.md byte for byte", () => {
    const doc = readFileSync(join(ROOT, "docs", "records.md"), "utf8");
    const example = /<!-- example:key-announcement -->\n```json\n(.*)\n```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    expect(text({})).toBe(example!);
  });

  test("writes the name as JSON.stringify does: quotes and backslashes escaped, other text as UTF-8", () => {
    expect(text({ name: 'The "Quoted" \\ Back\\slash Co' })).toContain(`"name":"The \\"Quoted\\" \\\\ Back\\\\slash Co","algorithm"`);
    const odd = 'A "b" \\ c / d — Zürich 東京 😀';
    expect((decodeLedgerMessage(encodeKeyAnnouncementMessage({ ...fields, name: odd })) as { name: string }).name).toBe(odd);
    const bytes = encodeKeyAnnouncementMessage({ ...fields, name: "Zürich" });
    expect(Buffer.from(bytes).toString("utf8")).toContain('"name":"Zürich"');
    expect(bytes.length).toBe(text({}).length - "Acme Ltd".length + Buffer.byteLength("Zürich"));
  });

  test("a 200-character name of 4-byte characters is cut at a code point to fill the chunk exactly as far as it goes", () => {
    const name = "😀".repeat(200); // 800 bytes of name: the message would be 1,065 bytes
    const bytes = encodeKeyAnnouncementMessage({ ...fields, name });
    const empty = encodeKeyAnnouncementMessage({ ...fields, name: "x" }).length - 1;
    expect(empty).toBe(273);
    const kept = Math.floor((MAX_MESSAGE_BYTES - empty) / 4); // 187
    expect(kept).toBe(187);
    expect(bytes.length).toBe(empty + kept * 4);
    expect(bytes.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(new TextDecoder().decode(bytes)).toBe(text({ name: "😀".repeat(kept) }));
    // The cut never splits a surrogate pair: the text decodes strictly and every character is whole.
    const decoded = (decodeLedgerMessage(bytes) as { name: string }).name;
    expect([...decoded].every((c) => c === "😀")).toBe(true);
  });

  test("escapes count towards the size: a name of quotes is cut where its escaped form fills the chunk", () => {
    const bytes = encodeKeyAnnouncementMessage({ ...fields, name: '"'.repeat(200) + "\\".repeat(200) });
    expect(bytes.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bytes.length).toBeGreaterThan(MAX_MESSAGE_BYTES - 2); // cut only where the next escape would not fit
    const decoded = (decodeLedgerMessage(bytes) as { name: string }).name;
    expect(decoded).toBe('"'.repeat(200) + "\\".repeat(Math.floor((MAX_MESSAGE_BYTES - 273 - 400) / 2)));
  });

  test("a name that fits is never cut: the longest legal name in the Basic Multilingual Plane fits whole", () => {
    const name = "東".repeat(200); // 3 bytes each: 600 bytes
    expect((decodeLedgerMessage(encodeKeyAnnouncementMessage({ ...fields, name })) as { name: string }).name).toBe(name);
  });

  test("refuses inputs outside their one spelling", () => {
    expect(() => encodeKeyAnnouncementMessage({ ...fields, orgId: ORG_ID.toUpperCase() })).toThrow(TypeError);
    expect(() => encodeKeyAnnouncementMessage({ ...fields, name: "" })).toThrow(TypeError);
    expect(() => encodeKeyAnnouncementMessage({ ...fields, algorithm: "RSA" })).toThrow(TypeError);
    expect(() => encodeKeyAnnouncementMessage({ ...fields, keyFingerprint: new Uint8Array(31) })).toThrow(TypeError);
    expect(() => encodeKeyAnnouncementMessage({ ...fields, sealKeyFingerprint: new Uint8Array(33) })).toThrow(TypeError);
  });

  test("with a domain: `domain` right after `name`; without one (null or absent) the bytes are exactly those of before domains", () => {
    expect(text({ domain: "acme.example" } as Partial<typeof fields>)).toBe(
      `{"v":1,"type":"key","orgId":"${ORG_ID}","name":"Acme Ltd","domain":"acme.example","algorithm":"ML-DSA-65","keyFingerprint":"${"ab".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`,
    );
    expect(decodeLedgerMessage(encodeKeyAnnouncementMessage({ ...fields, domain: "xn--bcher-kva.example" }))).toMatchObject({ name: "Acme Ltd", domain: "xn--bcher-kva.example" });
    const before = encodeKeyAnnouncementMessage(fields);
    expect(Buffer.from(encodeKeyAnnouncementMessage({ ...fields, domain: null })).equals(Buffer.from(before))).toBe(true);
    expect(Buffer.from(encodeKeyAnnouncementMessage({ ...fields, domain: undefined })).equals(Buffer.from(before))).toBe(true);
  });

  test("with the longest domain, a long name is still cut to fill one chunk, the domain whole", () => {
    const longest = `${`${"d".repeat(62)}.`.repeat(3)}${"d".repeat(60)}.org`;
    expect(longest).toHaveLength(253);
    const bytes = encodeKeyAnnouncementMessage({ ...fields, name: "😀".repeat(200), domain: longest });
    expect(bytes.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bytes.length).toBeGreaterThan(MAX_MESSAGE_BYTES - 4);
    const decoded = decodeLedgerMessage(bytes) as { name: string; domain: string };
    expect(decoded.domain).toBe(longest);
    expect([...decoded.name].every((c) => c === "😀")).toBe(true);
    expect([...decoded.name].length).toBe(Math.floor((MAX_MESSAGE_BYTES - 273 - `,"domain":""`.length - 253) / 4));
  });

  test("a key that replaced another: `replaces` right after `keyFingerprint`; none (null or absent): the bytes of before", () => {
    const replaces = new Uint8Array(32).fill(0x0f);
    expect(text({ replaces } as Partial<typeof fields>)).toBe(
      `{"v":1,"type":"key","orgId":"${ORG_ID}","name":"Acme Ltd","algorithm":"ML-DSA-65","keyFingerprint":"${"ab".repeat(32)}","replaces":"${"0f".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`,
    );
    expect(text({ replaces, domain: "acme.example" } as Partial<typeof fields>)).toBe(
      `{"v":1,"type":"key","orgId":"${ORG_ID}","name":"Acme Ltd","domain":"acme.example","algorithm":"ML-DSA-65","keyFingerprint":"${"ab".repeat(32)}","replaces":"${"0f".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`,
    );
    expect(decodeLedgerMessage(encodeKeyAnnouncementMessage({ ...fields, replaces }))).toMatchObject({ keyFingerprint: hex(KEY), replaces: "0f".repeat(32) });
    const before = encodeKeyAnnouncementMessage(fields);
    expect(Buffer.from(encodeKeyAnnouncementMessage({ ...fields, replaces: null })).equals(Buffer.from(before))).toBe(true);
    expect(() => encodeKeyAnnouncementMessage({ ...fields, replaces: new Uint8Array(31) })).toThrow("replaces must be 32 bytes");
  });

  test("with the longest domain and `replaces`, a long name is still cut to fill one chunk, both whole", () => {
    const longest = `${`${"d".repeat(62)}.`.repeat(3)}${"d".repeat(60)}.org`;
    const replaces = new Uint8Array(32).fill(0x0f);
    const bytes = encodeKeyAnnouncementMessage({ ...fields, name: "😀".repeat(200), domain: longest, replaces });
    expect(bytes.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bytes.length).toBeGreaterThan(MAX_MESSAGE_BYTES - 4);
    const decoded = decodeLedgerMessage(bytes) as { name: string; domain: string; replaces: string };
    expect(decoded.domain).toBe(longest);
    expect(decoded.replaces).toBe("0f".repeat(32));
    expect([...decoded.name].length).toBe(Math.floor((MAX_MESSAGE_BYTES - 273 - `,"domain":""`.length - 253 - `,"replaces":""`.length - 64) / 4));
  });

  test("refuses a domain outside its stored spelling (uppercase, one label, a trailing dot, a scheme, too long)", () => {
    for (const domain of ["Acme.example", "localhost", "acme.example.", "https://acme.example", "acme.example/x", `${"a".repeat(250)}.org`, ""]) {
      expect(() => encodeKeyAnnouncementMessage({ ...fields, domain })).toThrow("domain must be a lowercase DNS name");
    }
  });
});

describe("person key announcement", () => {
  const fields = {
    orgId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
    personId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9e",
    algorithm: "ML-DSA-65",
    keyFingerprint: new Uint8Array(32).fill(0xcd),
    sealKeyFingerprint: new Uint8Array(32).fill(0x01),
  };
  test("`domain`, when the organisation has one, right after `personId`; none: the bytes of before domains", () => {
    const text = (domain?: string | null) => new TextDecoder().decode(encodePersonKeyAnnouncementMessage({ ...fields, domain }));
    expect(text()).toBe(`{"v":1,"type":"person_key","orgId":"${fields.orgId}","personId":"${fields.personId}","algorithm":"ML-DSA-65","keyFingerprint":"${"cd".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`);
    expect(text(null)).toBe(text());
    expect(text("acme.example")).toBe(text().replace(`"personId":"${fields.personId}",`, `"personId":"${fields.personId}","domain":"acme.example",`));
    expect(() => text("ACME.example")).toThrow(TypeError);
  });

  test("a re-enrolment's key: `replaces` right after `keyFingerprint`; none: the bytes of before", () => {
    const text = (replaces?: Uint8Array | null) => new TextDecoder().decode(encodePersonKeyAnnouncementMessage({ ...fields, domain: "acme.example", replaces }));
    expect(text(new Uint8Array(32).fill(0xee))).toBe(
      `{"v":1,"type":"person_key","orgId":"${fields.orgId}","personId":"${fields.personId}","domain":"acme.example","algorithm":"ML-DSA-65","keyFingerprint":"${"cd".repeat(32)}","replaces":"${"ee".repeat(32)}","sealKeyFingerprint":"${"01".repeat(32)}"}`,
    );
    expect(text(null)).toBe(text());
    expect(text()).not.toContain("replaces");
    expect(() => text(new Uint8Array(33))).toThrow("replaces must be 32 bytes");
  });
});

describe("key compromise", () => {
  const ORG_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
  const PERSON_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9e";
  const KEY = new Uint8Array(32).fill(0xab);
  const text = (f: Partial<Parameters<typeof encodeKeyCompromiseMessage>[0]>) =>
    new TextDecoder().decode(encodeKeyCompromiseMessage({ orgId: ORG_ID, keyFingerprint: KEY, sinceMs: SIGNED, ...f }));

  test("an organisation's key: orgId, keyFingerprint and since, in that order, since spelt as a record's signedAt", () => {
    expect(text({})).toBe(`{"v":1,"type":"key_compromise","orgId":"${ORG_ID}","keyFingerprint":"${"ab".repeat(32)}","since":"2026-01-15T09:30:00.123Z"}`);
    expect(text({ personId: null })).toBe(text({}));
    expect(decodeLedgerMessage(new TextEncoder().encode(text({})))).toEqual({ v: 1, type: "key_compromise", orgId: ORG_ID, keyFingerprint: "ab".repeat(32), since: "2026-01-15T09:30:00.123Z" });
  });

  test("a person's key: personId right after orgId", () => {
    expect(text({ personId: PERSON_ID })).toBe(
      `{"v":1,"type":"key_compromise","orgId":"${ORG_ID}","personId":"${PERSON_ID}","keyFingerprint":"${"ab".repeat(32)}","since":"2026-01-15T09:30:00.123Z"}`,
    );
  });

  test("matches the worked example in docs/records.md byte for byte", () => {
    const doc = readFileSync(join(ROOT, "docs", "records.md"), "utf8");
    const example = /<!-- example:key-compromise -->\n```json\n(.*)\n```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    expect(text({})).toBe(example!);
  });

  test("is fixed in size, well inside one chunk, even at the latest time", () => {
    expect(text({ sinceMs: 253402300799999 }).length).toBe(text({ sinceMs: 0 }).length);
    expect(new TextEncoder().encode(text({})).length).toBe(197); // docs/records.md §3
    expect(new TextEncoder().encode(text({ personId: PERSON_ID })).length).toBe(247);
  });

  test("refuses inputs outside their one spelling", () => {
    expect(() => text({ orgId: ORG_ID.toUpperCase() })).toThrow("orgId must be a lowercase canonical UUID");
    expect(() => text({ personId: "someone" })).toThrow("personId must be a lowercase canonical UUID");
    expect(() => text({ keyFingerprint: new Uint8Array(31) })).toThrow("keyFingerprint must be 32 bytes");
    expect(() => text({ sinceMs: -1 })).toThrow(RangeError);
    expect(() => text({ sinceMs: 1.5 })).toThrow(RangeError);
  });
});

describe("batch message", () => {
  const ORG_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
  const ROOT = Uint8Array.from({ length: 32 }, (_, i) => i * 7);
  const ROOT_HEX = Buffer.from(ROOT).toString("hex");
  const id = (n: number) => `0190f5a3-7c1e-7d2a-9b4c-${String(n).padStart(12, "0")}`;
  const fields = { orgId: ORG_ID, batch: 12, size: 3, root: ROOT as Uint8Array, revoked: [] as string[] };
  const text = (f: Partial<typeof fields>) => new TextDecoder().decode(encodeBatchMessage({ ...fields, ...f }));

  test("is compact JSON with the fields in a fixed order, root in lowercase hex, revoked in leaf order", () => {
    expect(text({})).toBe(`{"v":1,"type":"batch","orgId":"${ORG_ID}","batch":12,"size":3,"root":"${ROOT_HEX}","revoked":[]}`);
    expect(text({ revoked: [id(2), id(1)] })).toBe(`{"v":1,"type":"batch","orgId":"${ORG_ID}","batch":12,"size":3,"root":"${ROOT_HEX}","revoked":["${id(2)}","${id(1)}"]}`);
    expect(decodeLedgerMessage(encodeBatchMessage({ ...fields, revoked: [id(1)] }))).toEqual({ v: 1, type: "batch", orgId: ORG_ID, batch: 12, size: 3, root: ROOT_HEX, revoked: [id(1)] });
    expect(encodeBatchMessage(fields).every((b) => b >= 0x20 && b < 0x7f)).toBe(true);
  });

  test("refuses inputs outside their one spelling (TypeError)", () => {
    const bad: Partial<typeof fields>[] = [
      { orgId: ORG_ID.toUpperCase() },
      { orgId: "acme" },
      { batch: 0 },
      { batch: 1.5 },
      { batch: 2 ** 53 },
      { batch: Number.NaN },
      { size: 0 },
      { size: MAX_BATCH_SIZE + 1 },
      { size: 2.5 },
      { root: new Uint8Array(31) },
      { root: new Uint8Array(33) },
      { root: ROOT_HEX as unknown as Uint8Array },
      { revoked: [id(1).toUpperCase()] },
      { revoked: ["x"] },
      { revoked: "x" as unknown as string[] },
      { size: 1, revoked: [id(1), id(2)] },
    ];
    for (const f of bad) expect(() => encodeBatchMessage({ ...fields, ...f })).toThrow(TypeError);
    expect(MAX_BATCH_SIZE).toBe(1024);
  });

  test("as many revocation ids as maxBatchRevocations says fit one chunk, and one more is refused", () => {
    for (const batch of [1, 9, 10, 99_999, Number.MAX_SAFE_INTEGER]) {
      for (const size of [1, 21, 22, 999, MAX_BATCH_SIZE]) {
        const n = maxBatchRevocations(batch, size);
        const ids = Array.from({ length: n + 1 }, (_, i) => id(i));
        expect(n).toBe(Math.min(size, 21));
        const fits = encodeBatchMessage({ ...fields, batch, size, revoked: ids.slice(0, n) });
        expect(fits.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
        expect(fitsBatchMessage({ batch, size, revoked: ids.slice(0, n) })).toBe(true);
        expect(fitsBatchMessage({ batch, size, revoked: ids })).toBe(false);
        // One more: over the chunk (RangeError, as every encoder here) or more ids than leaves (TypeError).
        expect(() => encodeBatchMessage({ ...fields, batch, size, revoked: ids })).toThrow(n === size ? TypeError : RangeError);
      }
    }
    // Without a size: the widest, so the batcher may choose leaves before it knows how many.
    expect(maxBatchRevocations(1)).toBe(maxBatchRevocations(1, MAX_BATCH_SIZE));
    // The largest legal message: the longest sequence, the widest size, every id that fits.
    const largest = encodeBatchMessage({ ...fields, batch: Number.MAX_SAFE_INTEGER, size: MAX_BATCH_SIZE, revoked: Array.from({ length: 21 }, (_, i) => id(i)) });
    expect(largest.length).toBe(1011);
    expect(() => maxBatchRevocations(0)).toThrow(TypeError);
  });
});

describe("decoding", () => {
  test("refuses other versions and types, and oversized input", () => {
    const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    expect(() => decodeLedgerMessage(enc({ v: 2, type: "record" }))).toThrow();
    expect(() => decodeLedgerMessage(enc({ v: 1, type: "other" }))).toThrow();
    expect(() => decodeLedgerMessage(new Uint8Array(1025).fill(0x20))).toThrow();
  });
});

test("rfc3339Ms writes exactly three fractional digits and reads back the same integer", () => {
  for (const ms of [0, 1, 999, SIGNED, 253402300799999]) {
    const s = rfc3339Ms(ms);
    expect(s).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(s)).toBe(ms);
  }
  expect(() => rfc3339Ms(253402300800000)).toThrow(RangeError);
});
