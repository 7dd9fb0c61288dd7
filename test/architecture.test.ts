/**
 * Imports go one way (../shared/style.md), and each one is a decision someone made. This test
 * reads every import line of src/ and holds it to two allowlists:
 * - every bare specifier (a package, `node:*`, `bun:*`) with the folders or files that may use
 *   it: a new dependency, or an old one in a new place, fails here until it is added with its
 *   reason;
 * - every edge between top-level areas of src/ (capabilities, http/, admin/, the local ledger,
 *   the composition root), with some edges narrowed to the one file they may reach.
 * A rule that is in the way is changed here, with a reason; never worked around in the code.
 */
import { expect, test } from "bun:test";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./support/env.ts";

const SRC = join(ROOT, "src");

/** Where a bare import may appear: a folder (ending in `/`) or a file, relative to src/. */
type Places = readonly string[];

/**
 * Every bare specifier src/ may import, by exact name or by prefix (ending in `/` or `*`), and
 * where. The reason is beside each: it is what a reviewer reads when the list changes.
 */
const BARE: readonly { spec: string; places: Places; why: string }[] = [
  // The HTTP stack and its documentation UI stay in http/.
  { spec: "elysia", places: ["http/"], why: "the web framework" },
  { spec: "@elysiajs/openapi", places: ["http/docs.ts"], why: "the OpenAPI document" },
  { spec: "swagger-ui-dist/", places: ["http/docs.ts"], why: "the docs UI's files, embedded" },
  // The ledger: the SDK in one adapter file; its own dependencies only warmed up by the loader.
  { spec: "@hashgraph/sdk", places: ["anchoring/hedera-ledger.ts"], why: "the ledger SDK, one adapter" },
  { spec: "@hiero-ledger/proto", places: ["anchoring/load.ts"], why: "the SDK's dependency, loaded first to split the start-up work" },
  { spec: "@hiero-ledger/cryptography", places: ["anchoring/load.ts"], why: "as above" },
  // The local ledger is a separate program speaking Hedera's wire protocol.
  { spec: "@hashgraph/proto", places: ["local-ledger/"], why: "Hedera's protobuf messages" },
  { spec: "long", places: ["lib/protobuf-long.ts"], why: "patched into protobufjs before the SDK loads" },
  { spec: "protobufjs/minimal.js", places: ["lib/protobuf-long.ts"], why: "as above" },
  // Cryptography.
  // The receipt verifier checks without the appliance's code (docs/receipts.md §4): its own noble
  // imports.
  { spec: "@noble/post-quantum/ml-dsa.js", places: ["crypto/", "verifier/"], why: "ML-DSA; the verifier's signature check" },
  { spec: "@noble/hashes/sha2.js", places: ["verifier/", "sign-pages/"], why: "SHA-256 the same in Node.js and a browser: the verifier's, and the signing and verify pages' (plain http has no crypto.subtle)" },
  { spec: "@noble/", places: ["crypto/"], why: "the second ML-DSA implementation, secp256k1, keccak" },
  { spec: "@simplewebauthn/server", places: ["persons/webauthn.ts"], why: "WebAuthn ceremonies of the person application, one adapter" },
  { spec: "reflect-metadata", places: ["persons/webauthn.ts"], why: "the polyfill @simplewebauthn/server's certificate code needs loaded first (the compiled binary)" },
  { spec: "@simplewebauthn/browser", places: ["sign-pages/"], why: "the browser half of those ceremonies, bundled into the enrolment and signing pages" },
  { spec: "@cantoo/pdf-lib", places: ["pdf/stamp.ts"], why: "the signed PDF's incremental update, one adapter (runs in the browser)" },
  { spec: "node:crypto", places: ["crypto/", "keys/api-key.ts", "persons/persons.ts", "persons/service.ts", "verification/log/cursor.ts", "records/messages.ts", "anchoring/submit-key.ts", "anchoring/merkle.ts", "storage/", "http/pages/html.ts", "local-ledger/", "app/compose.ts", "bulk/hash.ts"], why: "hashes, HMAC, random bytes, constant-time comparison (enrolment tokens: random bytes and their digest; a batch's Merkle tree, SHA-256 only; the bulk commands' file digests, streamed); signing only in crypto/ (next test)" },
  // Storage.
  { spec: "bun:sqlite", places: ["storage/", "local-ledger/store.ts"], why: "the embedded database; the local ledger keeps its own" },
  { spec: "bun", places: ["storage/pg-store.ts", "storage/pg-cluster.ts"], why: "Bun.SQL, the PostgreSQL client (docs/storage.md, Two engines): opened in pg-store.ts; pg-cluster.ts names the type of the connection it reserves" },
  { spec: "drizzle-orm", places: ["storage/", "keys/", "records/", "persons/", "anchoring/queue.ts"], why: "queries over the schema (anchoring/pg-journal.ts no longer: it reads through the loop's port)" },
  { spec: "drizzle-orm/", places: ["storage/"], why: "the schema builder, the migrator, the driver" },
  // Operating-system access, where the operator's files and processes are handled.
  { spec: "node:fs", places: ["storage/", "lib/", "admin/", "local-ledger/", "crypto/master-key.ts", "app/serve.ts", "app/sandbox.ts", "anchoring/setup.ts", "verifier/cli.ts", "http/pages/bundle.ts", "bulk/"], why: "files: the data folder, the master key, TLS files, the ledger's folder; the verifier's receipt and document; the pages' sources, read at build time (a macro: never in the executable); the files the bulk commands hash, the folders they walk, their manifest, key file and receipts" },
  { spec: "node:path", places: ["storage/", "admin/", "local-ledger/", "config/", "crypto/master-key.ts", "app/core.ts", "app/sandbox.ts", "anchoring/setup.ts", "anchoring/paths.ts", "http/pages/bundle.ts", "bulk/"], why: "paths of those files" },
  { spec: "node:net", places: ["anchoring/node-reachability.ts", "verifier/cli.ts", "verifier/http-get.ts"], why: "TCP reachability of a consensus node (also for docverify status); the verifier's isIP, to tell an address from a host name (--connect-to, pinning a mirror node to the address counted)" },
  { spec: "node:dns", places: ["verifier/cli.ts"], why: "the verifier's command-line shells: a mirror node's addresses, to count witnesses by host; the _docverify.DOMAIN TXT record that confirms an organisation's identity" },
  { spec: "node:async_hooks", places: ["anchoring/hedera-ledger.ts"], why: "the SDK hands its own error on, not the gRPC call's: the channel learns which submission a call belongs to (whether its connection was ever made) from the async context the submission runs in" },
  { spec: "node:http2", places: ["local-ledger/grpc.ts", "anchoring/grpc-unary.ts"], why: "the local ledger's unary gRPC server (grpc-js's server cost its thread 2.7 MB idle); the SDK's unary calls to a node (over grpc-js's client a submission cost 375–454 µs of CPU, over these 215–234)" },
  { spec: "node:http", places: ["verifier/http-get.ts"], why: "the verifier's GET of mirror nodes in Node.js, without undici's 60 ms load" },
  { spec: "node:https", places: ["verifier/http-get.ts"], why: "as above, for https mirror nodes" },
  { spec: "node:os", places: ["config/index.ts", "app/sandbox.ts"], why: "the host name, the default node name (docs/operations.md, Several nodes); the sandbox's temporary folder" },
  { spec: "node:util", places: ["lib/args.ts", "bulk/args.ts"], why: "parseArgs (the bulk commands' own: they cannot import lib/, the bundle for Node.js carries none of the appliance)" },
  { spec: "node:readline", places: ["admin/tui/ui.ts"], why: "the terminal UI's keys" },
  { spec: "bun:ffi", places: ["lib/sd-notify.ts"], why: "sd_notify over a datagram socket" },
  { spec: "@clack/prompts", places: ["admin/"], why: "the terminal UI" },
];

