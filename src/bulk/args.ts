/**
 * The bulk commands' flags, parsed strictly (an unknown flag is a usage error, exit 2), and the
 * connection settings: the service's URL and the API key, from flags or DOCVERIFY_URL and
 * DOCVERIFY_API_KEY. Node's own parseArgs: this folder runs on Node.js without the appliance.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isRevocationReason, REVOCATION_REASONS, type RevocationReason } from "../../packages/client/src/index.ts";

/** Exit codes (docs/bulk.md). */
export const EXIT = { ok: 0, someFailed: 1, usage: 2, cannotStart: 3 } as const;

export class UsageError extends Error {}

/** Refusals before anything was sent or written: the run cannot start (exit 3). */
export class CannotStart extends Error {}

export const DEFAULT_URL = "http://127.0.0.1:8080";
export type Reason = RevocationReason;

type Spec = Record<string, { type: "string" | "boolean"; multiple?: boolean }>;
export type Env = Readonly<Record<string, string | undefined>>;

const COMMON: Spec = {
  url: { type: "string" },
  "key-file": { type: "string" },
  concurrency: { type: "string" },
  json: { type: "boolean" },
  "no-progress": { type: "boolean" },
};
const SELECTION: Spec = { include: { type: "string", multiple: true }, exclude: { type: "string", multiple: true } };

export const SPECS = {
  authenticate: { ...COMMON, ...SELECTION, manifest: { type: "string" }, "no-filename": { type: "boolean" }, wait: { type: "boolean" }, "wait-timeout": { type: "string" }, receipts: { type: "string" } },
  check: { ...COMMON, ...SELECTION, anonymous: { type: "boolean" } },
  revoke: { ...COMMON, manifest: { type: "string" }, reason: { type: "string" } },
} satisfies Record<string, Spec>;

export interface Parsed {
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: string[];
}

export function parse(argv: readonly string[], spec: Spec, positionals: boolean): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: spec, strict: true, allowPositionals: positionals });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals };
}

export const str = (p: Parsed, name: string): string | undefined => {
  const v = p.values[name];
  return typeof v === "string" ? v : undefined;
};
export const flag = (p: Parsed, name: string): boolean => p.values[name] === true;
export const list = (p: Parsed, name: string): string[] => {
  const v = p.values[name];
  return Array.isArray(v) ? v : [];
};

/** A whole number within [min, max], or the default when the flag is absent. */
export function integerFlag(p: Parsed, name: string, fallback: number, min: number, max: number): number {
  const text = str(p, name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return Number(text);
}

export function reasonFlag(p: Parsed): Reason {
  const reason = str(p, "reason");
  if (reason === undefined) throw new UsageError("--reason REASON is required");
  if (!isRevocationReason(reason)) throw new UsageError(`--reason must be one of ${REVOCATION_REASONS.join(", ")}, not ${JSON.stringify(reason)}`);
  return reason;
}

/** The service's base URL: --url, else DOCVERIFY_URL, else the local default. */
export function serviceUrl(p: Parsed, env: Env): string {
  const text = str(p, "url") ?? (env.DOCVERIFY_URL?.trim() || DEFAULT_URL);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(text)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url must be http:// or https://, not ${JSON.stringify(text)}`);
  if (url.search !== "" || url.hash !== "") throw new UsageError("--url takes no query or fragment");
  return url.href.replace(/\/+$/, "");
}

/** The API key: the first line of --key-file, else DOCVERIFY_API_KEY; undefined when neither. */
export function apiKey(p: Parsed, env: Env): string | undefined {
  const file = str(p, "key-file");
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new UsageError(`cannot read --key-file ${JSON.stringify(file)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    const key = (text.split(/\r?\n/, 1)[0] ?? "").trim();
    if (key === "") throw new UsageError(`--key-file ${JSON.stringify(file)}: its first line is empty`);
    return key;
  }
  const key = env.DOCVERIFY_API_KEY?.trim();
  return key === undefined || key === "" ? undefined : key;
}

/** What may be shown of a key: its environment and id prefix, never the secret. */
export function keyPrefix(key: string): string {
  return /^dv_(live|test)_/.test(key) ? `${key.slice(0, 16)}…` : "(not a docverify key)";
}

/** A test key never creates or revokes records (there is no test ledger): refused before anything is sent. */
export function refuseTestKey(key: string, what: string): void {
  if (key.startsWith("dv_test_")) {
    throw new CannotStart(`the key ${keyPrefix(key)} is a test key: test keys can never ${what} records (there is no test ledger). Use a live key.`);
  }
}
