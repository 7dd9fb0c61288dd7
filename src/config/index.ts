/**
 * Settings: every `DOCVERIFY_*` variable (the README's settings table), parsed once into a frozen
 * object. Nothing else in the product reads `process.env`; everything that needs a setting is
 * handed this object (or the part of it it needs) by the composition root.
 *
 * A bad value is never guessed at or clamped: `parseConfig` throws a `ConfigError` naming the
 * setting and what is allowed, and `serve` refuses to start with that message.
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { parseCidrList, type Cidr } from "../lib/cidr.ts";

export type LedgerNetwork = "local" | "testnet" | "previewnet" | "mainnet";
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Base of `verifyUrl`, without a trailing slash. */
  readonly publicUrl: string;
  /** True when DOCVERIFY_PUBLIC_URL was not set: `serve` then uses the address it actually listens on. */
  readonly publicUrlIsDefault: boolean;
  /** Absolute path of the data folder. */
  readonly dataDir: string;
  /** Absolute path of the master key file. */
  readonly masterKeyFile: string;
  /** True when the master key file is the default inside the data folder, which we may create. */
  readonly masterKeyFileIsDefault: boolean;
  readonly ledger: {
    readonly network: LedgerNetwork;
    readonly operatorId: string | null;
    readonly operatorKeyFile: string | null;
    /** Mirror REST base URL of a local ledger started elsewhere; null means embedded. */
    readonly localLedgerUrl: string | null;
    readonly localConsensusMs: number;
    /** The embedded local ledger's ports, where set; unset ones are remembered in `DATA_DIR/ledger/ports.json`, else free ones. */
    readonly localPorts: { readonly grpc?: number; readonly mirror?: number; readonly secondMirror?: number };
    readonly anchorValidSeconds: number;
    /** Batches (docs/anchoring.md "Batches"): how long a batch takes records, from its first, ms (1 to 5,000); 0: no batches, each record its own message. */
    readonly batchWindowMs: number;
    /** At most this many leaves in one batch (1 to 1,024). */
    readonly batchMax: number;
  };
  readonly rateLimit: {
    readonly anonymous: number;
    readonly key: number;
    readonly org: number;
  };
  readonly trustedProxies: readonly Cidr[];
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly metricsAllow: readonly Cidr[];
  readonly logLevel: LogLevel;
  /** Days verification log rows are kept (docs/verification.md "Retention"); 0 keeps them for ever. */
  readonly logRetentionDays: number;
  /**
   * DOCVERIFY_MIRROR_NODES: the mirror nodes a receipt suggests (docs/receipts.md §3), base URLs
   * without a trailing slash, in order, without duplicates. Null when unset: the network's
   * default (anchoring/links.ts `suggestedMirrorNodes`).
   */
  readonly mirrorNodes: readonly string[] | null;
  /**
   * DOCVERIFY_DATABASE_URL (docs/storage.md "Two engines"): a `postgres://` URL selects PostgreSQL,
   * shared by every node; null (unset) is the embedded SQLite in the data folder. Holds the
   * password if the URL does: show `databaseUrlRedacted`, never this.
   */
  readonly databaseUrl: string | null;
  /** The same URL with any password replaced by `***`, for logs and `status`. */
  readonly databaseUrlRedacted: string | null;
  /**
   * The file holding the database password (DOCVERIFY_DATABASE_PASSWORD_FILE), so the password
   * stays out of the URL and the environment file; null: see `databasePasswordCredential`.
   */
  readonly databasePasswordFile: string | null;
  /**
   * Where systemd puts the credential `database-password` (in $CREDENTIALS_DIRECTORY), used when
   * that file exists and no DOCVERIFY_DATABASE_PASSWORD_FILE is set (app/core.ts reads it); null
   * without a credentials folder or a database URL.
   */
  readonly databasePasswordCredential: string | null;
  /** DOCVERIFY_NODE_NAME: this node's name in `status`, serve's start line and the node heartbeats; the host name by default. */
  readonly nodeName: string;
  /**
   * DOCVERIFY_LEDGER_STEP_DOWN_SECONDS (several nodes, docs/operations.md "Several nodes"): how
   * long the anchor loop's leader keeps the lead while the ledger does not answer it, counted from
   * its first failed call; then it steps down so that a node that reaches the ledger leads.
   */
  readonly ledgerStepDownSeconds: number;
  /**
   * DOCVERIFY_CONTACT: whom integrators ask about this service, an email address or an http(s)
   * URL, shown as the API document's `info.contact`; null: the document names the operator of the
   * service at its public URL.
   */
  readonly contact: { readonly email: string } | { readonly url: string } | null;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
  }
}

