import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { CLIENT_SETTINGS, ConfigError, parseConfig, SETTINGS } from "../src/config/index.ts";

const cwd = "/srv/dv";

const parse = (env: Record<string, string>) => parseConfig(env, { cwd });

function refusal(env: Record<string, string>): ConfigError {
  try {
    parse(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("settings", () => {
  test("embedded defaults", () => {
    const c = parse({});
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBe("http://127.0.0.1:8080");
    expect(c.publicUrlIsDefault).toBe(true);
    expect(c.dataDir).toBe("/srv/dv/data");
    expect(c.masterKeyFile).toBe("/srv/dv/data/master.key");
    expect(c.masterKeyFileIsDefault).toBe(true);
    expect(c.ledger).toEqual({
      network: "local",
      operatorId: null,
      operatorKeyFile: null,
      localLedgerUrl: null,
      localConsensusMs: 3000,
      localPorts: {},
      anchorValidSeconds: 180,
      batchWindowMs: 250,
      batchMax: 1024,
    });
    expect(c.rateLimit).toEqual({ anonymous: 60, key: 600, org: 1200 });
    expect(c.trustedProxies).toEqual([]);
    expect(c.metricsAllow.map((x) => x.text)).toEqual(["127.0.0.1/32", "::1/128"]);
    expect(c.tls).toBeNull();
    expect(c.logLevel).toBe("info");
  });

  test("the parsed object is frozen all the way down", () => {
    const c = parse({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.ledger)).toBe(true);
    expect(Object.isFrozen(c.rateLimit)).toBe(true);
    expect(Object.isFrozen(c.metricsAllow)).toBe(true);
    expect(() => {
      (c as { port: number }).port = 1;
    }).toThrow();
  });

  test("the embedded local ledger's ports are read", () => {
    const c = parse({ DOCVERIFY_LOCAL_LEDGER_GRPC_PORT: "50211", DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: "5551", DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT: "5552" });
    expect(c.ledger.localPorts).toEqual({ grpc: 50211, mirror: 5551, secondMirror: 5552 });
    expect(parse({ DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: "5551" }).ledger.localPorts).toEqual({ mirror: 5551 });
  });

  test("every setting is read", () => {
    const c = parse({
      DOCVERIFY_HOST: "0.0.0.0",
      DOCVERIFY_PORT: "9000",
      DOCVERIFY_PUBLIC_URL: "https://verify.example.org/",
      DOCVERIFY_DATA_DIR: "/var/lib/docverify",
      DOCVERIFY_MASTER_KEY_FILE: "keys/master",
      DOCVERIFY_LEDGER_NETWORK: "testnet",
      DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.1234",
      DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: "/etc/op.key",
      DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100",
      DOCVERIFY_ANCHOR_VALID_SECONDS: "15",
      DOCVERIFY_RATE_LIMIT_ANONYMOUS: "5",
      DOCVERIFY_RATE_LIMIT_KEY: "50",
      DOCVERIFY_RATE_LIMIT_ORG: "500",
      DOCVERIFY_TRUSTED_PROXIES: "10.0.0.0/8, fd00::/8",
      DOCVERIFY_TLS_CERT_FILE: "tls/cert.pem",
      DOCVERIFY_TLS_KEY_FILE: "tls/key.pem",
      DOCVERIFY_METRICS_ALLOW: "192.168.1.0/24",
      DOCVERIFY_LOG_LEVEL: "debug",
      DOCVERIFY_MIRROR_NODES: "https://mirror-a.example.org/, http://10.0.0.5:5551",
      DOCVERIFY_DATABASE_URL: "postgres://docverify@db.internal/docverify",
      DOCVERIFY_NODE_NAME: "dv-1",
      DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "90",
      DOCVERIFY_CONTACT: "api-support@example.org",
    });
    expect(c.host).toBe("0.0.0.0");
    expect(c.port).toBe(9000);
    expect(c.publicUrl).toBe("https://verify.example.org");
    expect(c.dataDir).toBe("/var/lib/docverify");
    expect(c.masterKeyFile).toBe("/srv/dv/keys/master");
    expect(c.masterKeyFileIsDefault).toBe(false);
    expect(c.ledger.network).toBe("testnet");
    expect(c.ledger.operatorId).toBe("0.0.1234");
    expect(c.ledger.operatorKeyFile).toBe("/etc/op.key");
    expect(c.ledger.localConsensusMs).toBe(100);
    expect(c.ledger.anchorValidSeconds).toBe(15);
    expect(c.rateLimit).toEqual({ anonymous: 5, key: 50, org: 500 });
    expect(c.trustedProxies.map((x) => x.text)).toEqual(["10.0.0.0/8", "fd00::/8"]);
    expect(c.tls).toEqual({ certFile: "/srv/dv/tls/cert.pem", keyFile: "/srv/dv/tls/key.pem" });
    expect(c.metricsAllow.map((x) => x.text)).toEqual(["192.168.1.0/24"]);
    expect(c.logLevel).toBe("debug");
    expect(c.mirrorNodes).toEqual(["https://mirror-a.example.org", "http://10.0.0.5:5551"]);
    expect(c.databaseUrl).toBe("postgres://docverify@db.internal/docverify");
    expect(c.nodeName).toBe("dv-1");
    expect(c.ledgerStepDownSeconds).toBe(90);
    expect(c.contact).toEqual({ email: "api-support@example.org" });
    expect(SETTINGS.length).toBe(31);
  });

  test("DOCVERIFY_MIRROR_NODES: unset is null (the network's default); bad lists are refused with the setting's name", () => {
    expect(parse({}).mirrorNodes).toBeNull();
    for (const [value, says] of [
      ["ftp://mirror.example.org", "http:// or https://"],
      ["https://a.example.org,,https://b.example.org", "empty entry"],
      ["https://a.example.org, https://a.example.org/", "listed twice"],
      ["https://a.example.org/?x=1", "query"],
      ["not a url", "not an absolute URL"],
    ] as const) {
      expect(() => parse({ DOCVERIFY_MIRROR_NODES: value })).toThrow(says);
      expect(() => parse({ DOCVERIFY_MIRROR_NODES: value })).toThrow("DOCVERIFY_MIRROR_NODES");
    }
  });

  test("systemd credentials directory supplies the key files", () => {
    const c = parse({ CREDENTIALS_DIRECTORY: "/run/credentials/docverify.service" });
    expect(c.masterKeyFile).toBe("/run/credentials/docverify.service/master-key");
    expect(c.masterKeyFileIsDefault).toBe(false);
    expect(c.ledger.operatorKeyFile).toBe("/run/credentials/docverify.service/ledger-operator-key");
  });

  test("the bulk commands' client settings (DOCVERIFY_URL, DOCVERIFY_API_KEY) may be in any command's environment, and change nothing", () => {
    expect(CLIENT_SETTINGS).toEqual(["DOCVERIFY_URL", "DOCVERIFY_API_KEY"]);
    const withClient = parse({ DOCVERIFY_PORT: "9090", DOCVERIFY_URL: "https://dv.example.org", DOCVERIFY_API_KEY: "dv_live_not-a-real-key" });
    expect(withClient).toEqual(parse({ DOCVERIFY_PORT: "9090" }));
    // Not settings of the appliance: a near miss is still refused.
    expect(() => parse({ DOCVERIFY_API_KEYS: "x" })).toThrow(/DOCVERIFY_API_KEYS: unknown setting/);
  });

  test("--data overrides DOCVERIFY_DATA_DIR", () => {
    expect(parseConfig({ DOCVERIFY_DATA_DIR: "/a" }, { cwd, dataDir: "b" }).dataDir).toBe("/srv/dv/b");
  });

  test("an IPv6 listen address makes a bracketed public URL", () => {
    expect(parse({ DOCVERIFY_HOST: "::1", DOCVERIFY_PORT: "81" }).publicUrl).toBe("http://[::1]:81");
  });

  test("serving TLS directly makes the default public URL https; an explicit one is kept as given", () => {
    const tls = { DOCVERIFY_TLS_CERT_FILE: "/c.pem", DOCVERIFY_TLS_KEY_FILE: "/k.pem", DOCVERIFY_PORT: "8443" };
    expect(parse(tls).publicUrl).toBe("https://127.0.0.1:8443");
    const explicit = parse({ ...tls, DOCVERIFY_PUBLIC_URL: "https://verify.example.org" });
    expect([explicit.publicUrl, explicit.publicUrlIsDefault]).toEqual(["https://verify.example.org", false]);
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ["DOCVERIFY_PORT", { DOCVERIFY_PORT: "eighty" }, /not a whole number; allowed: 0 to 65535/],
    ["DOCVERIFY_PORT", { DOCVERIFY_PORT: "70000" }, /out of range; allowed: 0 to 65535/],
    ["DOCVERIFY_PORT", { DOCVERIFY_PORT: "-1" }, /not a whole number/],
    ["DOCVERIFY_HOST", { DOCVERIFY_HOST: "exa mple" }, /not a host name/],
    ["DOCVERIFY_PUBLIC_URL", { DOCVERIFY_PUBLIC_URL: "verify.example.org" }, /not an absolute URL/],
    ["DOCVERIFY_PUBLIC_URL", { DOCVERIFY_PUBLIC_URL: "ftp://x.org" }, /http:\/\/ or https:\/\//],
    ["DOCVERIFY_PUBLIC_URL", { DOCVERIFY_PUBLIC_URL: "https://x.org/?a=1" }, /query/],
    ["DOCVERIFY_LEDGER_NETWORK", { DOCVERIFY_LEDGER_NETWORK: "devnet" }, /allowed: local, testnet, previewnet, mainnet/],
    ["DOCVERIFY_LEDGER_OPERATOR_ID", { DOCVERIFY_LEDGER_NETWORK: "mainnet" }, /required when DOCVERIFY_LEDGER_NETWORK is mainnet/],
    ["DOCVERIFY_LEDGER_OPERATOR_ID", { DOCVERIFY_LEDGER_OPERATOR_ID: "1234" }, /0\.0\.N/],
    [
      "DOCVERIFY_LEDGER_OPERATOR_KEY_FILE",
      { DOCVERIFY_LEDGER_NETWORK: "testnet", DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.5" },
      /required when DOCVERIFY_LEDGER_NETWORK is testnet/,
    ],
    [
      "DOCVERIFY_LOCAL_LEDGER_URL",
      { DOCVERIFY_LEDGER_NETWORK: "testnet", DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.5", DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: "/k", DOCVERIFY_LOCAL_LEDGER_URL: "http://127.0.0.1:5551" },
      /only allowed when DOCVERIFY_LEDGER_NETWORK is local/,
    ],
    ["DOCVERIFY_LOCAL_LEDGER_URL", { DOCVERIFY_LOCAL_LEDGER_URL: "127.0.0.1:5551" }, /not an absolute URL/],
    ["DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS", { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1.5" }, /not a whole number; allowed: 0 to 60000/],
    ["DOCVERIFY_LOCAL_LEDGER_GRPC_PORT", { DOCVERIFY_LOCAL_LEDGER_GRPC_PORT: "0" }, /allowed: 1 to 65535/],
    ["DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT", { DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: "65536" }, /allowed: 1 to 65535/],
    ["DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT", { DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: "5551", DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT: "5551" }, /already DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT's port/],
    ["DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT", { DOCVERIFY_LOCAL_LEDGER_URL: "http://127.0.0.1:5551", DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT: "5552" }, /only for the embedded local ledger/],
    [
      "DOCVERIFY_LOCAL_LEDGER_GRPC_PORT",
      { DOCVERIFY_LEDGER_NETWORK: "testnet", DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.5", DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: "/k", DOCVERIFY_LOCAL_LEDGER_GRPC_PORT: "50211" },
      /only allowed when DOCVERIFY_LEDGER_NETWORK is local/,
    ],
    ["DOCVERIFY_ANCHOR_VALID_SECONDS", { DOCVERIFY_ANCHOR_VALID_SECONDS: "14" }, /allowed: 15 to 180/],
    ["DOCVERIFY_ANCHOR_VALID_SECONDS", { DOCVERIFY_ANCHOR_VALID_SECONDS: "181" }, /allowed: 15 to 180/],
    ["DOCVERIFY_RATE_LIMIT_ANONYMOUS", { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "0" }, /allowed: 1 to/],
    ["DOCVERIFY_RATE_LIMIT_KEY", { DOCVERIFY_RATE_LIMIT_KEY: "lots" }, /not a whole number/],
    ["DOCVERIFY_RATE_LIMIT_ORG", { DOCVERIFY_RATE_LIMIT_ORG: "1e3" }, /not a whole number/],
    ["DOCVERIFY_TRUSTED_PROXIES", { DOCVERIFY_TRUSTED_PROXIES: "10.0.0.0/33" }, /prefix length/],
    ["DOCVERIFY_TRUSTED_PROXIES", { DOCVERIFY_TRUSTED_PROXIES: "proxy.local" }, /not an IP address or CIDR block/],
    ["DOCVERIFY_METRICS_ALLOW", { DOCVERIFY_METRICS_ALLOW: "256.0.0.1" }, /not an IP address/],
    ["DOCVERIFY_TLS_KEY_FILE", { DOCVERIFY_TLS_CERT_FILE: "/c.pem" }, /must be set together/],
    ["DOCVERIFY_TLS_CERT_FILE", { DOCVERIFY_TLS_KEY_FILE: "/k.pem" }, /must be set together/],
    ["DOCVERIFY_LOG_LEVEL", { DOCVERIFY_LOG_LEVEL: "verbose" }, /allowed: debug, info, warn, error/],
    ["DOCVERIFY_DATABASE", { DOCVERIFY_DATABASE: "x" }, /unknown setting/],
    ["DOCVERIFY_DATABASE_URL", { DOCVERIFY_DATABASE_URL: "not a url" }, /is not a URL; give postgres:\/\//],
    ["DOCVERIFY_DATABASE_URL", { DOCVERIFY_DATABASE_URL: "mysql://u@db/x" }, /must use postgres:\/\/ or postgresql:\/\//],
    ["DOCVERIFY_DATABASE_URL", { DOCVERIFY_DATABASE_URL: "postgres://u@db.internal" }, /names no database/],
    ["DOCVERIFY_DATABASE_URL", { DOCVERIFY_DATABASE_URL: "postgres://u@db/x#frag" }, /fragment/],
    ["DOCVERIFY_DATABASE_PASSWORD_FILE", { DOCVERIFY_DATABASE_PASSWORD_FILE: "/etc/pw" }, /only allowed with DOCVERIFY_DATABASE_URL/],
    ["DOCVERIFY_DATABASE_PASSWORD_FILE", { DOCVERIFY_DATABASE_URL: "postgres://u:hunter2@db/x", DOCVERIFY_DATABASE_PASSWORD_FILE: "/etc/pw" }, /given twice/],
    ["DOCVERIFY_NODE_NAME", { DOCVERIFY_NODE_NAME: "node one" }, /not a node name/],
    ["DOCVERIFY_NODE_NAME", { DOCVERIFY_NODE_NAME: "-a" }, /not a node name/],
    ["DOCVERIFY_NODE_NAME", { DOCVERIFY_NODE_NAME: "n".repeat(64) }, /not a node name/],
    ["DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", { DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "30" }, /only allowed with DOCVERIFY_DATABASE_URL/],
    ["DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", { DOCVERIFY_DATABASE_URL: "postgres://u@db/x", DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "4" }, /out of range; allowed: 5 to 3600/],
    ["DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", { DOCVERIFY_DATABASE_URL: "postgres://u@db/x", DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "3601" }, /out of range; allowed: 5 to 3600/],
    ["DOCVERIFY_LEDGER_STEP_DOWN_SECONDS", { DOCVERIFY_DATABASE_URL: "postgres://u@db/x", DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "30s" }, /not a whole number; allowed: 5 to 3600/],
    ["DOCVERIFY_CONTACT", { DOCVERIFY_CONTACT: "support" }, /neither an email address nor an http:\/\/ or https:\/\/ URL/],
    ["DOCVERIFY_CONTACT", { DOCVERIFY_CONTACT: "a@b" }, /neither an email address/],
    ["DOCVERIFY_CONTACT", { DOCVERIFY_CONTACT: "ftp://example.org/help" }, /neither an email address/],
    ["DOCVERIFY_CONTACT", { DOCVERIFY_CONTACT: "https://example.org/help?x=1" }, /must not carry a query/],
  ];
  for (const [setting, env, message] of bad) {
    test(`refuses ${JSON.stringify(env)} naming ${setting}`, () => {
      const e = refusal(env);
      expect(e.setting).toBe(setting);
      expect(e.message.startsWith(`${setting}: `)).toBe(true);
      expect(e.message).toMatch(message);
    });
  }

  test("the database password comes from DOCVERIFY_DATABASE_PASSWORD_FILE, else the systemd credential database-password (read when it exists)", () => {
    const url = "postgres://docverify@db.internal/docverify";
    expect(parse({ DOCVERIFY_DATABASE_URL: url })).toMatchObject({ databasePasswordFile: null, databasePasswordCredential: null });
    expect(parse({ DOCVERIFY_DATABASE_URL: url, DOCVERIFY_DATABASE_PASSWORD_FILE: "/etc/docverify/db-password" }).databasePasswordFile).toBe("/etc/docverify/db-password");
    // Under systemd: where the credential would be (core.ts reads it only if systemd put it there).
    expect(parse({ DOCVERIFY_DATABASE_URL: url, CREDENTIALS_DIRECTORY: "/run/credentials/docverify.service" }).databasePasswordCredential).toBe(
      "/run/credentials/docverify.service/database-password",
    );
    // The setting wins over the credential; without a database there is none.
    expect(parse({ DOCVERIFY_DATABASE_URL: url, CREDENTIALS_DIRECTORY: "/run/c", DOCVERIFY_DATABASE_PASSWORD_FILE: "/other" })).toMatchObject({
      databasePasswordFile: "/other",
      databasePasswordCredential: null,
    });
    expect(parse({ CREDENTIALS_DIRECTORY: "/run/c" }).databasePasswordCredential).toBeNull();
    // Given twice is refused, without repeating the URL's password.
    const twice = refusal({ DOCVERIFY_DATABASE_URL: "postgres://u:hunter2@db/x", DOCVERIFY_DATABASE_PASSWORD_FILE: "/etc/pw" });
    expect(twice.message).toContain("given twice");
    expect(twice.message).not.toContain("hunter2");
  });

  test("DOCVERIFY_DATABASE_URL: unset is the embedded SQLite; a postgres URL is kept, and shown only with its password hidden", () => {
    const embedded = parse({});
    expect(embedded.databaseUrl).toBeNull();
    expect(embedded.databaseUrlRedacted).toBeNull();
    const url = "postgresql://docverify:s3cret-pw@db.internal:5433/docverify?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem";
    const c = parse({ DOCVERIFY_DATABASE_URL: url });
    expect(c.databaseUrl).toBe(url);
    expect(c.databaseUrlRedacted).toBe("postgresql://docverify:***@db.internal:5433/docverify?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem");
    expect(parse({ DOCVERIFY_DATABASE_URL: "postgres://u@db/x" }).databaseUrlRedacted).toBe("postgres://u@db/x");
    // A refused URL is never repeated in the error: it may hold a password.
    for (const bad of ["mysql://u:hunter2@db/x", "postgres://u:hunter2@db", "postgres://u:hunter2@db/x#f"]) {
      expect(refusal({ DOCVERIFY_DATABASE_URL: bad }).message).not.toContain("hunter2");
    }
  });

  test("DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: 30 by default, with or without a database; as given with one", () => {
    expect(parse({}).ledgerStepDownSeconds).toBe(30);
    expect(parse({ DOCVERIFY_DATABASE_URL: "postgres://u@db/x" }).ledgerStepDownSeconds).toBe(30);
    expect(parse({ DOCVERIFY_DATABASE_URL: "postgres://u@db/x", DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "5" }).ledgerStepDownSeconds).toBe(5);
    expect(parse({ DOCVERIFY_DATABASE_URL: "postgres://u@db/x", DOCVERIFY_LEDGER_STEP_DOWN_SECONDS: "3600" }).ledgerStepDownSeconds).toBe(3600);
  });

  test("DOCVERIFY_CONTACT: unset is null; an email address or an http(s) URL", () => {
    expect(parse({}).contact).toBeNull();
    expect(parse({ DOCVERIFY_CONTACT: "api@dv.example.org" }).contact).toEqual({ email: "api@dv.example.org" });
    expect(parse({ DOCVERIFY_CONTACT: "https://intranet.example.org/docverify/" }).contact).toEqual({ url: "https://intranet.example.org/docverify" });
  });

  test("DOCVERIFY_NODE_NAME: the host name by default, or as given", () => {
    expect(parse({}).nodeName).toBe(hostname());
    expect(parse({ DOCVERIFY_NODE_NAME: "dv-2.dc1" }).nodeName).toBe("dv-2.dc1");
  });

  test("empty values count as unset", () => {
    expect(parse({ DOCVERIFY_PORT: "", DOCVERIFY_LOG_LEVEL: " " }).port).toBe(8080);
  });

  test("nothing outside src/config reads process.env", async () => {
    const offenders: string[] = [];
    for await (const file of new Bun.Glob("src/**/*.ts").scan({ cwd: `${import.meta.dir}/..` })) {
      if (file.startsWith("src/config/") || file === "src/main.ts") continue;
      // The bulk commands' io (also the entry of the Node.js bundle, without src/config): it hands
      // the environment to them, which read only CLIENT_SETTINGS.
      if (file === "src/bulk/cli.ts") continue;
      const text = (await Bun.file(`${import.meta.dir}/../${file}`).text()).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/process\.env|Bun\.env|import\.meta\.env/.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