/** The top-level area of a src/ path: its first folder, `(root)` for src/'s own files, `(outside)` beyond src/. */
function areaOf(path: string): string {
  if (path.startsWith("..")) return "(outside)";
  return path.includes("/") ? path.split("/")[0]! : "(root)";
}

/**
 * Which areas each area may import. An entry `area/file.ts` allows that one file of the area
 * only. Capabilities never import http/ or admin/; lib/ imports nothing; the local ledger, a
 * separate program, only lib/ and crypto/.
 */
const EDGES: Readonly<Record<string, readonly string[]>> = {
  lib: [],
  config: ["lib"],
  crypto: ["lib"],
  // (outside): the migrations, embedded. A capability's ports (ports.ts, or ports-*.ts): the types
  // its drivers implement (storage/sqlite/, storage/postgres/), types only.
  storage: ["lib", "(outside)", "verification/ports.ts", "verification/log/ports.ts", "anchoring/loop/ports.ts", "anchoring/journal/ports.ts", "records/ports.ts", "receipts/ports.ts", "keys/ports.ts", "admin/ports.ts"],
  keys: ["lib", "crypto", "storage"],
  verification: ["lib", "crypto", "storage"],
  // Records queue their ledger messages in the journal, never through the loop.
  // verification/revocation.ts: the verify page's record is revoked by its key's compromise by
  // verification's one rule (a pure file that imports nothing).
  records: ["lib", "crypto", "storage", "anchoring/queue.ts", "anchoring/types.ts", "verification/revocation.ts"],
  anchoring: ["lib", "config", "crypto", "storage", "local-ledger"],
  // Receipts read what records and the anchor loop stored; they wait as verification's pending_anchor does.
  // verification/verdict.ts: its retryAfterFor.
  receipts: ["lib", "config", "crypto", "storage", "verification/verdict.ts"],
  "local-ledger": ["lib", "crypto"],
  // The person application (docs/persons.md): persons, their passkeys and sessions, over records.
  persons: ["lib", "crypto", "storage", "keys", "records", "anchoring/queue.ts"],
  // Browser code: the signed PDF's writer, and the pages' scripts bundled with it (scripts/build-app-pages.ts).
  pdf: [],
  // verifier/human-time.ts: the one way every page writes a time; verifier/signed-pdf.ts: the one
  // rule that finds the original inside a signed PDF (the verify page's). Both import nothing, so they bundle.
  "sign-pages": ["pdf", "verifier/human-time.ts", "verifier/signed-pdf.ts"],
  // The receipt verifier stands alone (docs/receipts.md §4): it imports nothing of the appliance.
  verifier: [],
  http: ["lib", "config", "keys", "records", "verification", "receipts", "persons", "anchoring/index.ts", "verifier/human-time.ts"],
  // The command line: the core's capabilities and the ledger's files, never the HTTP stack.
  // receipts/identity.ts: `trust export` lists the organisations exactly as /.well-known does;
  // persons/persons.ts: the person commands and the terminal UI administer persons.
  // persons/person-keys.ts: the terminal UI shows a person's keys and declares one compromised.
  // anchoring/submit-key.ts: `master-key rotate` reseals the ledger submit key, whose envelope's binding is that file's.
  admin: ["app/core.ts", "lib", "config", "crypto", "storage", "keys", "records", "local-ledger", "persons/persons.ts", "persons/person-keys.ts", "receipts/identity.ts", "anchoring/queue.ts", "anchoring/paths.ts", "anchoring/links.ts", "anchoring/node-reachability.ts", "anchoring/submit-key.ts"],
  // The composition (docs/architecture.md): the services built over storage, each engine's drivers
  // chosen, the HTTP surface, serve. The only area that imports every other.
  app: ["lib", "config", "crypto", "storage", "keys", "records", "verification", "receipts", "persons", "anchoring", "http", "admin/ports.ts", "version.ts"],
  // main.ts (the command line's dispatch), usage.ts (its usage texts) and version.ts: the composition, the commands, the verifier's command line.
  // The bulk commands (authenticate, check, revoke; also dist/docverify-client.mjs for Node.js 20):
  // the client package only, nothing of the appliance.
  bulk: ["../packages/client/src/index.ts"],
  // app/sandbox.ts: `docverify sandbox` is a composition (serve with its own folder, organisation and
  // key), so it lives in app/; app/sandbox-usage.ts is its usage, which loads nothing.
  // bulk/usage.ts: the bulk commands' usages, for --help without loading the client; bulk/cli.ts: their dispatch.
  "(root)": ["lib", "config", "crypto", "storage", "app/serve.ts", "app/sandbox.ts", "app/sandbox-usage.ts", "admin", "(outside)", "verifier/usage.ts", "verifier/cli.ts", "bulk/usage.ts", "bulk/cli.ts"],
};

