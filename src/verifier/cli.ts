/**
 * `verify-receipt`'s command line, shared by `docverify verify-receipt` and the standalone
 * `node docverify-verify.mjs`: the arguments of docs/receipts.md §4, the report on stdout, exit
 * codes 0 (verified, verified_org), 1 (any other verdict) and 2 (usage). A usage error is one line
 * on stderr starting `docverify verify-receipt:`, never a stack trace, whatever the receipt holds.
 *
 * Everything outside the process (files, stdin, the network) comes through `io`, so tests drive it
 * in-process; `nodeIo()` is the real one.
 *
 * `--file` of a docverify-signed PDF is checked by the original inside it (signed-pdf.ts): the
 * file's last 64 KiB are read first, then only its first N bytes are hashed, and one line on
 * stderr says so; a signed PDF changed after signing is hashed whole (so it does not match) with a
 * line saying why.
 */
import { promises as dnsp } from "node:dns";
import { createReadStream, promises as fsp } from "node:fs";
import { isIP } from "node:net";
import type { FetchFn } from "./mirror.ts";
import { sha256OfBytes, sha256OfStream } from "./hash.ts";
import { originalOfSignedPdf, originalOfSignedPdfTail, SIGNED_PDF_TAIL_BYTES, type SignedPdf } from "./signed-pdf.ts";
import { normaliseMirrorUrl, parseReceipt, ReceiptFormatError } from "./receipt.ts";
import { renderReport } from "./render.ts";
import { createHttpGet, httpGet, type ConnectTo } from "./http-get.ts";
import { parseTrustFile, TrustFileError, type TrustFile } from "./trust.ts";
import { nameResolver, type HostResolver } from "./witnesses.ts";
import { VERIFY_RECEIPT_USAGE } from "./usage.ts";
import { verifyReceipt } from "./verify.ts";

export interface VerifierIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): Promise<Uint8Array>;
  /** The file as a stream of chunks, so a large document is hashed without being read whole; `end`: only its first `end` bytes. */
  openFile?(path: string, end?: number): AsyncIterable<Uint8Array>;
  /** The file's last `bytes` bytes (all of it if shorter) and its size. With openFile, a document is never read whole; without both, readFile reads it. */
  readTail?(path: string, bytes: number): Promise<{ tail: Uint8Array; size: number }>;
  readStdin(): Promise<Uint8Array>;
  fetch: FetchFn;
  /** The same GET with `--connect-to` applied (nodeIo: createHttpGet); required when it is given. */
  fetchVia?(connectTo: ConnectTo): FetchFn;
  /** A host name's addresses (nodeIo: the system resolver); absent: host names are compared as written. */
  lookup?(hostname: string): Promise<string[]>;
  /** TXT records of a name, from `servers` (`--dns-server`) or the system's; absent: DNS is not consulted. */
  resolveTxt?(name: string, servers: readonly string[]): Promise<string[][]>;
}

/** A receipt is some 15 KB; anything much larger is not one. */
const MAX_RECEIPT_BYTES = 1024 * 1024;
const PREFIX = "docverify verify-receipt:";

class Usage extends Error {}

interface Arguments {
  readonly receipt: string;
  readonly file: string | null;
  readonly hash: string | null;
  readonly mirrors: string[];
  readonly builtinMirrors: boolean;
  readonly trust: string | null;
  readonly requireIdentity: boolean;
  readonly connectTo: ConnectTo;
  readonly dnsServers: string[];
  readonly minMirrors: number | undefined;
  readonly maxScanPages: number | undefined;
  readonly offline: boolean;
  readonly json: boolean;
}

const VALUED = new Set(["--file", "--hash", "--mirror", "--min-mirrors", "--max-scan-pages", "--trust", "--connect-to", "--dns-server"]);
const FLAGS = new Set(["--offline", "--json", "--no-builtin-mirrors", "--require-identity"]);

const HOST_PART = String.raw`(\[[0-9A-Fa-f:.]+\]|[^:\[\]\s]+)`;
const CONNECT_TO_RE = new RegExp(`^${HOST_PART}:(\\d{1,5}):${HOST_PART}:(\\d{1,5})$`);
const unbracket = (h: string) => h.replace(/^\[|\]$/g, "");

