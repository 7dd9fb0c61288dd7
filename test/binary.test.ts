/**
 * The product as shipped: `npm run build` makes one executable, which runs from an empty
 * folder with nothing beside it (migrations, docs UI and OpenAPI document are inside it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, cleanup, startService, tempDir } from "./support/env.ts";
import { productBuild, type ProductBuild } from "./support/build.ts";
import { SoftAuthenticator } from "./support/soft-authenticator.ts";
import { waitFor } from "./support/wait.ts";

afterAll(cleanup);

/** The run's build (support/build.ts): made by the first file that needs it, this one or another. */
let build: ProductBuild;
let binary: string;
beforeAll(() => {
  build = productBuild();
  binary = build.binary;
}, 120_000);

/** The binary's administration commands on the data folder `data`, run from `cwd`: each must exit 0; its output, trimmed. */
function adminCommand(cwd: string, data: string): (...args: string[]) => string {
  return (...args) => {
    const out = Bun.spawnSync([binary, ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, DOCVERIFY_DATA_DIR: data } });
    expect(out.exitCode, out.stderr.toString()).toBe(0);
    return out.stdout.toString().trim();
  };
}

test(
  "npm run build produces one executable",
  () => {
    expect(build.exitCode, build.stderr).toBe(0);
    expect(statSync(binary).mode & 0o111).not.toBe(0);
  },
  120_000,
);

test("the binary prints its version and commit", () => {
  const out = Bun.spawnSync([binary, "--version"], { cwd: tempDir() });
  expect(out.exitCode).toBe(0);
  const pkg = require(join(ROOT, "package.json")) as { version: string };
  expect(out.stdout.toString()).toMatch(new RegExp(`^docverify ${pkg.version.replace(/\./g, "\\.")} \\(commit [0-9a-f]{7,}(-dirty)?\\)\\n$`));
});

test("the binary runs from an empty folder with nothing beside it, serves everything, and exits 0 on SIGTERM", async () => {
  const alone = tempDir("docverify-alone-");
  const copy = join(alone, "docverify");
  copyFileSync(binary, copy);
  Bun.spawnSync(["chmod", "+x", copy]);
  const cwd = tempDir("docverify-cwd-");
  const svc = await startService({ cmd: [copy], cwd });
  expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  const doc = await fetch(`${svc.url}/v1/openapi.json`);
  expect(doc.status).toBe(200);
  expect(((await doc.json()) as { openapi: string }).openapi).toStartWith("3.1");
  const page = await (await fetch(`${svc.url}/docs`)).text();
  expect(page).toContain("/docs/assets/swagger-ui-bundle.js");
  const js = await fetch(`${svc.url}/docs/assets/swagger-ui-bundle.js`);
  expect(js.status).toBe(200);
  expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  // The person pages' scripts, imported at their first request (a chunk of their own inside the binary).
  for (const name of ["enrol", "sign"]) {
    const script = await fetch(`${svc.url}/app/assets/${name}.js`);
    expect(script.status).toBe(200);
    expect(await script.text()).toBe(readFileSync(join(ROOT, "src", "http", "pages", `app-${name}.js`), "utf8"));
  }
  expect(await svc.stop()).toBe(0);
  // the migrated database landed in ./data of the working folder, and nothing else appeared
  expect(readdirSync(cwd)).toEqual(["data"]);
  expect(readdirSync(alone)).toEqual(["docverify"]);
  expect(readdirSync(join(cwd, "data"))).toContain("docverify.db");
}, 30_000);

test("stray .env and bunfig.toml files beside the binary change nothing", async () => {
  const cwd = tempDir("docverify-stray-");
  await Bun.write(join(cwd, ".env"), "DOCVERIFY_PORT=notaport\nDOCVERIFY_LOG_LEVEL=nonsense\n");
  await Bun.write(join(cwd, "bunfig.toml"), 'preload = ["./evil.ts"]\n');
  await Bun.write(join(cwd, "evil.ts"), 'console.log("EVIL"); process.exit(9);\n');
  const svc = await startService({ cmd: [binary], cwd });
  expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  expect(await svc.stop()).toBe(0);
  expect(svc.logLines().length).toBeGreaterThan(0);
}, 30_000);