async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: SRC })) files.set(file, await Bun.file(join(SRC, file)).text());
  return files;
}

function importsOf(files: Map<string, string>): { file: string; spec: string }[] {
  const edges: { file: string; spec: string }[] = [];
  for (const [file, text] of files) {
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)) {
      edges.push({ file, spec: (m[1] ?? m[2] ?? m[3])! });
    }
  }
  return edges;
}

const placed = (file: string, places: Places) => places.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p));

function forbiddenEdges(files: Map<string, string>): string[] {
  const bad: string[] = [];
  for (const { file, spec } of importsOf(files)) {
    const area = areaOf(file);
    if (spec.startsWith(".")) {
      const target = relative(SRC, resolve(dirname(join(SRC, file)), spec));
      const targetArea = areaOf(target);
      if (targetArea === area) continue;
      const allowed = EDGES[area] ?? [];
      if (!allowed.some((a) => a === targetArea || a === target)) bad.push(`${file} → ${spec} (${area} may import ${allowed.join(", ") || "nothing outside itself"})`);
      continue;
    }
    const rule = BARE.find((r) => (r.spec.endsWith("/") ? spec.startsWith(r.spec) : spec === r.spec));
    if (rule === undefined) bad.push(`${file} → ${spec} (not in the allowlist: add it to BARE with where and why)`);
    else if (!placed(file, rule.places)) bad.push(`${file} → ${spec} (only ${rule.places.join(", ")} may import it)`);
  }
  return bad;
}

