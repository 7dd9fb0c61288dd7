/**
 * Real PDFs for tests, written byte by byte here so that they do not come from the PDF library
 * under test. Two shapes, as found in the wild:
 * - classic: a cross-reference table and a trailer dictionary (PDF 1.4 writers, most scanners);
 * - xrefStream: PDF 1.5's cross-reference stream, with the dictionaries packed into a compressed
 *   object stream (what Word, LibreOffice and browsers' "Save as PDF" write today).
 * `updated` appends one incremental update of the same shape (a new Info dictionary), as an
 * editor that saves incrementally does. Every page shows "Page i of n: TITLE" in Helvetica, so
 * `pdftotext` has something to find. Callers may assume the bytes are deterministic for the same
 * options, that `qpdf --check` passes on them, and that they are not docverify-signed.
 */
import { deflateSync } from "node:zlib";

export interface TestPdfOptions {
  /** Number of pages, 1 by default. */
  pages?: number;
  /** The Info dictionary's /Title and the text on each page; printable ASCII. */
  title?: string;
  /** A cross-reference stream and an object stream instead of a classic xref table. */
  xrefStream?: boolean;
  /** Append one incremental update (a new Info dictionary with " (edited)" after the title). */
  updated?: boolean;
  /** Every page's /Rotate (0, 90, 180 or 270): a viewer turns the page clockwise by it. */
  rotate?: number;
}

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
/** A PDF literal string for printable ASCII. */
const literal = (s: string) => `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
const ID = "<00112233445566778899aabbccddeeff>";

class Writer {
  private readonly parts: Uint8Array[] = [];
  length = 0;
  constructor(start: Uint8Array = new Uint8Array()) {
    this.push(start);
  }
  push(bytes: Uint8Array | string): number {
    const b = typeof bytes === "string" ? latin1(bytes) : bytes;
    const at = this.length;
    this.parts.push(b);
    this.length += b.length;
    return at;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

function stream(num: number, dict: string, data: Uint8Array): [string, Uint8Array, string] {
  return [`${num} 0 obj\n<<${dict}/Length ${data.length}>>\nstream\n`, data, "\nendstream\nendobj\n"];
}

/** A classic xref table for the given object offsets (sorted by number), then trailer and startxref. */
function classicTail(w: Writer, offsets: Map<number, number>, trailer: string, full: boolean): void {
  const at = w.push("xref\n");
  const nums = [...offsets.keys()].sort((a, b) => a - b);
  const entry = (n: number) => `${String(n).padStart(10, "0")} 00000 n \n`;
  if (full) {
    w.push(`0 ${nums.length + 1}\n0000000000 65535 f \n`);
    for (const n of nums) w.push(entry(offsets.get(n)!));
  } else {
    for (const n of nums) w.push(`${n} 1\n${entry(offsets.get(n)!)}`);
  }
  w.push(`trailer\n<<${trailer}>>\nstartxref\n${at}\n%%EOF\n`);
}

/** An xref stream (object `num`) with /W [1 4 2]: rows are [type, field2, field3] for objects 0..size-1 or `index` ranges. */
function xrefStreamTail(w: Writer, num: number, rows: Map<number, [number, number, number]>, trailer: string, full: boolean): void {
  const at = w.length;
  rows.set(num, [1, at, 0]);
  const nums = [...rows.keys()].sort((a, b) => a - b);
  if (full) rows.set(0, [0, 0, 65535]);
  const order = full ? [0, ...nums] : nums;
  const data = new Uint8Array(order.length * 7);
  order.forEach((n, i) => {
    const [t, f2, f3] = rows.get(n)!;
    const v = new DataView(data.buffer, i * 7, 7);
    v.setUint8(0, t);
    v.setUint32(1, f2);
    v.setUint16(5, f3);
  });
  const index = full ? "" : `/Index[${nums.map((n) => `${n} 1`).join(" ")}]`;
  const z = deflateSync(data);
  for (const p of stream(num, `/Type/XRef/W[1 4 2]${index}/Filter/FlateDecode${trailer}`, z)) w.push(p);
  w.push(`startxref\n${at}\n%%EOF\n`);
}

export function makeTestPdf(opts: TestPdfOptions = {}): Uint8Array {
  const pages = opts.pages ?? 1;
  const title = opts.title ?? "docverify test document";
  if (!/^[\x20-\x7e]*$/.test(title)) throw new Error("makeTestPdf: the title must be printable ASCII");
  // Objects: 1 catalog, 2 page tree, 3 font, 4 info, pages 5…, their contents after them.
  const pageNum = (i: number) => 5 + i;
  const contentNum = (i: number) => 5 + pages + i;
  const dicts = new Map<number, string>([
    [1, "<</Type/Catalog/Pages 2 0 R>>"],
    [2, `<</Type/Pages/Kids[${Array.from({ length: pages }, (_, i) => `${pageNum(i)} 0 R`).join(" ")}]/Count ${pages}>>`],
    [3, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>"],
    [4, `<</Title${literal(title)}/Producer(docverify tests)>>`],
  ]);
  for (let i = 0; i < pages; i++) {
    dicts.set(pageNum(i), `<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]${opts.rotate ? `/Rotate ${opts.rotate}` : ""}/Resources<</Font<</F1 3 0 R>>>>/Contents ${contentNum(i)} 0 R>>`);
  }
  const contents = Array.from({ length: pages }, (_, i) => latin1(`BT /F1 18 Tf 72 760 Td ${literal(`Page ${i + 1} of ${pages}: ${title}`)} Tj ET`));
  const size = 5 + 2 * pages;

  if (!opts.xrefStream) {
    const w = new Writer();
    w.push("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
    const offsets = new Map<number, number>();
    for (const [n, d] of dicts) offsets.set(n, w.push(`${n} 0 obj\n${d}\nendobj\n`));
    contents.forEach((c, i) => {
      const [head, data, tail] = stream(contentNum(i), "", c);
      offsets.set(contentNum(i), w.push(head));
      w.push(data);
      w.push(tail);
    });
    classicTail(w, offsets, `/Size ${size}/Root 1 0 R/Info 4 0 R/ID[${ID}${ID}]`, true);
    if (!opts.updated) return w.bytes();
    const prev = startxrefOf(w.bytes());
    const at = w.push(`4 0 obj\n<</Title${literal(`${title} (edited)`)}/Producer(docverify tests)>>\nendobj\n`);
    classicTail(w, new Map([[4, at]]), `/Size ${size}/Root 1 0 R/Info 4 0 R/ID[${ID}${ID}]/Prev ${prev}`, false);
    return w.bytes();
  }

  // Dictionaries go into one object stream; streams cannot, so the contents stay outside.
  const objstm = size;
  const xref = size + 1;
  const w = new Writer();
  w.push("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n");
  const rows = new Map<number, [number, number, number]>();
  contents.forEach((c, i) => {
    const [head, data, tail] = stream(contentNum(i), "", c);
    rows.set(contentNum(i), [1, w.push(head), 0]);
    w.push(data);
    w.push(tail);
  });
  const members = [...dicts.keys()];
  let header = "";
  let body = "";
  members.forEach((n, i) => {
    header += `${n} ${body.length} `;
    body += `${dicts.get(n)!}\n`;
    rows.set(n, [2, objstm, i]);
  });
  const z = deflateSync(latin1(header + body));
  const [head, data, tail] = stream(objstm, `/Type/ObjStm/N ${members.length}/First ${header.length}/Filter/FlateDecode`, z);
  rows.set(objstm, [1, w.push(head), 0]);
  w.push(data);
  w.push(tail);
  xrefStreamTail(w, xref, rows, `/Size ${xref + 1}/Root 1 0 R/Info 4 0 R/ID[${ID}${ID}]`, true);
  if (!opts.updated) return w.bytes();
  const prev = startxrefOf(w.bytes());
  const info = xref + 1;
  const at = w.push(`${info} 0 obj\n<</Title${literal(`${title} (edited)`)}/Producer(docverify tests)>>\nendobj\n`);
  xrefStreamTail(w, info + 1, new Map([[info, [1, at, 0]]]), `/Size ${info + 2}/Root 1 0 R/Info ${info} 0 R/ID[${ID}${ID}]/Prev ${prev}`, false);
  return w.bytes();
}

/** The offset after the last `startxref`. */
function startxrefOf(bytes: Uint8Array): number {
  const text = new TextDecoder("latin1").decode(bytes.subarray(Math.max(0, bytes.length - 64)));
  const m = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(text);
  if (m === null) throw new Error("makeTestPdf: no startxref");
  return Number(m[1]);
}
