/**
 * The signing page's own checks, without a browser (src/sign-pages/document.ts, words.ts): a
 * file is a PDF only with its header where readers look for it; the hash read in chunks is the
 * file's SHA-256; the passkey is asked only when the challenge commits to a record payload that
 * names this document; every failure is put in words that carry the service's own message.
 */
import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { encodeRecordPayload } from "../../src/crypto/payload.ts";
import { ApiError } from "../../src/sign-pages/api.ts";
import { checkIntent, hex, looksLikePdf, MismatchError, readAndHash } from "../../src/sign-pages/document.ts";
import { explain, readableSize, recordStateWords, signedName } from "../../src/sign-pages/words.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("is it a PDF?", () => {
  test("the header at the start, or after up to 1,024 bytes of anything; nothing else", () => {
    expect(looksLikePdf(enc("%PDF-1.7\n"))).toBe(true);
    expect(looksLikePdf(new Uint8Array([...new Uint8Array(1024).fill(0x20), ...enc("%PDF-1.4")]))).toBe(true);
    expect(looksLikePdf(new Uint8Array([...new Uint8Array(1025).fill(0x20), ...enc("%PDF-1.4")]))).toBe(false);
    for (const notPdf of ["PK\u0003\u0004word/document.xml", "%PDF", "%pdf-1.7", "Hello", ""]) expect([notPdf, looksLikePdf(enc(notPdf))]).toEqual([notPdf, false]);
  });
});

test("readAndHash: the bytes and their SHA-256 across chunk boundaries (4 MiB chunks)", async () => {
  for (const size of [0, 1, 4 * 1024 * 1024, 9 * 1024 * 1024 + 7]) {
    const data = new Uint8Array(randomBytes(size));
    const seen: number[] = [];
    const { bytes, digest } = await readAndHash(new Blob([data]), (at) => seen.push(at));
    expect(hex(digest)).toBe(createHash("sha256").update(data).digest("hex"));
    expect(Buffer.from(bytes).equals(Buffer.from(data))).toBe(true);
    if (size > 0) expect(seen.at(-1)).toBe(size);
  }
});

describe("checkIntent: the challenge must commit to a payload naming this document", () => {
  const doc = enc("the document");
  const digest = new Uint8Array(createHash("sha256").update(doc).digest());
  const docHash = `sha256:${hex(digest)}`;
  const recordId = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
  const payloadFor = (hash: string) => encodeRecordPayload({ recordId, docHash: hash, signedAtMs: 1768469400123, signerKeyFingerprint: new Uint8Array(32).fill(7) });
  const options = (payload: Uint8Array, over: Record<string, unknown> = {}) => ({
    challenge: createHash("sha256").update(payload).digest("base64url"),
    docverify: { recordId, originalDocHash: docHash, signedAt: "2026-01-15T09:30:00.123Z", payload: Buffer.from(payload).toString("base64url"), ...over },
  });

  test("accepted when it does", () => {
    expect(checkIntent(options(payloadFor(docHash)), digest).recordId).toBe(recordId);
  });

  test("refused when the challenge is not the payload's digest, the payload names another document, or a part is missing", () => {
    const other = `sha256:${"ab".repeat(32)}`;
    const good = options(payloadFor(docHash));
    const cases: [string, { challenge?: unknown; docverify?: unknown }][] = [
      ["another challenge", { ...good, challenge: createHash("sha256").update("x").digest("base64url") }],
      ["a payload for another document", options(payloadFor(other))],
      ["another document named beside a payload for this one", options(payloadFor(docHash), { originalDocHash: other })],
      ["no docverify member", { challenge: good.challenge }],
      ["no payload", { ...good, docverify: { recordId } }],
      ["an unreadable payload", options(payloadFor(docHash), { payload: "***" })],
    ];
    for (const [what, o] of cases) {
      let thrown: unknown;
      try {
        checkIntent(o, digest);
      } catch (e) {
        thrown = e;
      }
      expect([what, thrown instanceof MismatchError]).toEqual([what, true]);
      expect((thrown as Error).message).toContain("nothing was signed");
    }
  });
});

describe("words", () => {
  test("an error answer's own message is always shown, with an explanation for the codes that need one", () => {
    const cases: [ApiError, string, string][] = [
      [new ApiError(404, "NOT_FOUND", "This enrolment link is not known. Ask your administrator for a new one."), "enrol", "This enrolment link is not known."],
      [new ApiError(401, "UNAUTHENTICATED", "No passkey matches."), "sign-in", "Your passkey was not accepted. No passkey matches."],
      [new ApiError(401, "UNAUTHENTICATED", "Session ended."), "records", "sign in again"],
      [new ApiError(403, "ORGANISATION_SUSPENDED", "Org suspended."), "sign", "Your organisation is suspended"],
      [new ApiError(409, "ANCHOR_NOT_FINAL", "Not final."), "revoke", "cannot be revoked yet"],
      [new ApiError(429, "RATE_LIMITED", "Slow down."), "sign", "wait a minute"],
    ];
    for (const [e, step, expected] of cases) {
      const text = explain(e, step as "sign");
      expect(text).toContain(expected);
      expect(text).toContain(e.message);
    }
    // An internal error says so in words, without the service's detail.
    expect(explain(new ApiError(500, "INTERNAL_ERROR", "An internal error occurred."), "sign")).toContain("Something went wrong inside the service");
  });

  test("a passkey prompt cancelled, a device without user verification, a second passkey on the same device", () => {
    const named = (name: string, code?: string) => Object.assign(new Error("x"), { name, ...(code === undefined ? {} : { code }) });
    expect(explain(named("NotAllowedError"), "sign")).toContain("cancelled or took too long. Nothing was signed.");
    expect(explain(named("NotAllowedError"), "enrol")).toContain("No passkey was created.");
    expect(explain(named("Error", "ERROR_AUTHENTICATOR_MISSING_USER_VERIFICATION_SUPPORT"), "enrol")).toContain("cannot check that it is you");
    expect(explain(named("InvalidStateError"), "enrol")).toContain("already holds a passkey");
    expect(explain(new Error("WebAuthn is not supported in this browser"), "sign-in")).toContain("This browser cannot use passkeys");
  });

  test("record states, sizes and the signed copy's name", () => {
    expect(recordStateWords("anchored", null)).toBe("Valid: confirmed on the ledger, final.");
    expect(recordStateWords("pending", null)).toContain("not confirmed yet");
    expect(recordStateWords("anchored", { reason: "SUPERSEDED" })).toBe("Revoked (a newer version replaces this document). Verifiers are told it no longer counts.");
    expect(readableSize(1_234_567)).toBe("1.2 MB");
    expect(signedName("Contract.PDF")).toBe("Contract-signed.pdf");
    expect(signedName("notes")).toBe("notes-signed.pdf");
  });
});