/** Every setting the product knows, so a misspelt `DOCVERIFY_*` variable is reported, not ignored. */
export const SETTINGS = [
  "DOCVERIFY_HOST",
  "DOCVERIFY_PORT",
  "DOCVERIFY_PUBLIC_URL",
  "DOCVERIFY_DATA_DIR",
  "DOCVERIFY_MASTER_KEY_FILE",
  "DOCVERIFY_LEDGER_NETWORK",
  "DOCVERIFY_LEDGER_OPERATOR_ID",
  "DOCVERIFY_LEDGER_OPERATOR_KEY_FILE",
  "DOCVERIFY_LOCAL_LEDGER_URL",
  "DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS",
  "DOCVERIFY_LOCAL_LEDGER_GRPC_PORT",
  "DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT",
  "DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT",
  "DOCVERIFY_ANCHOR_VALID_SECONDS",
  "DOCVERIFY_BATCH_WINDOW_MS",
  "DOCVERIFY_BATCH_MAX",
  "DOCVERIFY_RATE_LIMIT_ANONYMOUS",
  "DOCVERIFY_RATE_LIMIT_KEY",
  "DOCVERIFY_RATE_LIMIT_ORG",
  "DOCVERIFY_TRUSTED_PROXIES",
  "DOCVERIFY_TLS_CERT_FILE",
  "DOCVERIFY_TLS_KEY_FILE",
  "DOCVERIFY_METRICS_ALLOW",
  "DOCVERIFY_LOG_LEVEL",
  "DOCVERIFY_LOG_RETENTION_DAYS",
  "DOCVERIFY_MIRROR_NODES",
  "DOCVERIFY_DATABASE_URL",
  "DOCVERIFY_DATABASE_PASSWORD_FILE",
  "DOCVERIFY_NODE_NAME",
  "DOCVERIFY_LEDGER_STEP_DOWN_SECONDS",
  "DOCVERIFY_CONTACT",
] as const;

/**
 * Client-side settings, read by the bulk commands (`docverify authenticate|check|revoke`,
 * docs/bulk.md), never by the appliance: allowed in the environment of every command (an operator
 * who runs both keeps one shell), and ignored here.
 */
export const CLIENT_SETTINGS = ["DOCVERIFY_URL", "DOCVERIFY_API_KEY"] as const;

type Env = Readonly<Record<string, string | undefined>>;

export interface ParseOptions {
  /** Folder relative paths are resolved against; the process's working directory by default. */
  readonly cwd?: string;
  /** Overrides from the command line (`--data DIR`), applied over the environment. */
  readonly dataDir?: string;
}