test("every import in src/ is allowed: bare specifiers by place, edges between areas by rule", async () => {
  const files = await sources();
  expect(importsOf(files).length).toBeGreaterThan(100);
  expect([...new Set(files.keys())].map(areaOf).filter((a) => !(a in EDGES))).toEqual([]);
  expect(forbiddenEdges(files)).toEqual([]);
});

test("every bare specifier in the allowlist is still imported somewhere (no stale permission)", async () => {
  const specs = importsOf(await sources()).map((e) => e.spec);
  const stale = BARE.filter((r) => !specs.some((s) => (r.spec.endsWith("/") ? s.startsWith(r.spec) : s === r.spec))).map((r) => r.spec);
  expect(stale).toEqual([]);
});

/**
 * Every permission in the allowlists is used by some import of today's src/: a place a bare
 * specifier may be imported in (by the rule that governs that import: the first that matches, as
 * `forbiddenEdges` picks it), an edge an area may take (to an area or to one file of it), an area
 * named in EDGES, and the verifier's own lists. A permission nothing uses is one nobody reviews
 * any more: it is removed here, or it lets the next import through unnoticed.
 */
export function staleAllowances(files: Map<string, string>): string[] {
  const imports = importsOf(files);
  const stale: string[] = [];
  for (const rule of BARE) {
    const governed = imports.filter(({ spec }) => !spec.startsWith(".") && BARE.find((r) => (r.spec.endsWith("/") ? spec.startsWith(r.spec) : spec === r.spec)) === rule);
    for (const place of rule.places) if (!governed.some(({ file }) => placed(file, [place]))) stale.push(`BARE ${rule.spec}: ${place} (no file there imports it)`);
  }
  const areas = new Set([...files.keys()].map(areaOf));
  for (const [area, allowed] of Object.entries(EDGES)) {
    if (!areas.has(area)) stale.push(`EDGES ${area} (no such area in src/)`);
    const targets = imports
      .filter(({ file, spec }) => spec.startsWith(".") && areaOf(file) === area)
      .map(({ file, spec }) => relative(SRC, resolve(dirname(join(SRC, file)), spec)));
    for (const a of allowed) if (!targets.some((t) => areaOf(t) === a || t === a)) stale.push(`EDGES ${area} → ${a} (no file of ${area} imports it)`);
  }
  const verifierImports = imports.filter(({ file }) => file.startsWith("verifier/"));
  for (const spec of VERIFIER_BARE) if (!verifierImports.some((i) => i.spec === spec)) stale.push(`VERIFIER_BARE ${spec} (no verifier file imports it)`);
  for (const shell of VERIFIER_SHELLS) if (!files.has(shell)) stale.push(`VERIFIER_SHELLS ${shell} (no such file)`);
  for (const spec of VERIFIER_SHELL_NODE) if (!verifierImports.some((i) => i.spec === spec && VERIFIER_SHELLS.includes(i.file))) stale.push(`VERIFIER_SHELL_NODE ${spec} (no shell imports it)`);
  return stale;
}