/** `HOST:PORT:ADDRESS:PORT2` → the map entry; throws Usage. ADDRESS must be an IP address. */
function parseConnectTo(value: string, into: Map<string, { address: string; port: number }>): void {
  const m = CONNECT_TO_RE.exec(value);
  const port = (p: string) => Number(p) >= 1 && Number(p) <= 65535;
  if (m === null || !port(m[2]!) || !port(m[4]!) || isIP(unbracket(m[3]!)) === 0) throw new Usage(`--connect-to ${JSON.stringify(value)} must be HOST:PORT:ADDRESS:PORT with ADDRESS an IP address (IPv6 in brackets)`);
  into.set(`${unbracket(m[1]!).toLowerCase()}:${Number(m[2])}`, { address: unbracket(m[3]!), port: Number(m[4]) });
}

/** `ADDRESS` or `ADDRESS:PORT` (IPv6 in brackets when a port follows), as the resolver's setServers takes it. */
function checkDnsServer(value: string): string {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)|([0-9A-Fa-f:]+))(?::(\d{1,5}))?$/.exec(value);
  const address = m === null ? "" : (m[1] ?? m[2] ?? m[3] ?? "");
  const portOk = m?.[4] === undefined || (Number(m[4]) >= 1 && Number(m[4]) <= 65535);
  if (m === null || isIP(address) === 0 || !portOk || (m[3] !== undefined && m[4] !== undefined)) throw new Usage(`--dns-server ${JSON.stringify(value)} must be an IP address, with :PORT if not 53 (IPv6 in brackets then)`);
  return value;
}

function parseArguments(argv: readonly string[]): Arguments {
  const positional: string[] = [];
  const single = new Map<string, string>();
  const mirrors: string[] = [];
  const connectTo = new Map<string, { address: string; port: number }>();
  const dnsServers: string[] = [];
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (token === "-" || !token.startsWith("-")) {
      positional.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = eq === -1 ? token : token.slice(0, eq);
    if (FLAGS.has(name)) {
      if (eq !== -1) throw new Usage(`${name} takes no value`);
      flags.add(name);
      continue;
    }
    if (!VALUED.has(name)) throw new Usage(`unknown option ${JSON.stringify(token.length > 40 ? token.slice(0, 40) + "…" : token)}`);
    let value: string;
    if (eq !== -1) value = token.slice(eq + 1);
    else {
      if (i + 1 >= argv.length) throw new Usage(`${name} needs a value`);
      value = argv[++i]!;
    }
    if (name === "--mirror") mirrors.push(value);
    else if (name === "--connect-to") parseConnectTo(value, connectTo);
    else if (name === "--dns-server") dnsServers.push(checkDnsServer(value));
    else if (single.has(name)) throw new Usage(`${name} given twice`);
    else single.set(name, value);
  }

  if (positional.length === 0) throw new Usage("missing RECEIPT (a file, or - for standard input)");
  if (positional.length > 1) throw new Usage(`one RECEIPT only, got ${positional.length} arguments`);
  const file = single.get("--file") ?? null;
  let hash = single.get("--hash") ?? null;
  if ((file === null) === (hash === null)) throw new Usage("give exactly one of --file DOC and --hash sha256:HEX");
  if (hash !== null) {
    if (!/^sha256:[0-9a-fA-F]{64}$/.test(hash)) throw new Usage("--hash must be sha256: and 64 hex digits");
    hash = hash.toLowerCase();
  }
  for (const m of mirrors) if (normaliseMirrorUrl(m) === null) throw new Usage(`--mirror ${JSON.stringify(m)} is not an http(s) URL without query or fragment`);
  let minMirrors: number | undefined;
  const min = single.get("--min-mirrors");
  if (min !== undefined) {
    if (!/^[1-9]\d{0,5}$/.test(min)) throw new Usage("--min-mirrors must be an integer ≥ 1");
    minMirrors = Number(min);
  }
  let maxScanPages: number | undefined;
  const pages = single.get("--max-scan-pages");
  if (pages !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(pages)) throw new Usage("--max-scan-pages must be an integer from 1 to 999999999");
    maxScanPages = Number(pages);
  }
  return {
    receipt: positional[0]!,
    file,
    hash,
    mirrors,
    builtinMirrors: !flags.has("--no-builtin-mirrors"),
    trust: single.get("--trust") ?? null,
    requireIdentity: flags.has("--require-identity"),
    connectTo,
    dnsServers,
    minMirrors,
    maxScanPages,
    offline: flags.has("--offline"),
    json: flags.has("--json"),
  };
}