export function parseConfig(env: Env, options: ParseOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  for (const name of Object.keys(env)) {
    if (name.startsWith("DOCVERIFY_") && !(SETTINGS as readonly string[]).includes(name) && !(CLIENT_SETTINGS as readonly string[]).includes(name)) {
      throw new ConfigError(name, `unknown setting; known settings are ${SETTINGS.join(", ")}`);
    }
  }
  // An empty value is treated as unset, as systemd EnvironmentFile and shells commonly produce them.
  const get = (name: (typeof SETTINGS)[number]): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };

  const host = get("DOCVERIFY_HOST") ?? "127.0.0.1";
  if (!/^[A-Za-z0-9.:_-]+$/.test(host) || host.length > 253) {
    throw new ConfigError("DOCVERIFY_HOST", `"${host}" is not a host name or IP address`);
  }
  const port = integer(get("DOCVERIFY_PORT"), "DOCVERIFY_PORT", 8080, 0, 65535);

  const publicUrlRaw = get("DOCVERIFY_PUBLIC_URL");
  let publicUrl: string;
  if (publicUrlRaw === undefined) {
    const h = host.includes(":") ? `[${host}]` : host;
    // Served over TLS directly when both TLS files are set.
    const scheme = get("DOCVERIFY_TLS_CERT_FILE") !== undefined && get("DOCVERIFY_TLS_KEY_FILE") !== undefined ? "https" : "http";
    publicUrl = `${scheme}://${h}:${port}`;
  } else {
    publicUrl = httpUrl(publicUrlRaw, "DOCVERIFY_PUBLIC_URL");
  }

  const dataDir = resolve(cwd, options.dataDir ?? get("DOCVERIFY_DATA_DIR") ?? "./data");

  const credentialsDir = env.CREDENTIALS_DIRECTORY?.trim() || undefined;
  const masterKeyRaw = get("DOCVERIFY_MASTER_KEY_FILE");
  let masterKeyFile: string;
  let masterKeyFileIsDefault = false;
  if (masterKeyRaw !== undefined) masterKeyFile = resolve(cwd, masterKeyRaw);
  else if (credentialsDir !== undefined) masterKeyFile = join(credentialsDir, "master-key");
  else {
    masterKeyFile = join(dataDir, "master.key");
    masterKeyFileIsDefault = true;
  }

  const network = oneOf(get("DOCVERIFY_LEDGER_NETWORK") ?? "local", "DOCVERIFY_LEDGER_NETWORK", [
    "local",
    "testnet",
    "previewnet",
    "mainnet",
  ] as const);
  const operatorId = get("DOCVERIFY_LEDGER_OPERATOR_ID") ?? null;
  if (operatorId !== null && !/^0\.0\.\d{1,19}$/.test(operatorId)) {
    throw new ConfigError("DOCVERIFY_LEDGER_OPERATOR_ID", `"${operatorId}" is not an account id of the form 0.0.N`);
  }
  const operatorKeyRaw = get("DOCVERIFY_LEDGER_OPERATOR_KEY_FILE");
  const operatorKeyFile =
    operatorKeyRaw !== undefined
      ? resolve(cwd, operatorKeyRaw)
      : credentialsDir !== undefined
        ? join(credentialsDir, "ledger-operator-key")
        : null;
  const localLedgerRaw = get("DOCVERIFY_LOCAL_LEDGER_URL");
  const localLedgerUrl = localLedgerRaw === undefined ? null : httpUrl(localLedgerRaw, "DOCVERIFY_LOCAL_LEDGER_URL");
  if (network !== "local") {
    if (operatorId === null) {
      throw new ConfigError("DOCVERIFY_LEDGER_OPERATOR_ID", `required when DOCVERIFY_LEDGER_NETWORK is ${network}`);
    }
    if (operatorKeyFile === null) {
      throw new ConfigError(
        "DOCVERIFY_LEDGER_OPERATOR_KEY_FILE",
        `required when DOCVERIFY_LEDGER_NETWORK is ${network} (or run under systemd with LoadCredential=ledger-operator-key)`,
      );
    }
    if (localLedgerUrl !== null) {
      throw new ConfigError("DOCVERIFY_LOCAL_LEDGER_URL", `only allowed when DOCVERIFY_LEDGER_NETWORK is local, not ${network}`);
    }
  }
  const localConsensusMs = integer(get("DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS"), "DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS", 3000, 0, 60_000);
  const localPorts: { grpc?: number; mirror?: number; secondMirror?: number } = {};
  const seenPorts = new Map<number, string>();
  for (const [name, key] of [
    ["DOCVERIFY_LOCAL_LEDGER_GRPC_PORT", "grpc"],
    ["DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT", "mirror"],
    ["DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT", "secondMirror"],
  ] as const) {
    const raw = get(name);
    if (raw === undefined) continue;
    if (network !== "local" || localLedgerUrl !== null) {
      throw new ConfigError(name, network !== "local" ? `only allowed when DOCVERIFY_LEDGER_NETWORK is local, not ${network}` : "only for the embedded local ledger: a ledger named by DOCVERIFY_LOCAL_LEDGER_URL has its ports");
    }
    const port = integer(raw, name, 0, 1, 65_535);
    const other = seenPorts.get(port);
    if (other !== undefined) throw new ConfigError(name, `${port} is already ${other}'s port; each listener needs its own`);
    seenPorts.set(port, name);
    localPorts[key] = port;
  }
  const anchorValidSeconds = integer(get("DOCVERIFY_ANCHOR_VALID_SECONDS"), "DOCVERIFY_ANCHOR_VALID_SECONDS", 180, 15, 180);
  const batchWindowMs = integer(get("DOCVERIFY_BATCH_WINDOW_MS"), "DOCVERIFY_BATCH_WINDOW_MS", 250, 0, 5_000);
  const batchMax = integer(get("DOCVERIFY_BATCH_MAX"), "DOCVERIFY_BATCH_MAX", 1024, 1, 1024);

  const rateLimit = {
    anonymous: integer(get("DOCVERIFY_RATE_LIMIT_ANONYMOUS"), "DOCVERIFY_RATE_LIMIT_ANONYMOUS", 60, 1, 1_000_000_000),
    key: integer(get("DOCVERIFY_RATE_LIMIT_KEY"), "DOCVERIFY_RATE_LIMIT_KEY", 600, 1, 1_000_000_000),
    org: integer(get("DOCVERIFY_RATE_LIMIT_ORG"), "DOCVERIFY_RATE_LIMIT_ORG", 1200, 1, 1_000_000_000),
  };

  const trustedProxies = cidrs(get("DOCVERIFY_TRUSTED_PROXIES") ?? "", "DOCVERIFY_TRUSTED_PROXIES");
  const metricsAllow = cidrs(get("DOCVERIFY_METRICS_ALLOW") ?? "127.0.0.1/32,::1/128", "DOCVERIFY_METRICS_ALLOW");

  const certFile = get("DOCVERIFY_TLS_CERT_FILE");
  const keyFile = get("DOCVERIFY_TLS_KEY_FILE");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const missing = certFile === undefined ? "DOCVERIFY_TLS_CERT_FILE" : "DOCVERIFY_TLS_KEY_FILE";
    throw new ConfigError(missing, "DOCVERIFY_TLS_CERT_FILE and DOCVERIFY_TLS_KEY_FILE must be set together");
  }
  const tls = certFile !== undefined && keyFile !== undefined ? { certFile: resolve(cwd, certFile), keyFile: resolve(cwd, keyFile) } : null;

  const logLevel = oneOf(get("DOCVERIFY_LOG_LEVEL") ?? "info", "DOCVERIFY_LOG_LEVEL", ["debug", "info", "warn", "error"] as const);
  // Up to a century; 0 keeps every row.
  const logRetentionDays = integer(get("DOCVERIFY_LOG_RETENTION_DAYS"), "DOCVERIFY_LOG_RETENTION_DAYS", 400, 0, 36_500);
  const mirrorNodes = mirrorNodeList(get("DOCVERIFY_MIRROR_NODES"));
  const databaseUrl = postgresUrl(get("DOCVERIFY_DATABASE_URL"));
  const passwordRaw = get("DOCVERIFY_DATABASE_PASSWORD_FILE");
  const databasePasswordFile = passwordRaw !== undefined ? resolve(cwd, passwordRaw) : null;
  const databasePasswordCredential = credentialsDir !== undefined && databaseUrl !== null && passwordRaw === undefined ? join(credentialsDir, "database-password") : null;
  if (passwordRaw !== undefined && databaseUrl === null) {
    throw new ConfigError("DOCVERIFY_DATABASE_PASSWORD_FILE", "only allowed with DOCVERIFY_DATABASE_URL");
  }
  if (databasePasswordFile !== null && databaseUrl !== null && new URL(databaseUrl).password !== "") {
    throw new ConfigError("DOCVERIFY_DATABASE_PASSWORD_FILE", PASSWORD_TWICE);
  }
  const nodeName = get("DOCVERIFY_NODE_NAME") ?? hostname();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(nodeName)) {
    throw new ConfigError("DOCVERIFY_NODE_NAME", `${JSON.stringify(nodeName)} is not a node name; allowed: 1 to 63 letters, digits, dots, hyphens and underscores, starting with a letter or digit`);
  }
  // At least a few heartbeats (one a second), so that one slow answer does not move the lead; at
  // most an hour, past which records queued meanwhile would long have lost their validity window.
  const stepDownRaw = get("DOCVERIFY_LEDGER_STEP_DOWN_SECONDS");
  if (stepDownRaw !== undefined && databaseUrl === null) {
    throw new ConfigError("DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", "only allowed with DOCVERIFY_DATABASE_URL: a single node has no other node to hand the lead to");
  }
  const ledgerStepDownSeconds = integer(stepDownRaw, "DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", 30, 5, 3600);
  const contact = contactOf(get("DOCVERIFY_CONTACT"));

  return deepFreeze({
    host,
    port,
    publicUrl,
    publicUrlIsDefault: publicUrlRaw === undefined,
    dataDir,
    masterKeyFile,
    masterKeyFileIsDefault,
    ledger: { network, operatorId, operatorKeyFile, localLedgerUrl, localConsensusMs, localPorts, anchorValidSeconds, batchWindowMs, batchMax },
    rateLimit,
    trustedProxies,
    tls,
    metricsAllow,
    logLevel,
    logRetentionDays,
    mirrorNodes,
    databaseUrl,
    databaseUrlRedacted: databaseUrl === null ? null : redactUrl(databaseUrl),
    databasePasswordFile,
    databasePasswordCredential,
    nodeName,
    ledgerStepDownSeconds,
    contact,
  });
}

