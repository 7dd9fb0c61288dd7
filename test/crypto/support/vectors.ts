/**
 * The public ML-DSA-65 known-answer vectors (NIST ACVP-Server v1.1.0.43, C2SP Wycheproof
 * testvectors_v1), read in place from the workspace's vectors folder: `shared/vectors/ml-dsa-65/`
 * in the folder that holds the clone. They are not committed here; CI puts the folder beside the
 * clone. A missing folder or file is an error naming the path it was expected at, so the
 * known-answer tests fail, never skip.
 *
 * Each ACVP file holds the upstream prompt and expected results, filtered to ML-DSA-65; a case is
 * the prompt's test joined to its result by tgId and tcId. The Wycheproof files are upstream's.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";

const ROOT = resolve(import.meta.dir, "..", "..", "..");

export const VECTORS_DIR = join(ROOT, "..", "shared", "vectors", "ml-dsa-65");

/** The parsed JSON of one gzip'd vector file; throws naming the expected path when it is absent. */
export function readVectorFile(name: string, dir: string = VECTORS_DIR): unknown {
  const path = join(dir, name);
  if (!existsSync(path)) {
    throw new Error(
      `ML-DSA-65 known-answer vectors missing: expected ${path} ` +
        `(the workspace's vectors folder, shared/vectors/ml-dsa-65/ beside the clone; docs/signing.md "Known-answer vectors")`,
    );
  }
  return JSON.parse(gunzipSync(readFileSync(path)).toString("utf8"));
}

export const fromHex = (text: string): Uint8Array => {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw new Error(`not hex: ${text.slice(0, 40)}`);
  return Uint8Array.from(Buffer.from(text, "hex"));
};
export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

// ---------------------------------------------------------------------------------------------
// ACVP
// ---------------------------------------------------------------------------------------------

export type AcvpMode = "keyGen" | "sigGen" | "sigVer";

/** A test group's header as NIST publishes it (ACVP ML-DSA JSON specification). */
export interface AcvpGroup {
  readonly tgId: number;
  readonly testType: string;
  readonly parameterSet: string;
  /** sigGen, sigVer: FIPS 204's external interface (ML-DSA.Sign/Verify) or internal (Sign_internal/Verify_internal). */
  readonly signatureInterface?: "external" | "internal";
  /** External interface: pure ML-DSA, or HashML-DSA over the case's `hashAlg`. */
  readonly preHash?: "pure" | "preHash";
  /** Internal interface: the case gives µ itself instead of a message. */
  readonly externalMu?: boolean;
  /** sigGen: rnd is 32 zero bytes (deterministic) or the case's `rnd` (hedged). */
  readonly deterministic?: boolean;
}

/** One case: its group, and the prompt's fields with the expected result's (hex strings, booleans). */
export interface AcvpCase {
  readonly group: AcvpGroup;
  readonly tcId: number;
  readonly values: Readonly<Record<string, unknown>>;
}

interface AcvpFile {
  readonly algorithm: string;
  readonly mode: string;
  readonly revision: string;
  readonly prompt: readonly (AcvpGroup & { tests: { tcId: number }[] })[];
  readonly expectedResults: readonly { tgId: number; tests: { tcId: number }[] }[];
}

/**
 * Every ML-DSA-65 case of `ML-DSA-<mode>-FIPS204`, prompt joined to expected result. Throws when
 * a prompt has no result or a result no prompt, or a group is another parameter set: a reader that
 * dropped cases would make the counts the tests assert meaningless.
 */
