/**
 * hmacSha256 (src/crypto/hmac.ts) against values computed elsewhere: RFC 4231's HMAC-SHA256
 * vectors, and a verification-log cursor whose MAC was computed with openssl
 * (`openssl dgst -sha256 -mac HMAC -macopt hexkey:0102…20 -binary binding.bin`) over the binding
 * written out by hand from the cursor format (docs/verification.md, "Cursor format (version 1)"):
 * cursors already handed out must still decode.
 */
import { expect, test } from "bun:test";
import { hmacSha256 } from "../../src/crypto/hmac.ts";
import { decodeCursor, encodeCursor } from "../../src/verification/log/cursor.ts";

const hex = (h: string) => Buffer.from(h, "hex");
const ascii = (s: string) => Buffer.from(s, "ascii");

test("RFC 4231 test cases 1, 2, 3 and 6 (a key longer than a block)", () => {
  expect(hmacSha256(Buffer.alloc(20, 0x0b), ascii("Hi There")).toString("hex")).toBe("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  expect(hmacSha256(ascii("Jefe"), ascii("what do ya want "), ascii("for nothing?")).toString("hex")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  expect(hmacSha256(Buffer.alloc(20, 0xaa), Buffer.alloc(50, 0xdd)).toString("hex")).toBe("773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  expect(hmacSha256(Buffer.alloc(131, 0xaa), ascii("Test Using Larger Than Block-Size Key - Hash Key First")).toString("hex")).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
});

test("no parts: the MAC of the empty message", () => {
  expect(hmacSha256(hex("00")).equals(hmacSha256(hex("00"), new Uint8Array(0)))).toBe(true);
});

test("a cursor handed out before: the same bytes, and it still decodes", () => {
  const key = new Uint8Array(32).map((_, i) => i + 1);
  const id = "0190a3f4-b2c0-7d1e-8f00-112233445566";
  const scope = { orgId: "acme-org", environment: "live" as const, filters: { verdict: "revoked" as const, from: 1700000000000 } };
  // openssl's HMAC of the binding: 4f74188906de94f4bf88397c5a513ba139158c88432ce65494b7946653803190
  const issued = "AQGQo_SywH0ejwARIjNEVWZPdBiJBt6U9L-IOXxaUTuhORWMiEMs5lSUt5RmU4AxkA";
  expect(Buffer.from(issued, "base64url").subarray(17).toString("hex")).toBe("4f74188906de94f4bf88397c5a513ba139158c88432ce65494b7946653803190");
  expect(encodeCursor(key, id, scope)).toBe(issued);
  expect(decodeCursor(key, issued, scope)).toBe(id);
});
