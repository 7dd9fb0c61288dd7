/**
 * C2SP Wycheproof (testvectors_v1) for ML-DSA-65: mldsa_65_verify_test and mldsa_65_sign_seed_test,
 * every case, through both implementations: Bun's native ML-DSA (node:crypto over upstream's DER,
 * and the product's own path: algorithms.ts and the signer's `verify` and `verifyMany`) and
 * @noble/post-quantum (directly, and through the product's wrappers in src/crypto/noble.ts).
 *
 * Bun 1.4.5's ML-DSA takes no context string ("Context parameter is unsupported") and has no µ
 * interface, so cases with a non-empty context, and signing from µ, run through noble only; each
 * such count is asserted against the number written here, never skipped in silence. A failure
 * names the case's tcId, comment and flags.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createPrivateKey, createPublicKey, verify as nodeVerify, type KeyObject } from "node:crypto";
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { algorithmSpec, createSigner, publicKeyFromSeedWithNoble, signWithNoble, verifyWithNoble, type VerifyCall } from "../../src/crypto/index.ts";
import { fromHex, toHex, wycheproofGroups, wycheproofLabel, type WycheproofSignGroup, type WycheproofTest, type WycheproofVerifyGroup } from "./support/vectors.ts";

const ML_DSA_65 = algorithmSpec("ML-DSA-65");
/** The product's verification: the signer every record check goes through (no master key needed). */
const signer = createSigner({ masterKey: null, workers: 0 });

let verifyGroups: readonly WycheproofVerifyGroup[] = [];
let signGroups: readonly WycheproofSignGroup[] = [];
beforeAll(() => {
  verifyGroups = wycheproofGroups<WycheproofVerifyGroup>("mldsa_65_verify_test");
  signGroups = wycheproofGroups<WycheproofSignGroup>("mldsa_65_sign_seed_test");
});

/** Every case with its group, refusing "acceptable": no case has it now, and one would need a decision. */
function casesOf<G extends { tests: readonly WycheproofTest[] }>(groups: readonly G[]): { group: G; t: WycheproofTest }[] {
  const cases = groups.flatMap((group) => group.tests.map((t) => ({ group, t })));
  const acceptable = cases.filter(({ t }) => t.result === "acceptable").map(({ t }) => wycheproofLabel(t));
  if (acceptable.length > 0) throw new Error(`"acceptable" cases need a decision: ${acceptable.join("; ")}`);
  return cases;
}

/** What a call answered, with a throw as a refusal that says why. */
function outcome(fn: () => boolean): { verified: boolean; text: string } {
  try {
    const verified = fn();
    return { verified, text: String(verified) };
  } catch (error) {
    return { verified: false, text: `a throw (${String(error)})` };
  }
}

const signOutcome = (fn: () => Uint8Array): string => {
  try {
    return toHex(fn());
  } catch (error) {
    return `a throw (${String(error)})`;
  }
};

/** The case's context: absent is empty (FIPS 204's default). */
const contextOf = (t: WycheproofTest) => fromHex(t.ctx ?? "");

/** Bun's native verify given a non-empty context: "unsupported" while Bun refuses contexts. */
function nativeVerifyWithContext(key: KeyObject, message: Uint8Array, signature: Uint8Array, context: Uint8Array): boolean | "unsupported" {
  try {
    return nodeVerify(null, message, { key, context }, signature);
  } catch (error) {
    if (/Context parameter is unsupported/.test(String(error))) return "unsupported";
    throw error;
  }
}