/** An operating-system error as a short phrase, never its stack. */
function reason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a folder";
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0]!.slice(0, 200);
}

async function readTrustFile(path: string, io: VerifierIo): Promise<TrustFile> {
  let bytes: Uint8Array;
  try {
    bytes = await io.readFile(path);
  } catch (e) {
    throw new Usage(`cannot read the trust file ${JSON.stringify(path)}: ${reason(e)}`);
  }
  if (bytes.length > MAX_RECEIPT_BYTES) throw new Usage("the trust file is larger than 1 MiB");
  try {
    return parseTrustFile(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    if (e instanceof TrustFileError) throw new Usage(`not a valid trust file: ${e.message}`);
    if (e instanceof TypeError) throw new Usage("the trust file is not UTF-8 text");
    throw e;
  }
}

/**
 * The command-line shells' resolver: `--connect-to` first, an IP address as itself, else the
 * system's resolver (without one, the host name as written). `--connect-to` counts by the address
 * it connects to even where there is no resolver, as it is where the request goes.
 */
function hostResolver(args: Arguments, io: VerifierIo): HostResolver | undefined {
  const lookup = io.lookup;
  if (lookup === undefined && args.connectTo.size === 0) return undefined;
  return async (hostname, port) => {
    const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const mapped = args.connectTo.get(`${host}:${port}`);
    if (mapped !== undefined) return { addresses: [mapped.address] };
    if (lookup === undefined) return nameResolver(hostname, port);
    if (isIP(host) !== 0) return { addresses: [host] };
    try {
      return { addresses: await lookup(host) };
    } catch (e) {
      return { failed: reason(e) };
    }
  };
}

async function readReceipt(args: Arguments, io: VerifierIo) {
  let bytes: Uint8Array;
  try {
    bytes = args.receipt === "-" ? await io.readStdin() : await io.readFile(args.receipt);
  } catch (e) {
    throw new Usage(`cannot read the receipt ${args.receipt === "-" ? "from standard input" : JSON.stringify(args.receipt)}: ${reason(e)}`);
  }
  if (bytes.length > MAX_RECEIPT_BYTES) throw new Usage("the receipt is larger than 1 MiB: not a docverify receipt");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Usage("the receipt is not UTF-8 text");
  }
  try {
    return parseReceipt(text);
  } catch (e) {
    if (e instanceof ReceiptFormatError) throw new Usage(`not a valid receipt: ${e.message}`);
    throw e;
  }
}

/** The line on stderr about a signed PDF, or nothing for any other file. */
function signedPdfNote(pdf: SignedPdf): string {
  if (pdf.kind === "signed") return `--file is a PDF signed with docverify (record ${pdf.recordId}): checking the original document inside it, its first ${pdf.originalLength} bytes\n`;
  if (pdf.kind === "changed-after-signing") return `--file is a PDF signed with docverify (record ${pdf.recordId}) but changed after signing (bytes were added after docverify's update): it is no longer the signed document, so it is checked whole and cannot match\n`;
  return "";
}

async function documentHash(args: Arguments, io: VerifierIo): Promise<string> {
  if (args.hash !== null) return args.hash;
  const path = args.file!;
  try {
    if (io.openFile !== undefined && io.readTail !== undefined) {
      const { tail, size } = await io.readTail(path, SIGNED_PDF_TAIL_BYTES);
      const pdf = originalOfSignedPdfTail(tail, size);
      io.stderr(signedPdfNote(pdf));
      return await sha256OfStream(io.openFile(path, pdf.kind === "signed" ? pdf.originalLength : undefined));
    }
    // Without both, the file is read whole: recognising a signed PDF matters more than memory.
    const bytes = await io.readFile(path);
    const pdf = originalOfSignedPdf(bytes);
    io.stderr(signedPdfNote(pdf));
    return sha256OfBytes(pdf.kind === "signed" ? bytes.subarray(0, pdf.originalLength) : bytes);
  } catch (e) {
    throw new Usage(`cannot read --file ${JSON.stringify(path)}: ${reason(e)}`);
  }
}