/** An email address (one `@`, no spaces, a dotted domain) or an http(s) URL. */
function contactOf(raw: string | undefined): Config["contact"] {
  if (raw === undefined) return null;
  if (/^[^\s@<>()",;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(raw) && raw.length <= 254) return { email: raw };
  if (!/^https?:\/\//i.test(raw)) throw new ConfigError("DOCVERIFY_CONTACT", `"${raw}" is neither an email address nor an http:// or https:// URL`);
  return { url: httpUrl(raw, "DOCVERIFY_CONTACT") };
}

/**
 * A PostgreSQL connection URL, as libpq and Bun.SQL read it: `postgres://` or `postgresql://`,
 * a host and a database name; TLS and other options in the query (`sslmode=verify-full`). An
 * error never repeats the URL itself, which may hold a password.
 */
function postgresUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const name = "DOCVERIFY_DATABASE_URL";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, "is not a URL; give postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=verify-full], or unset it for the embedded SQLite");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(name, `must use postgres:// or postgresql://, not ${url.protocol}//; unset it for the embedded SQLite`);
  }
  if (url.hostname === "") throw new ConfigError(name, "names no host; give postgres://USER@HOST[:PORT]/DATABASE");
  if (url.pathname.replace(/^\/+/, "") === "") throw new ConfigError(name, "names no database; give postgres://USER@HOST[:PORT]/DATABASE");
  if (url.hash !== "") throw new ConfigError(name, "must not carry a fragment (#...)");
  return raw;
}