describe("Wycheproof mldsa_65_verify_test (210 cases)", () => {
  test("noble: every valid case verifies and every invalid one does not", () => {
    const failures: string[] = [];
    const cases = casesOf(verifyGroups);
    for (const { group, t } of cases) {
      const got = outcome(() => ml_dsa65.verify(fromHex(t.sig), fromHex(t.msg ?? ""), fromHex(group.publicKey), { context: contextOf(t) }));
      if (got.verified !== (t.result === "valid")) failures.push(`${wycheproofLabel(t)}: noble answers ${got.text}`);
    }
    expect(failures).toEqual([]);
    expect(cases.length).toBe(210);
  });

  test("native (node:crypto over upstream's publicKeyDer), the product's signer, verifyMany and verifyWithNoble: every case without a context", async () => {
    const failures: string[] = [];
    const count = { run: 0, contextRefused: 0 };
    const calls: (VerifyCall & { t: WycheproofTest })[] = [];
    for (const { group, t } of casesOf(verifyGroups)) {
      const [publicKey, message, signature, context] = [fromHex(group.publicKey), fromHex(t.msg ?? ""), fromHex(t.sig), contextOf(t)];
      const expected = t.result === "valid";
      let key: KeyObject | null = null;
      try {
        key = createPublicKey({ key: Buffer.from(fromHex(group.publicKeyDer)), format: "der", type: "spki" });
      } catch {
        // An invalid key (a wrong length) refused at import: a refusal, checked below.
      }
      if (context.length > 0) {
        const native = key === null ? false : nativeVerifyWithContext(key, message, signature, context);
        if (native === "unsupported") count.contextRefused++;
        else failures.push(`${wycheproofLabel(t)}: Bun now takes a context (answered ${native}): run these cases natively`);
        continue;
      }
      count.run++;
      const got = {
        native: key === null ? "key refused at import" : outcome(() => nodeVerify(null, message, key, signature)).text,
        signer: String(signer.verify("ML-DSA-65", publicKey, message, signature)),
        verifyWithNoble: String(verifyWithNoble("ML-DSA-65", publicKey, message, signature)),
      };
      const accepted = (text: string) => text === "true";
      if (Object.values(got).some((v) => accepted(v) !== expected)) failures.push(`${wycheproofLabel(t)}: ${JSON.stringify(got)}`);
      calls.push({ algorithm: "ML-DSA-65", publicKey, message, signature, t });
    }
    const many = await signer.verifyMany(calls);
    calls.forEach((call, i) => {
      if (many[i] !== (call.t.result === "valid")) failures.push(`${wycheproofLabel(call.t)}: verifyMany answers ${many[i]}`);
    });
    expect(failures).toEqual([]);
    expect(count).toEqual({
      run: 203, // the 202 cases without ctx, and tcId 2's empty one
      contextRefused: 7, // tcIds 3, 4 (7 and 255 bytes, valid), 5 and 153-156 (256 bytes, invalid): Bun 1.4.5 takes no context
    });
  });

  test("our SPKI wrapping of a raw public key (algorithms.ts) is upstream's publicKeyDer; keys of the wrong length are refused", () => {
    const failures: string[] = [];
    const count = { wrapped: 0, refused: 0 };
    for (const group of verifyGroups) {
      const publicKey = fromHex(group.publicKey);
      if (publicKey.length !== ML_DSA_65.publicKeyLength) {
        count.refused++;
        if (outcome(() => (ML_DSA_65.importPublicKey(publicKey), true)).verified) failures.push(`a ${publicKey.length}-byte public key was imported`);
        continue;
      }
      count.wrapped++;
      const der = toHex(new Uint8Array(ML_DSA_65.importPublicKey(publicKey).export({ format: "der", type: "spki" })));
      if (der !== group.publicKeyDer) failures.push(`public key ${group.publicKey.slice(0, 16)}…: our SPKI differs from upstream's`);
    }
    expect(failures).toEqual([]);
    expect(count).toEqual({ wrapped: 21, refused: 4 }); // 1,951- and 1,953-byte keys, two groups each
  });
});