test("a node_modules folder beside the binary (running it from a checkout) changes nothing", async () => {
  // protobufjs looks for `long` with a dynamic require from the working folder; a copy found there
  // once made the ledger code crash at start (`Long.fromBits is not a function`).
  const cwd = tempDir("docverify-modules-");
  cpSync(join(ROOT, "node_modules", "long"), join(cwd, "node_modules", "long"), { recursive: true });
  const svc = await startService({ cmd: [binary], cwd });
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  expect(await svc.stop()).toBe(0);
  expect(svc.stderr()).not.toContain("fromBits");
}, 30_000);

test("the embedded ledger's worker thread is the one inside the binary, never a file of that name in the working folder", async () => {
  // Bun loads a relative worker path that is not embedded from the working folder. Files at every
  // path the code could ask for, relative to that folder, would each leave a marker and exit.
  const cwd = tempDir("docverify-planted-");
  const marker = join(cwd, "PLANTED-CODE-RAN");
  const planted = `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); process.exit(9);\n`;
  for (const dir of [".", "local-ledger", "src/local-ledger", "anchoring/local-ledger", "src/anchoring/local-ledger"]) {
    mkdirSync(join(cwd, dir), { recursive: true });
    for (const name of ["worker.ts", "worker.js"]) await Bun.write(join(cwd, dir, name), planted);
  }
  const svc = await startService({ cmd: [binary], cwd, env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" } });
  const started = svc.logLines().find((l) => l.msg === "ledger ready")!;
  const ready = await fetch(`${svc.url}/readyz`);
  expect(ready.status).toBe(200);
  expect(((await ready.json()) as { checks: Record<string, string> }).checks.ledger).toBe("ok");
  // The ledger answers on its own address: it is the real one, started from the binary.
  const nodes = await fetch(`${String(started.ledgerMirrorUrl)}/api/v1/network/nodes`);
  expect(((await nodes.json()) as { nodes: { node_account_id: string }[] }).nodes[0]!.node_account_id).toBe("0.0.3");
  expect(await svc.stop()).toBe(0);
  expect(existsSync(marker)).toBe(false);
}, 30_000);

test("an organisation-tier verification is logged by the writer thread inside the binary, never by a file of that name in the working folder", async () => {
  const cwd = tempDir("docverify-writer-");
  const data = join(cwd, "data");
  const marker = join(cwd, "PLANTED-CODE-RAN");
  const planted = `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran"); process.exit(9);\n`;
  for (const dir of [".", "storage", "src/storage"]) {
    mkdirSync(join(cwd, dir), { recursive: true });
    for (const name of ["writer-worker.ts", "writer-worker.js"]) await Bun.write(join(cwd, dir, name), planted);
  }
  const dv = adminCommand(cwd, data);
  const org = dv("org", "create", "--name", "Binary Verifiers", "--api-access", "--validated").split(/\s/)[0]!;
  const key = (JSON.parse(dv("key", "mint", "--org", org, "--env", "live", "--json")) as { key: string }).key;
  const svc = await startService({ cmd: [binary], cwd, env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" } });
  const docHash = "sha256:" + "cd".repeat(32);
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(`${svc.url}/v1/verifications`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) }),
    ),
  );
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  const ids = await Promise.all(answers.map(async (a) => ((await a.json()) as { verificationId: string }).verificationId));
  const page = (await (await fetch(`${svc.url}/v1/verifications?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { verificationId: string }[] };
  expect(page.data.map((r) => r.verificationId).sort()).toEqual([...ids].sort());
  expect(await svc.stop()).toBe(0);
  expect(existsSync(marker)).toBe(false);
}, 60_000);

test("busy verification inside the binary: the checks past the threshold run on its embedded signing workers, every answer verified_org", async () => {
  const cwd = tempDir("docverify-busy-");
  const data = join(cwd, "data");
  const dv = adminCommand(cwd, data);
  const org = dv("org", "create", "--name", "Binary Busy Verifiers", "--api-access", "--addon", "--validated").split(/\s/)[0]!;
  const key = (JSON.parse(dv("key", "mint", "--org", org, "--env", "live", "--json")) as { key: string }).key;
  const svc = await startService({ cmd: [binary], cwd, env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100", DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000" } });
  const metric = async (line: RegExp) => Number(line.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1] ?? NaN);
  // 110 records: 220 checks, past the 200 in two seconds after which verification goes to the workers.
  const hashes = Array.from({ length: 110 }, (_, i) => "sha256:" + new Bun.CryptoHasher("sha256").update(`busy binary ${i}`).digest("hex"));
  for (let i = 0; i < hashes.length; i += 10) {
    await Promise.all(
      hashes.slice(i, i + 10).map(async (docHash) => {
        // 503 while the organisation's topic is created on the embedded ledger.
        const status = await waitFor(
          "the record's creation past the topic's",
          async () => {
            const created = await fetch(`${svc.url}/v1/records`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) });
            await created.arrayBuffer();
            return created.status === 503 ? null : created.status;
          },
          10_000,
          100,
        );
        expect(status).toBe(201);
      }),
    );
  }
  await waitFor("every record anchored", async () => ((await metric(/^docverify_records\{state="anchored"\} (\d+)$/m)) >= hashes.length ? true : null), 30_000, 100);
  const verdicts: string[] = [];
  for (let i = 0; i < hashes.length; i += 16) {
    const answers = await Promise.all(
      hashes.slice(i, i + 16).map(async (docHash) => {
        const res = await fetch(`${svc.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) });
        expect(res.status).toBe(200);
        return ((await res.json()) as { verdict: string }).verdict;
      }),
    );
    verdicts.push(...answers);
  }
  expect(verdicts).toEqual(hashes.map(() => "verified_org"));
  expect(await metric(/^docverify_signature_verifications_total\{where="workers"\} (\d+)$/m)).toBeGreaterThan(0);
  expect(await metric(/^docverify_signature_verifications_total\{where="thread"\} (\d+)$/m)).toBeGreaterThanOrEqual(200);
  expect(await svc.stop()).toBe(0);
}, 90_000);