test("every permission in the allowlists is used: each place of a bare specifier, each edge, each area", async () => {
  expect(staleAllowances(await sources())).toEqual([]);
  // The checker itself, on a src/ of three files.
  const sample = new Map([
    ["http/server.ts", 'import { Elysia } from "elysia";\nimport { x } from "../lib/x.ts";'],
    ["lib/x.ts", 'import { readFileSync } from "node:fs";'],
    ["verifier/cli.ts", 'import { readFileSync } from "node:fs";\nimport { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";'],
  ]);
  const found = staleAllowances(sample);
  expect(found).toContain("BARE @elysiajs/openapi: http/docs.ts (no file there imports it)");
  expect(found).toContain("BARE node:fs: storage/ (no file there imports it)");
  expect(found).toContain("BARE @noble/post-quantum/ml-dsa.js: crypto/ (no file there imports it)");
  expect(found).toContain("EDGES http → config (no file of http imports it)");
  expect(found).toContain("EDGES storage (no such area in src/)");
  expect(found).toContain("VERIFIER_SHELL_NODE node:dns (no shell imports it)");
  expect(found).toContain("VERIFIER_SHELLS verifier/standalone.ts (no such file)");
  expect(found.filter((s) => s.startsWith("BARE elysia:") || s.startsWith("BARE node:fs: lib/") || s.startsWith("EDGES http → lib ") || s.startsWith("BARE node:fs: verifier/cli.ts") || s.startsWith("VERIFIER_BARE @noble/post-quantum"))).toEqual([]);
});

test("every dependency a src/ file imports is declared in package.json", async () => {
  const pkg = (await Bun.file(join(ROOT, "package.json")).json()) as { dependencies: Record<string, string> };
  const packages = new Set(
    importsOf(await sources())
      .map((e) => e.spec)
      .filter((s) => !s.startsWith(".") && !s.startsWith("node:") && !s.startsWith("bun:"))
      .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!)),
  );
  expect([...packages].filter((p) => !(p in pkg.dependencies))).toEqual([]);
});