describe("Wycheproof mldsa_65_sign_seed_test (105 cases)", () => {
  test("key from seed: native and noble derive the group's public key, Bun exports upstream's PKCS#8, and seeds of the wrong length are refused", () => {
    const failures: string[] = [];
    const count = { derived: 0, pkcs8: 0, refused: 0 };
    for (const group of signGroups) {
      const seed = fromHex(group.privateSeed);
      const tcIds = group.tests.map((t) => t.tcId).join(", ");
      if (seed.length !== ML_DSA_65.seedLength) {
        count.refused++;
        if (group.tests.some((t) => t.result !== "invalid")) failures.push(`tcIds ${tcIds}: a ${seed.length}-byte seed with a case that is not invalid`);
        const accepted = {
          native: outcome(() => (ML_DSA_65.importSeed(seed), true)).verified,
          noble: outcome(() => (ml_dsa65.keygen(seed), true)).verified,
          publicKeyFromSeedWithNoble: outcome(() => (publicKeyFromSeedWithNoble("ML-DSA-65", seed), true)).verified,
        };
        if (Object.values(accepted).some(Boolean)) failures.push(`tcIds ${tcIds}: a ${seed.length}-byte seed accepted: ${JSON.stringify(accepted)}`);
        continue;
      }
      count.derived++;
      const expected = group.publicKey;
      if (expected === null) {
        failures.push(`tcIds ${tcIds}: a 32-byte seed without its public key`);
        continue;
      }
      const native = ML_DSA_65.importSeed(seed);
      const got = { native: toHex(native.publicKey), noble: toHex(ml_dsa65.keygen(seed).publicKey), publicKeyFromSeedWithNoble: toHex(publicKeyFromSeedWithNoble("ML-DSA-65", seed)) };
      for (const [name, pk] of Object.entries(got)) if (pk !== expected) failures.push(`tcIds ${tcIds}: ${name}'s public key differs`);
      if (group.privateKeyPkcs8 !== undefined && group.privateKeyPkcs8 !== "") {
        count.pkcs8++;
        if (toHex(new Uint8Array(native.privateKey.export({ format: "der", type: "pkcs8" }))) !== group.privateKeyPkcs8) failures.push(`tcIds ${tcIds}: Bun's PKCS#8 differs from upstream's`);
        const imported = createPrivateKey({ key: Buffer.from(fromHex(group.privateKeyPkcs8)), format: "der", type: "pkcs8" });
        const spki = new Uint8Array(createPublicKey(imported).export({ format: "der", type: "spki" }));
        if (!toHex(spki).endsWith(expected)) failures.push(`tcIds ${tcIds}: upstream's PKCS#8, imported natively, has another public key`);
      }
    }
    expect(failures).toEqual([]);
    // 42 groups: 39 with a 32-byte seed (27 of them with upstream's PKCS#8), 3 with 0, 31 and 33 bytes.
    expect(count).toEqual({ derived: 39, pkcs8: 27, refused: 3 });
  });

  test("noble: every valid case signs to upstream's signature (rnd zero, or the case's), from the message or from µ, and it verifies from both; invalid cases are refused", () => {
    // Each case is signed once (a ManySteps case takes hundreds of rejection rounds): through the
    // product's wrapper where it applies (deterministic, empty context), else through noble's API
    // with the case's context and rnd, and from µ where the case gives no message. µ and the
    // message lead to the same signature, so the signature is verified through both.
    const failures: string[] = [];
    const runs = { signWithNoble: 0, sign: 0, signFromMu: 0, verify: 0, verifyFromMu: 0, invalidRefused: 0 };
    const cases = casesOf(signGroups);
    for (const { group, t } of cases) {
      const seed = fromHex(group.privateSeed);
      const extraEntropy = t.rnd === undefined ? false : fromHex(t.rnd);
      const context = contextOf(t);
      if (t.result === "invalid") {
        // An invalid context length, or a seed of the wrong length: signing must not produce anything.
        const signature = signOutcome(() => ml_dsa65.sign(fromHex(t.msg ?? ""), ml_dsa65.keygen(seed).secretKey, { extraEntropy, context }));
        if (signature.startsWith("a throw")) runs.invalidRefused++;
        else failures.push(`${wycheproofLabel(t)}: noble signed (${signature.slice(0, 32)}…)`);
        continue;
      }
      const { secretKey } = ml_dsa65.keygen(seed);
      const publicKey = fromHex(group.publicKey ?? "");
      const expected = fromHex(t.sig);
      let signature: string;
      if (t.msg !== undefined) {
        const message = fromHex(t.msg);
        if (context.length === 0 && t.rnd === undefined) {
          runs.signWithNoble++;
          signature = signOutcome(() => signWithNoble("ML-DSA-65", seed, message, { deterministic: true }));
        } else {
          runs.sign++;
          signature = signOutcome(() => ml_dsa65.sign(message, secretKey, { extraEntropy, context }));
        }
        runs.verify++;
        const check = outcome(() => ml_dsa65.verify(expected, message, publicKey, { context }));
        if (!check.verified) failures.push(`${wycheproofLabel(t)}: upstream's signature, verified with noble: ${check.text}`);
      } else {
        runs.signFromMu++;
        signature = signOutcome(() => ml_dsa65.internal.sign(fromHex(t.mu ?? ""), secretKey, { extraEntropy, externalMu: true }));
      }
      if (signature !== t.sig) failures.push(`${wycheproofLabel(t)}: noble signs ${signature.slice(0, 32)}…, upstream ${t.sig.slice(0, 32)}…`);
      if (t.mu !== undefined) {
        runs.verifyFromMu++;
        const check = outcome(() => ml_dsa65.internal.verify(expected, fromHex(t.mu ?? ""), publicKey, { externalMu: true }));
        if (!check.verified) failures.push(`${wycheproofLabel(t)}: upstream's signature, verified with noble from µ: ${check.text}`);
      }
    }
    expect(failures).toEqual([]);
    expect(cases.length).toBe(105);
    expect(runs).toEqual({
      signWithNoble: 80, // the valid msg cases with neither a context nor rnd
      sign: 4, // tcIds 3, 4, 108 (contexts of 7, 255 and 255 bytes) and 109 (rnd)
      signFromMu: 17, // µ only (flag Internal, and leancrypto's groups)
      verify: 84, // every valid msg case
      verifyFromMu: 101, // every valid case gives µ
      invalidRefused: 4, // tcId 5 (a 256-byte context), 91-93 (seeds of 0, 31 and 33 bytes)
    });
  });

  test("native and the product: upstream's signatures verify, and native signing is hedged (twice per message: both verify with both, and differ)", async () => {
    const failures: string[] = [];
    const count = { run: 0, contextRefused: 0, muOnly: 0, invalid: 0 };
    const calls: (VerifyCall & { t: WycheproofTest })[] = [];
    for (const { group, t } of casesOf(signGroups)) {
      if (t.result === "invalid") {
        count.invalid++; // refused above: no key, or no signature, to check
        continue;
      }
      if (t.msg === undefined) {
        count.muOnly++;
        continue;
      }
      const [message, expected, publicKey] = [fromHex(t.msg), fromHex(t.sig), fromHex(group.publicKey ?? "")];
      const { privateKey, publicKey: nativePublicKey } = ML_DSA_65.importSeed(fromHex(group.privateSeed));
      const context = contextOf(t);
      if (context.length > 0) {
        const native = nativeVerifyWithContext(ML_DSA_65.importPublicKey(nativePublicKey), message, expected, context);
        if (native === "unsupported") count.contextRefused++;
        else failures.push(`${wycheproofLabel(t)}: Bun now takes a context (answered ${native}): run these cases natively`);
        continue;
      }
      count.run++;
      const got = {
        native: ML_DSA_65.verify(ML_DSA_65.importPublicKey(nativePublicKey), message, expected),
        signer: signer.verify("ML-DSA-65", publicKey, message, expected),
        verifyWithNoble: verifyWithNoble("ML-DSA-65", publicKey, message, expected),
      };
      if (Object.values(got).some((v) => v !== true)) failures.push(`${wycheproofLabel(t)}: upstream's signature: ${JSON.stringify(got)}`);
      const a = ML_DSA_65.sign(privateKey, message);
      const b = ML_DSA_65.sign(privateKey, message);
      if (toHex(a) === toHex(b)) failures.push(`${wycheproofLabel(t)}: two native signatures are equal`);
      for (const signature of [a, b]) {
        calls.push({ algorithm: "ML-DSA-65", publicKey, message, signature, t });
        if (!ml_dsa65.verify(signature, message, publicKey)) failures.push(`${wycheproofLabel(t)}: noble refuses a native signature`);
      }
    }
    const many = await signer.verifyMany(calls);
    calls.forEach((call, i) => {
      if (many[i] !== true) failures.push(`${wycheproofLabel(call.t)}: verifyMany refuses a native signature`);
    });
    expect(failures).toEqual([]);
    expect(count).toEqual({
      run: 81, // the valid msg cases without a context, or with tcId 2's empty one
      contextRefused: 3, // tcIds 3, 4 and 108: contexts of 7 and 255 bytes, which Bun 1.4.5 refuses
      muOnly: 17, // µ only: no native API takes µ
      invalid: 4, // tcIds 5, 91-93
    });
  });
});