export function acvpCases(mode: AcvpMode, dir?: string): AcvpCase[] {
  const file = readVectorFile(`acvp-ML-DSA-${mode}-FIPS204.json.gz`, dir) as AcvpFile;
  if (file.algorithm !== "ML-DSA" || file.mode !== mode || file.revision !== "FIPS204") {
    throw new Error(`unexpected ACVP file: ${file.algorithm} ${file.mode} ${file.revision}`);
  }
  const results = new Map<string, Record<string, unknown>>();
  for (const group of file.expectedResults) for (const t of group.tests) results.set(`${group.tgId}/${t.tcId}`, t);
  const cases: AcvpCase[] = [];
  for (const { tests, ...group } of file.prompt) {
    if (group.parameterSet !== "ML-DSA-65") throw new Error(`tgId ${group.tgId} is ${group.parameterSet}, not ML-DSA-65`);
    for (const prompt of tests) {
      const key = `${group.tgId}/${prompt.tcId}`;
      const result = results.get(key);
      if (result === undefined) throw new Error(`ACVP ${mode}: tgId ${group.tgId} tcId ${prompt.tcId} has no expected result`);
      results.delete(key);
      cases.push({ group, tcId: prompt.tcId, values: { ...prompt, ...result } });
    }
  }
  if (results.size > 0) throw new Error(`ACVP ${mode}: expected results without a prompt: ${[...results.keys()].join(", ")}`);
  return cases;
}

/** A hex field of a case as bytes; throws when the case does not have it. */
export function field(c: AcvpCase, name: string): Uint8Array {
  const value = c.values[name];
  if (typeof value !== "string") throw new Error(`tgId ${c.group.tgId} tcId ${c.tcId}: no hex field "${name}"`);
  return fromHex(value);
}

/** A case's name in a failure: group, case and interface. */
export function acvpLabel(c: AcvpCase): string {
  const g = c.group;
  const iface = [g.signatureInterface, g.preHash, g.externalMu === undefined ? undefined : g.externalMu ? "external µ" : "message", g.deterministic === undefined ? undefined : g.deterministic ? "deterministic" : "hedged"];
  const hashAlg = typeof c.values.hashAlg === "string" ? ` ${c.values.hashAlg}` : "";
  const context = typeof c.values.context === "string" ? `, context ${c.values.context.length / 2} bytes` : "";
  return `tgId ${g.tgId} tcId ${c.tcId} (${iface.filter((x) => x !== undefined).join("/")}${hashAlg}${context})`;
}

// ---------------------------------------------------------------------------------------------
// Wycheproof (C2SP testvectors_v1)
// ---------------------------------------------------------------------------------------------

export interface WycheproofTest {
  readonly tcId: number;
  readonly comment: string;
  readonly flags: readonly string[];
  readonly result: "valid" | "invalid" | "acceptable";
  readonly msg?: string;
  /** The context string; absent means empty. */
  readonly ctx?: string;
  /** sign_seed: FIPS 204's µ, given for internal (external-µ) signing and as a cross-check. */
  readonly mu?: string;
  /** sign_seed: the hedged signing randomness; absent means deterministic (32 zero bytes). */
  readonly rnd?: string;
  readonly sig: string;
}

export interface WycheproofVerifyGroup {
  readonly type: "MlDsaVerify";
  readonly publicKey: string;
  readonly publicKeyDer: string;
  readonly tests: readonly WycheproofTest[];
}

export interface WycheproofSignGroup {
  readonly type: "MlDsaSign";
  readonly privateSeed: string;
  readonly privateKeyPkcs8?: string;
  readonly publicKey: string | null;
  readonly tests: readonly WycheproofTest[];
}

interface WycheproofFile<G> {
  readonly algorithm: string;
  readonly numberOfTests: number;
  readonly testGroups: readonly G[];
}

/** A Wycheproof file's groups; throws when it is not ML-DSA-65 or its case count is not the one it states. */
export function wycheproofGroups<G extends { tests: readonly WycheproofTest[] }>(name: "mldsa_65_verify_test" | "mldsa_65_sign_seed_test", dir?: string): readonly G[] {
  const file = readVectorFile(`wycheproof-${name}.json.gz`, dir) as WycheproofFile<G>;
  if (file.algorithm !== "ML-DSA-65") throw new Error(`${name}: algorithm ${file.algorithm}`);
  const count = file.testGroups.reduce((n, g) => n + g.tests.length, 0);
  if (count !== file.numberOfTests) throw new Error(`${name}: ${count} tests, the file says ${file.numberOfTests}`);
  return file.testGroups;
}

/** A Wycheproof case's name in a failure: tcId, comment and flags. */
export function wycheproofLabel(t: WycheproofTest): string {
  return `tcId ${t.tcId} "${t.comment}" [${t.flags.join(", ")}] expected ${t.result}`;
}