test("signing outside crypto/: no node:crypto signing API and no WebCrypto", async () => {
  const offenders: string[] = [];
  for (const [file, text] of await sources()) {
    if (file.startsWith("crypto/")) continue;
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    if (/import\s*\{[^}]*\b(sign|verify|generateKeyPair|generateKeyPairSync|createSign|createVerify|createPrivateKey|createPublicKey|webcrypto|subtle)\b[^}]*\}\s*from\s*["']node:crypto["']/.test(code)) offenders.push(`${file}: imports a signing API of node:crypto`);
    if (/\bimport\s+\*\s+as\s+\w+\s+from\s*["']node:crypto["']|\bimport\s+\w+\s+from\s*["']node:crypto["']/.test(code)) offenders.push(`${file}: imports node:crypto whole`);
    if (/\bcrypto\.subtle\b|\bsubtle\.(sign|verify|importKey|generateKey|digest)\b/.test(code)) offenders.push(`${file}: WebCrypto`);
  }
  expect(offenders).toEqual([]);
});

/**
 * The receipt verifier (src/verifier/) is one implementation in three shells and must run without
 * the appliance: it imports only its own files, noble's ML-DSA and SHA-256, and, in the two
 * command-line shells only, node:fs, node:http, node:https, node:dns and node:net
 * (witnesses counted by address, identity by DNS). Everything index.ts reaches bundles for a
 * browser (the verify-receipt page): no node: module. Of the appliance, only the command-line
 * dispatch (main.ts) imports it, and only its usage text and its command line; and any page its
 * time writer (human-time.ts), which imports nothing (checked below).
 */
const VERIFIER_BARE = ["@noble/post-quantum/ml-dsa.js", "@noble/hashes/sha2.js"];
const VERIFIER_SHELLS = ["verifier/cli.ts", "verifier/standalone.ts", "verifier/http-get.ts"];
/** Verifier files the appliance's pages bundle too: each imports nothing (the "sign-pages" edges above). */
const PAGE_SHARED = ["verifier/human-time.ts", "verifier/signed-pdf.ts"];
/**
 * What the command-line shells may use of Node.js: files, a plain GET (http-get.ts:
 * undici's fetch costs Node.js 20 60 ms to load), name resolution (a mirror node's addresses, a
 * TXT record) and isIP.
 */
const VERIFIER_SHELL_NODE = ["node:fs", "node:http", "node:https", "node:dns", "node:net"];

export function verifierViolations(files: Map<string, string>): string[] {
  const bad: string[] = [];
  for (const { file, spec } of importsOf(files)) {
    const target = spec.startsWith(".") ? relative(SRC, resolve(dirname(join(SRC, file)), spec)) : null;
    if (file.startsWith("verifier/")) {
      if (target !== null) {
        if (!target.startsWith("verifier/")) bad.push(`${file} → ${spec} (the verifier imports only its own files)`);
      } else if (!VERIFIER_BARE.includes(spec) && !(VERIFIER_SHELLS.includes(file) && VERIFIER_SHELL_NODE.includes(spec))) {
        bad.push(`${file} → ${spec} (the verifier imports only ${VERIFIER_BARE.join(", ")}; ${VERIFIER_SHELL_NODE.join(", ")} in ${VERIFIER_SHELLS.join(", ")})`);
      }
    } else if (target?.startsWith("verifier/") && !PAGE_SHARED.includes(target) && !(file === "main.ts" && target === "verifier/cli.ts") && !(file === "usage.ts" && target === "verifier/usage.ts")) {
      bad.push(`${file} → ${spec} (only main.ts's dispatch imports the verifier: verifier/cli.ts; and usage.ts its usage: verifier/usage.ts)`);
    }
  }
  // What the browser page bundles: index.ts and everything it reaches.
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file) || !files.has(file)) return;
    reached.add(file);
    for (const { spec } of importsOf(new Map([[file, files.get(file)!]]))) {
      if (spec.startsWith(".")) visit(relative(SRC, resolve(dirname(join(SRC, file)), spec)));
      else if (spec.startsWith("node:") || spec.startsWith("bun:")) bad.push(`${file} → ${spec} (reached from verifier/index.ts, which must bundle for a browser)`);
    }
  };
  visit("verifier/index.ts");
  return bad;
}