/** Why a password both in the URL and in a file is refused. */
export const PASSWORD_TWICE = "the database password is given twice: in DOCVERIFY_DATABASE_URL and in a file; keep it only in the file";

/** The URL with its password (if any) replaced by `***`. */
export function redactUrl(raw: string): string {
  const url = new URL(raw);
  if (url.password !== "") url.password = "***";
  return url.href;
}

function integer(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number; allowed: ${min} to ${max}`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(name, `${raw} is out of range; allowed: ${min} to ${max}`);
  return n;
}

function oneOf<T extends string>(raw: string, name: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `"${raw}" is not allowed; allowed: ${allowed.join(", ")}`);
  return raw as T;
}

function httpUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" is not an absolute URL; allowed: http:// or https:// URLs`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(name, `"${raw}" must use http:// or https://`);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new ConfigError(name, `"${raw}" must not carry a query, fragment or credentials`);
  }
  return url.href.replace(/\/+$/, "");
}

/** Comma-separated http(s) base URLs; duplicates (after dropping a trailing slash) are refused, as is an empty entry. */
function mirrorNodeList(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  const urls: string[] = [];
  for (const part of raw.split(",")) {
    const entry = part.trim();
    if (entry === "") throw new ConfigError("DOCVERIFY_MIRROR_NODES", `empty entry in "${raw}"; give comma-separated http:// or https:// base URLs`);
    const url = httpUrl(entry, "DOCVERIFY_MIRROR_NODES");
    if (urls.includes(url)) throw new ConfigError("DOCVERIFY_MIRROR_NODES", `"${entry}" is listed twice`);
    urls.push(url);
  }
  if (urls.length > 16) throw new ConfigError("DOCVERIFY_MIRROR_NODES", `at most 16 mirror nodes, got ${urls.length}`);
  return urls;
}

function cidrs(raw: string, name: string): Cidr[] {
  try {
    return parseCidrList(raw);
  } catch (e) {
    throw new ConfigError(name, `${(e as Error).message}; allowed: comma-separated CIDRs such as 10.0.0.0/8,::1/128`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
