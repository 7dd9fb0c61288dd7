/**
 * A DNS server on loopback for tests: answers TXT questions from a table over UDP (RFC 1035
 * wire format), NXDOMAIN for names it does not know, and nothing else. Enough for a resolver
 * pointed at it (`--dns-server 127.0.0.1:PORT`) to read `_docverify.DOMAIN` as it would from the
 * real DNS.
 */
import { createSocket } from "node:dgram";
import { onCleanup } from "./env.ts";

export interface DnsServer {
  /** `127.0.0.1:PORT` */
  readonly address: string;
  /** Name (lowercase, no trailing dot) → its TXT records, each a list of strings. */
  readonly txt: Map<string, string[][]>;
  /** Names asked, in order. */
  readonly asked: string[];
  stop(): Promise<void>;
}

function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = at;
  for (;;) {
    const len = msg[i]!;
    if (len === 0) return { name: labels.join(".").toLowerCase(), end: i + 1 };
    if ((len & 0xc0) !== 0) throw new Error("compressed names in a question are not expected");
    labels.push(msg.subarray(i + 1, i + 1 + len).toString("latin1"));
    i += 1 + len;
  }
}

function answer(query: Buffer, txt: Map<string, string[][]>, asked: string[]): Buffer {
  const id = query.readUInt16BE(0);
  const { name, end } = readName(query, 12);
  const qtype = query.readUInt16BE(end);
  asked.push(name);
  const question = query.subarray(12, end + 4);
  const records = qtype === 16 ? (txt.get(name) ?? null) : null;
  const known = txt.has(name);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR, opcode 0, AA, RD copied, RA; RCODE 3 (NXDOMAIN) for an unknown name.
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | (known ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records?.length ?? 0, 6);
  const parts: Buffer[] = [header, question];
  for (const strings of records ?? []) {
    const rdata = Buffer.concat(
      strings.map((s) => {
        const b = Buffer.from(s, "utf8");
        return Buffer.concat([Buffer.from([b.length]), b]);
      }),
    );
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
    rr.writeUInt16BE(16, 2); // TXT
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    parts.push(rr, rdata);
  }
  return Buffer.concat(parts);
}

export async function startDnsServer(txt: Record<string, string[][]> = {}): Promise<DnsServer> {
  const table = new Map(Object.entries(txt));
  const asked: string[] = [];
  const socket = createSocket("udp4");
  socket.on("message", (msg, peer) => {
    try {
      socket.send(answer(msg, table, asked), peer.port, peer.address);
    } catch {
      // A question this server cannot read goes unanswered, as a broken server's would.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  let stopped = false;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      stopped = true;
      socket.close(() => resolve());
    });
  onCleanup(stop);
  return { address: `127.0.0.1:${port}`, txt: table, asked, stop };
}