test("src/verifier/ stands alone: its own files and noble only, node:fs/process/http/https in its shells, nothing of it in the server", async () => {
  const files = await sources();
  expect(files.has("verifier/index.ts")).toBe(true);
  expect(verifierViolations(files)).toEqual([]);
  expect(importsOf(new Map([["verifier/human-time.ts", files.get("verifier/human-time.ts")!]]))).toEqual([]);
  // The checker itself.
  const sample = new Map([
    ["verifier/verify.ts", 'import { x } from "../crypto/index.ts";\nimport { y } from "./mirror.ts";\nimport { readFileSync } from "node:fs";\nimport { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";'],
    ["verifier/index.ts", 'export { verifyReceipt } from "./verify.ts";\nexport { run } from "./cli.ts";'],
    ["verifier/cli.ts", 'import { createReadStream } from "node:fs";\nimport { sha3_256 } from "@noble/hashes/sha3.js";'],
    ["verifier/mirror.ts", ""],
    ["http/pages/x.ts", 'import { parseReceipt } from "../../verifier/index.ts";'],
    ["main.ts", 'const v = await import("./verifier/cli.ts");\nimport { renderReport } from "./verifier/render.ts";'],
  ]);
  expect(verifierViolations(sample)).toEqual([
    "verifier/verify.ts → ../crypto/index.ts (the verifier imports only its own files)",
    "verifier/verify.ts → node:fs (the verifier imports only @noble/post-quantum/ml-dsa.js, @noble/hashes/sha2.js; node:fs, node:http, node:https, node:dns, node:net in verifier/cli.ts, verifier/standalone.ts, verifier/http-get.ts)",
    "verifier/cli.ts → @noble/hashes/sha3.js (the verifier imports only @noble/post-quantum/ml-dsa.js, @noble/hashes/sha2.js; node:fs, node:http, node:https, node:dns, node:net in verifier/cli.ts, verifier/standalone.ts, verifier/http-get.ts)",
    "http/pages/x.ts → ../../verifier/index.ts (only main.ts's dispatch imports the verifier: verifier/cli.ts; and usage.ts its usage: verifier/usage.ts)",
    "main.ts → ./verifier/render.ts (only main.ts's dispatch imports the verifier: verifier/cli.ts; and usage.ts its usage: verifier/usage.ts)",
    "verifier/verify.ts → node:fs (reached from verifier/index.ts, which must bundle for a browser)",
    "verifier/cli.ts → node:fs (reached from verifier/index.ts, which must bundle for a browser)",
  ]);
});

/**
 * A runtime import cycle among src/ files: one module evaluated while another of the circle is
 * half done (its bindings still in their temporal dead zone), and the order depending on which
 * is imported first. Runtime imports are what Bun's transpiler keeps: static and dynamic imports
 * and re-exports, without `import type`, `export type`, imports whose names are all types, and
 * `typeof import(…)` (types only). Each circle is listed once, as a path back to its start.
 */
export function importCycles(files: Map<string, string>): string[] {
  const transpiler = new Bun.Transpiler({ loader: "ts" });
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const targets = transpiler
      .scanImports(text)
      .filter((i) => i.path.startsWith("."))
      .map((i) => relative(SRC, resolve(dirname(join(SRC, file)), i.path)))
      .filter((t) => files.has(t));
    graph.set(file, [...new Set(targets)].sort());
  }
  // Tarjan's strongly connected components: each component of more than one file (or a file
  // importing itself) holds a cycle; the shortest one through its first file is listed.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!order.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)!.includes(v)) components.push(component.sort());
    }
  };
  for (const file of [...graph.keys()].sort()) if (!order.has(file)) connect(file);
  return components
    .map((component) => {
      const start = component[0]!;
      const inside = new Set(component);
      // Breadth first from start's imports back to start, within the component.
      const from = new Map<string, string>();
      const queue = [start];
      while (queue.length > 0) {
        const v = queue.shift()!;
        for (const w of graph.get(v)!) {
          if (!inside.has(w)) continue;
          if (w === start) {
            const path = [start];
            for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
            return [...path, start].join(" → ");
          }
          if (!from.has(w)) {
            from.set(w, v);
            queue.push(w);
          }
        }
      }
      return component.join(" → ");
    })
    .sort();
}