/** Runs `verify-receipt` with `argv` (the arguments after the command). Returns the exit code. */
export async function runVerifyReceipt(argv: readonly string[], io: VerifierIo): Promise<number> {
  const end = argv.indexOf("--");
  if ((end === -1 ? argv : argv.slice(0, end)).some((t) => t === "--help" || t === "-h")) {
    io.stdout(VERIFY_RECEIPT_USAGE);
    return 0;
  }
  try {
    const args = parseArguments(argv);
    const receipt = await readReceipt(args, io);
    const trust = args.trust === null ? null : await readTrustFile(args.trust, io);
    const docHash = await documentHash(args, io);
    let fetchFn = io.fetch;
    if (args.connectTo.size > 0) {
      if (io.fetchVia === undefined) throw new Usage("--connect-to is not available here");
      fetchFn = io.fetchVia(args.connectTo);
    }
    const resolveTxt = io.resolveTxt;
    const report = await verifyReceipt(receipt, {
      docHash,
      mirrors: args.mirrors,
      builtinMirrors: args.builtinMirrors,
      trust,
      minMirrors: args.minMirrors,
      ...(args.maxScanPages === undefined ? {} : { maxScanPages: args.maxScanPages }),
      offline: args.offline,
      fetch: fetchFn,
      resolveHost: hostResolver(args, io),
      ...(resolveTxt === undefined ? {} : { resolveTxt: (name: string) => resolveTxt(name, args.dnsServers) }),
      onProgress: (text) => io.stderr(`${text}\n`),
    });
    io.stdout(args.json ? JSON.stringify(report) + "\n" : renderReport(report));
    const proven = report.verdict === "verified" || report.verdict === "verified_org";
    return proven && (!args.requireIdentity || report.identity?.status === "confirmed") ? 0 : 1;
  } catch (e) {
    if (e instanceof Usage) {
      io.stderr(`${PREFIX} ${e.message} (see --help)\n`);
      return 2;
    }
    // A fault of the verifier itself: still one line, and not a verdict anyone could take for a pass.
    io.stderr(`${PREFIX} internal error: ${reason(e)}\n`);
    return 1;
  }
}

/** The real files, standard streams and network, for Node.js and Bun. */
export function nodeIo(): VerifierIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    readFile: async (path) => new Uint8Array(await fsp.readFile(path)),
    openFile: (path, end) => createReadStream(path, { highWaterMark: 1024 * 1024, ...(end === undefined ? {} : { end: end - 1 }) }),
    readTail: async (path, bytes) => {
      const handle = await fsp.open(path, "r");
      try {
        const size = (await handle.stat()).size;
        const tail = new Uint8Array(Math.min(bytes, size));
        let at = 0;
        while (at < tail.length) {
          const { bytesRead } = await handle.read(tail, at, tail.length - at, size - tail.length + at);
          if (bytesRead === 0) throw new Error("the file became shorter while it was read");
          at += bytesRead;
        }
        return { tail, size };
      } finally {
        await handle.close();
      }
    },
    readStdin: async () => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        out.set(c, at);
        at += c.length;
      }
      return out;
    },
    // Not the global fetch: loading undici costs Node.js 20 some 60 ms (http-get.ts).
    fetch: httpGet,
    fetchVia: (connectTo) => createHttpGet(connectTo),
    lookup: async (hostname) => (await dnsp.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address),
    resolveTxt: (name, servers) => {
      const resolver = new dnsp.Resolver({ timeout: 3_000, tries: 2 });
      if (servers.length > 0) resolver.setServers([...servers]);
      return resolver.resolveTxt(name);
    },
  };
}
