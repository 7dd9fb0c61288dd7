/** The master key check value a database remembers (service_meta.master_key_check): known answers. */
import { expect, test } from "bun:test";
import { masterKeyCheckValue } from "../../src/crypto/index.ts";

test("masterKeyCheckValue is SHA-256 of the domain string and the key, hex (a change would seal every data folder)", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 255);
  expect(masterKeyCheckValue(key)).toBe("9a48620bf3bcb55c9a1aed5085950d880fceaba37633e77e3fa7dd03a90cb012");
  expect(masterKeyCheckValue(new Uint8Array(32))).toBe("215e9f093c3a5d102786f5d4f467aee537c706207bfb487082dc7e7f16d095e5");
});