test("no runtime import cycle among src/ files (type-only imports aside)", async () => {
  expect(importCycles(await sources())).toEqual([]);
  // The checker itself: a circle through a dynamic import, one through a re-export, and type-only
  // imports (all three spellings) and `typeof import()` that make none.
  const sample = new Map([
    ["a/index.ts", 'import { setup } from "./setup.ts";'],
    ["a/setup.ts", 'import { load } from "./load.ts";'],
    ["a/load.ts", 'export async function l(): Promise<typeof import("../b/x.ts")> { return await import("./index.ts"); }'],
    ["b/x.ts", 'export { y } from "./y.ts";\nimport type { Z } from "./z.ts";'],
    ["b/y.ts", 'import { x } from "./x.ts";\nimport { type Z } from "./z.ts";'],
    ["b/z.ts", 'import type { X } from "./x.ts";\nexport type { Y } from "./y.ts";\nimport { type X2 } from "./x.ts";'],
    ["c/self.ts", 'import { me } from "./self.ts";'],
  ]);
  expect(importCycles(sample)).toEqual(["a/index.ts → a/setup.ts → a/load.ts → a/index.ts", "b/x.ts → b/y.ts → b/x.ts", "c/self.ts → c/self.ts"]);
});

test("the checker catches each kind of forbidden edge", () => {
  const files = new Map([
    ["records/service.ts", 'import { Elysia } from "elysia";\nimport { x } from "../http/server.ts";\nimport { loop } from "../anchoring/anchorer.ts";'],
    ["keys/keys.ts", 'export { y } from "../admin/cli.ts";\nimport { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";'],
    ["lib/util.ts", 'import type { Db } from "../storage/db.ts";'],
    ["anchoring/anchorer.ts", 'const sdk = await import("@hashgraph/sdk");'],
    ["local-ledger/node.ts", 'import { x } from "../storage/db.ts";\nimport left from "left-pad";'],
  ]);
  expect(forbiddenEdges(files)).toEqual([
    "records/service.ts → elysia (only http/ may import it)",
    "records/service.ts → ../http/server.ts (records may import lib, crypto, storage, anchoring/queue.ts, anchoring/types.ts, verification/revocation.ts)",
    "records/service.ts → ../anchoring/anchorer.ts (records may import lib, crypto, storage, anchoring/queue.ts, anchoring/types.ts, verification/revocation.ts)",
    "keys/keys.ts → ../admin/cli.ts (keys may import lib, crypto, storage)",
    "keys/keys.ts → @noble/post-quantum/ml-dsa.js (only crypto/, verifier/ may import it)",
    "lib/util.ts → ../storage/db.ts (lib may import nothing outside itself)",
    "anchoring/anchorer.ts → @hashgraph/sdk (only anchoring/hedera-ledger.ts may import it)",
    "local-ledger/node.ts → ../storage/db.ts (local-ledger may import lib, crypto)",
    "local-ledger/node.ts → left-pad (not in the allowlist: add it to BARE with where and why)",
  ]);
});

/**
 * `expect(promise).rejects…` / `.resolves…` asserts nothing unless awaited (or returned): the
 * test finishes first and a failure lands nowhere. Statements that start with `expect(` and
 * reach `.rejects`/`.resolves` are the unawaited ones.
 */
export function unawaitedPromiseExpectations(text: string): number[] {
  const lines = text.split("\n");
  const found: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trimStart().startsWith("expect(")) continue;
    let statement = "";
    for (let j = i; j < Math.min(lines.length, i + 12); j++) {
      statement += lines[j] + "\n";
      if (lines[j]!.trimEnd().endsWith(";")) break;
    }
    if (/\)\s*\.\s*(?:rejects|resolves)\b/.test(statement)) found.push(i + 1);
  }
  return found;
}

test("every promise expectation in test/ is awaited", async () => {
  const offenders: string[] = [];
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: join(ROOT, "test") })) {
    for (const line of unawaitedPromiseExpectations(await Bun.file(join(ROOT, "test", file)).text())) offenders.push(`test/${file}:${line}`);
  }
  expect(offenders).toEqual([]);
  // The checker itself: one bad statement of each shape, and the awaited forms pass.
  const sample = ["  E(p).rejects.toThrow();", "  await E(p).rejects.toThrow();", "  return E(p).resolves.toBe(1);", "  E(", "    f(),", "  ).resolves.toBe(2);"].join("\n");
  expect(unawaitedPromiseExpectations(sample.replaceAll("E(", "expect("))).toEqual([1, 4]);
});