test("the binary enrols a person with a passkey and signs for them (the WebAuthn library and its polyfill load inside it)", async () => {
  const cwd = tempDir("docverify-person-");
  const data = join(cwd, "data");
  const dv = adminCommand(cwd, data);
  const org = dv("org", "create", "--name", "Binary Notaries", "--api-access", "--addon", "--validated");
  // A port chosen first, so that the public URL (a domain: the relying party id) is known.
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  const publicUrl = `http://localhost:${port}`;
  const svc = await startService({ cmd: [binary], cwd, env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_PORT: String(port), DOCVERIFY_PUBLIC_URL: publicUrl, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" } });
  const added = JSON.parse(dv("person", "add", "--org", org.split(/\s/)[0]!, "--name", "Bin Signer", "--email", "bin@example.test", "--identity", "passport", "--json")) as { enrolUrl: string };
  const token = added.enrolUrl.split("/enrol/")[1]!;
  const post = (path: string, body: unknown, cookie?: string) =>
    fetch(`${svc.url}${path}`, { method: "POST", headers: { origin: publicUrl, "content-type": "application/json", ...(cookie ? { cookie: `docverify_session=${cookie}` } : {}) }, body: JSON.stringify(body) });
  const auth = new SoftAuthenticator(publicUrl);
  // 503 while the organisation's topic is being created on the embedded ledger.
  const options = await waitFor(
    "enrolment options past the topic's creation",
    async () => {
      const res = await post(`/app/enrol/${token}/options`, {});
      if (res.status !== 503) return res;
      await res.arrayBuffer();
      return null;
    },
    10_000,
    100,
  );
  expect(options.status).toBe(200);
  const enrolled = await post(`/app/enrol/${token}`, auth.register((await options.json()) as never));
  expect(enrolled.status).toBe(201);
  const session = /docverify_session=([^;]*)/.exec(enrolled.headers.get("set-cookie")!)![1]!;
  const docHash = "sha256:" + "ab".repeat(32);
  const prepared = await post("/app/signatures/options", { originalDocHash: docHash }, session);
  const signed = await post("/app/signatures", auth.assert((await prepared.json()) as never), session);
  expect(signed.status).toBe(201);
  expect(((await signed.json()) as { originalDocHash: string; signerName: string })).toMatchObject({ originalDocHash: docHash, signerName: "Bin Signer" });
  expect(await svc.stop()).toBe(0);
}, 60_000);

test("the binary serves as a node on PostgreSQL: migrates the database, leads the anchor loop, anchors a record and logs its verification", async () => {
  const { sharedPostgres } = await import("./support/postgres.ts");
  const { LOCAL_LEDGER_FILES, startLocalLedger } = await import("../src/local-ledger/index.ts");
  const pg = await sharedPostgres();
  try {
    const ledgerDir = tempDir("docverify-ledger-");
    const ledger = await startLocalLedger({ dataDir: ledgerDir, consensusMs: 100 });
    try {
      const cwd = tempDir("docverify-pg-");
      const keyFile = join(cwd, "master.key");
      await Bun.write(keyFile, "5a".repeat(32) + "\n");
      Bun.spawnSync(["chmod", "600", keyFile]);
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: cwd,
        DOCVERIFY_DATABASE_URL: await pg.createDatabase("binary"),
        DOCVERIFY_MASTER_KEY_FILE: keyFile,
        DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
        DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
        DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
        DOCVERIFY_NODE_NAME: "binary-1",
      };
      const svc = await startService({ cmd: [binary], cwd, env: { ...env, DOCVERIFY_DATA_DIR: join(cwd, "data") } });
      expect(svc.logLines().some((l) => l.msg === "leading the anchor loop" && l.node === "binary-1")).toBe(true);
      const dv = (...args: string[]) => {
        const out = Bun.spawnSync([binary, ...args, "--data", join(cwd, "admin")], { cwd, env });
        expect(out.exitCode, out.stderr.toString()).toBe(0);
        return out.stdout.toString().trim();
      };
      const org = (JSON.parse(dv("org", "create", "--name", "Binary Nodes", "--api-access", "--addon", "--validated", "--json")) as { id: string }).id;
      const key = (JSON.parse(dv("key", "mint", "--org", org, "--env", "live", "--json")) as { key: string }).key;
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const docHash = "sha256:" + "ef".repeat(32);
      // The leader creates the organisation's topic first: record creation answers 503 until then.
      const created = await waitFor(
        "the record's creation past the topic's",
        async () => {
          const res = await fetch(`${svc.url}/v1/records`, { method: "POST", headers, body: JSON.stringify({ originalDocHash: docHash }) });
          await res.arrayBuffer();
          return res.status === 503 ? null : res.status;
        },
        10_000,
        100,
      );
      expect(created).toBe(201);
      // no_record until the ledger accepts the message, pending_anchor until its consensus.
      await waitFor(
        "the record verified_org",
        async () => {
          const v = await fetch(`${svc.url}/v1/verifications`, { method: "POST", headers, body: JSON.stringify({ originalDocHash: docHash }) });
          return ((await v.json()) as { verdict: string }).verdict === "verified_org" ? true : null;
        },
        10_000,
        100,
      );
      const page = (await (await fetch(`${svc.url}/v1/verifications?limit=1`, { headers })).json()) as { data: { verdict: string }[] };
      expect(page.data[0]?.verdict).toBe("verified_org");
      const status = JSON.parse(dv("status", "--json")) as { database: string; cluster: { leader: { node: string } } };
      expect(status.cluster.leader.node).toBe("binary-1");
      expect(status.database).toStartWith("postgres://");
      expect(await svc.stop()).toBe(0);
      // Nothing of the embedded database was made beside it.
      expect(existsSync(join(cwd, "data", "docverify.db"))).toBe(false);
    } finally {
      await ledger.close();
    }
  } finally {
    await pg.destroy();
  }
}, 120_000);
