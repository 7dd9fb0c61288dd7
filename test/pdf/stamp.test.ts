/**
 * The signed PDF (docs/signing.md §7): signPdf keeps the original
 * bytes, appends one update that PDF tools read (qpdf, poppler), shows the stamp on page 1 and the
 * metadata in the Info dictionary; originalOfSignedPdf finds the original again, notices anything
 * appended afterwards, and takes nothing else for a signed PDF.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SIGNED_PDF_TAIL_BYTES as STAMP_TAIL, SignPdfError, signPdf, stampText, type Stamp } from "../../src/pdf/stamp.ts";
import { originalOfSignedPdf, originalOfSignedPdfTail, SIGNED_PDF_TAIL_BYTES, type SignedPdf } from "../../src/verifier/signed-pdf.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";

afterAll(cleanup);

const RECORD = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
const STAMP: Stamp = {
  recordId: RECORD,
  verifyUrl: `https://docverify.example.org/verify/${RECORD}`,
  signerName: "Ada Lovelace",
  organisation: "Analytical Engines Ltd",
  signedAt: "2026-01-15T09:30:00.123Z",
};

let qpdf = "";
let pdfinfo = "";
let pdftotext = "";
let dir = "";
beforeAll(() => {
  qpdf = requireProgram("qpdf");
  pdfinfo = requireProgram("pdfinfo");
  pdftotext = requireProgram("pdftotext");
  dir = tempDir();
});

let n = 0;
function file(bytes: Uint8Array): string {
  const path = join(dir, `doc-${++n}.pdf`);
  writeFileSync(path, bytes);
  return path;
}
function run(argv: string[]): { code: number; out: string; err: string } {
  const p = Bun.spawnSync(argv);
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const ascii = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((k, p) => k + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** What an editor that saves incrementally appends: a new Info object copying docverify's keys, an xref section, a trailer. */
function editorUpdate(signed: Uint8Array): Uint8Array {
  const text = new TextDecoder("latin1").decode(signed);
  const prev = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)![1]);
  const size = Number([...text.matchAll(/\/Size (\d+)/g)].at(-1)![1]);
  const root = [...text.matchAll(/\/Root (\d+ \d+ R)/g)].at(-1)![1];
  const info = /\/DocverifyOriginalLength[^]*?\/DocverifyRecordId \([^)]*\)/.exec(text)![0];
  const obj = `${size} 0 obj\n<</Title (edited after signing)\n${info}>>\nendobj\n`;
  const xrefAt = signed.length + obj.length;
  return ascii(`${obj}xref\n${size} 1\n${String(signed.length).padStart(10, "0")} 00000 n \ntrailer\n<</Size ${size + 1}/Root ${root}/Info ${size} 0 R/Prev ${prev}>>\nstartxref\n${xrefAt}\n%%EOF\n`);
}

const KINDS = {
  "a classic xref table": () => makeTestPdf(),
  "an xref stream and object streams": () => makeTestPdf({ xrefStream: true, pages: 2 }),
  "a classic PDF that already has an incremental update": () => makeTestPdf({ updated: true }),
  "an xref-stream PDF that already has an incremental update": () => makeTestPdf({ xrefStream: true, updated: true }),
  "a PDF whose last line has no line feed": () => makeTestPdf().subarray(0, makeTestPdf().length - 1),
};

describe("signPdf", () => {
  for (const [kind, make] of Object.entries(KINDS)) {
    test(`${kind}: original bytes kept, one update that qpdf and poppler read, stamp on page 1, metadata, recovery`, async () => {
      const original = make();
      expect(run([qpdf, "--check", file(original)]).code).toBe(0);
      const signed = await signPdf(original, STAMP);
      expect(signed.length).toBeGreaterThan(original.length);
      expect(sha256(signed.subarray(0, original.length))).toBe(sha256(original));
      const path = file(signed);

      const check = run([qpdf, "--check", path]);
      expect(check.err).toBe("");
      expect(check.code).toBe(0);
      // One more revision than the original: exactly one update was appended.
      const eofs = (b: Uint8Array) => new TextDecoder("latin1").decode(b).split("%%EOF").length - 1;
      expect(eofs(signed)).toBe(eofs(original) + 1);

      const info = run([pdfinfo, "-enc", "UTF-8", "-custom", path]);
      expect(info.code).toBe(0);
      expect(info.out).toContain(`DocverifyRecordId:${RECORD}`);
      expect(info.out).toContain(`DocverifyVerifyUrl:${STAMP.verifyUrl}`);
      expect(info.out).toContain("DocverifySignedBy:Ada Lovelace (Analytical Engines Ltd)");
      expect(info.out).toContain(`DocverifyOriginalLength:${original.length}`);
      expect(info.out).toContain(`DocverifySignedLength:${String(signed.length).padStart(10, "0")}`);
      // The original's own metadata stays.
      expect(info.out).toMatch(/Title:\s+docverify test document/);

      const page1 = run([pdftotext, "-f", "1", "-l", "1", "-layout", path, "-"]).out.replace(/\s+/g, " ");
      expect(page1).toContain("Page 1 of");
      expect(page1).toContain("Signed with docverify by Ada Lovelace (Analytical Engines Ltd) on 2026-01-15 09:30 UTC");
      expect(page1).toContain(`Verify at ${STAMP.verifyUrl}`);

      expect(originalOfSignedPdf(signed)).toEqual({ kind: "signed", originalLength: original.length, recordId: RECORD });
      expect(originalOfSignedPdf(original)).toEqual({ kind: "not-signed" });
    });
  }

  test("PDFs written by other programs: qpdf (object streams; linearized) and Chromium's print to PDF", async () => {
    const plain = file(makeTestPdf({ pages: 2 }));
    const made: Record<string, string> = {};
    for (const [name, args] of Object.entries({ objectStreams: ["--object-streams=generate"], linearized: ["--linearize"], linearizedObjectStreams: ["--linearize", "--object-streams=generate"] })) {
      made[name] = join(dir, `${name}.pdf`);
      expect(run([qpdf, ...args, plain, made[name]!]).code).toBe(0);
    }
    const html = join(dir, "page.html");
    writeFileSync(html, "<!doctype html><title>Printed</title><h1>Printed by Chromium</h1><p>Zoë’s contract, page one.</p>");
    made.chromium = join(dir, "chromium.pdf");
    const print = run([requireProgram("chromium"), ...CHROMIUM_ARGS, "--no-pdf-header-footer", `--print-to-pdf=${made.chromium}`, `file://${html}`]);
    expect(print.code).toBe(0);
    for (const [name, path] of Object.entries(made)) {
      const original = new Uint8Array(readFileSync(path));
      const signed = await signPdf(original, STAMP);
      expect(sha256(signed.subarray(0, original.length))).toBe(sha256(original));
      const out = file(signed);
      expect({ name, check: run([qpdf, "--check", out]).code }).toEqual({ name, check: 0 });
      expect(run([pdftotext, "-f", "1", "-l", "1", out, "-"]).out).toContain("Signed with docverify by Ada Lovelace");
      expect(originalOfSignedPdf(signed)).toEqual({ kind: "signed", originalLength: original.length, recordId: RECORD });
    }
  }, 60_000);

  test("on a turned page (/Rotate) the stamp is at the bottom left of the page as shown, and reads horizontally", async () => {
    for (const rotate of [0, 90, 180, 270]) {
      const path = file(await signPdf(makeTestPdf({ rotate }), STAMP));
      expect(run([qpdf, "--check", path]).code).toBe(0);
      // pdftotext -bbox gives coordinates on the page as shown, from its top left.
      const bbox = run([pdftotext, "-bbox", path, "-"]).out;
      const word = (w: string) => /xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(\w+)</.exec(bbox.split("\n").find((l) => l.endsWith(`>${w}</word>`))!)!.slice(1, 5).map(Number);
      const shownHeight = rotate % 180 === 0 ? 842 : 595;
      const [x1, y1, , yBottom] = word("Verify") as [number, number, number, number];
      const [x0, y0] = word("Signed") as [number, number];
      expect({ rotate, left: x1 < 30, nearBottom: shownHeight - yBottom < 30, signedAbove: y0 < y1, sameColumn: x0 === x1 }).toEqual({ rotate, left: true, nearBottom: true, signedAbove: true, sameColumn: true });
      expect(run([pdftotext, path, "-"]).out).toContain("Signed with docverify by Ada Lovelace (Analytical Engines Ltd)");
    }
  });

  test("the stamp is on the first page only", async () => {
    const path = file(await signPdf(makeTestPdf({ pages: 3 }), STAMP));
    expect(run([pdfinfo, path]).out).toMatch(/Pages:\s+3/);
    expect(run([pdftotext, "-f", "2", "-l", "3", path, "-"]).out).not.toContain("docverify by");
  });

  test("a name outside Latin-1: the metadata keeps the exact text, the stamp shows what the standard font can", async () => {
    const stamp = { ...STAMP, signerName: "Łukasz Żółć 李小龍", organisation: "Ærø Øst ΑΒΓ" };
    const path = file(await signPdf(makeTestPdf(), stamp));
    expect(run([pdfinfo, "-enc", "UTF-8", "-custom", path]).out).toContain("DocverifySignedBy:Łukasz Żółć 李小龍 (Ærø Øst ΑΒΓ)");
    expect(run([pdftotext, "-enc", "UTF-8", path, "-"]).out).toContain("Signed with docverify by Lukasz Zólc ??? (Ærø Øst ???)");
    expect(stampText("Zoë\tO’Brien 😀")).toBe("Zoë O’Brien ?");
  });

  test("a long name or URL on a narrow page is cut to fit, never drawn past the page", async () => {
    const narrow = new TextDecoder("latin1").decode(makeTestPdf()).replace("/MediaBox[0 0 595 842]", "/MediaBox[0 0 200 300]");
    const original = fixXref(narrow);
    const path = file(await signPdf(original, { ...STAMP, signerName: "N".repeat(300) }));
    expect(run([qpdf, "--check", path]).code).toBe(0);
    const text = run([pdftotext, "-enc", "UTF-8", path, "-"]).out;
    expect(text).toContain("Signed with docverify by NNN");
    expect(text).toContain("…");
    const bbox = run([pdftotext, "-bbox", path, "-"]).out;
    for (const m of bbox.matchAll(/xMax="([\d.]+)"/g)) expect(Number(m[1])).toBeLessThanOrEqual(200);
  });

  test("signing a signed PDF: the outer update is the one recovered, and its original is the first signed PDF", async () => {
    const once = await signPdf(makeTestPdf(), STAMP);
    const second = "0190f5a3-7c1e-7d2a-9b4c-000000000002";
    const twice = await signPdf(once, { ...STAMP, recordId: second });
    expect(run([qpdf, "--check", file(twice)]).code).toBe(0);
    expect(originalOfSignedPdf(twice)).toEqual({ kind: "signed", originalLength: once.length, recordId: second });
  });

  test("refuses what it cannot sign, with a reason", async () => {
    const reason = async (bytes: Uint8Array, stamp: Stamp = STAMP) => {
      try {
        await signPdf(bytes, stamp);
      } catch (e) {
        expect(e).toBeInstanceOf(SignPdfError);
        return `${(e as SignPdfError).reason}: ${(e as Error).message}`;
      }
      return "signed";
    };
    expect(await reason(ascii("hello, not a PDF"))).toStartWith("not-pdf: ");
    expect(await reason(new Uint8Array(randomBytes(5000)))).toStartWith("not-pdf: ");
    expect(await reason(new Uint8Array())).toStartWith("not-pdf: ");

    const plain = file(makeTestPdf());
    const encrypted = join(dir, "encrypted.pdf");
    expect(run([qpdf, "--encrypt", "user", "owner", "256", "--", plain, encrypted]).code).toBe(0);
    expect(await reason(new Uint8Array(readFileSync(encrypted)))).toBe("encrypted: this PDF is encrypted (password-protected); save an unprotected copy and sign that");
    // Encrypted with an empty user password: it opens without one, but is still encrypted.
    const openable = join(dir, "openable.pdf");
    expect(run([qpdf, "--encrypt", "", "owner", "256", "--", plain, openable]).code).toBe(0);
    expect(await reason(new Uint8Array(readFileSync(openable)))).toStartWith("encrypted: ");

    expect(await reason(concat(makeTestPdf(), ascii("trailing junk that is not whitespace")))).toStartWith("not-updatable: ");
    expect(await reason(ascii("%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n"))).toStartWith("unreadable: ");

    expect(await reason(makeTestPdf(), { ...STAMP, recordId: RECORD.toUpperCase() })).toStartWith("invalid-stamp: ");
    expect(await reason(makeTestPdf(), { ...STAMP, verifyUrl: "javascript:alert(1)" })).toStartWith("invalid-stamp: ");
    expect(await reason(makeTestPdf(), { ...STAMP, signedAt: "yesterday" })).toStartWith("invalid-stamp: ");
    expect(await reason(makeTestPdf(), { ...STAMP, signerName: " " })).toStartWith("invalid-stamp: ");
  });

  test("bundles for a browser: no node: or bun: module", async () => {
    const out = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/pdf/stamp.ts")], target: "browser" });
    expect(out.success).toBe(true);
    const code = await out.outputs[0]!.text();
    expect(code).not.toMatch(/from\s*["'](node|bun):|require\(["'](node|bun):/);
  });
});

describe("originalOfSignedPdf", () => {
  let original: Uint8Array;
  let signed: Uint8Array;
  beforeAll(async () => {
    original = makeTestPdf({ xrefStream: true });
    signed = await signPdf(original, STAMP);
  });

  test("anything appended after docverify's update: changed after signing, whatever it is", async () => {
    const edited = concat(signed, editorUpdate(signed));
    // A real update, which PDF tools apply: the title changed after signing.
    const path = file(edited);
    expect(run([qpdf, "--check", path]).code).toBe(0);
    expect(run([pdfinfo, path]).out).toContain("edited after signing");
    const changed: SignedPdf = { kind: "changed-after-signing", originalLength: original.length, recordId: RECORD };
    expect(originalOfSignedPdf(edited)).toEqual(changed);
    expect(originalOfSignedPdf(concat(signed, ascii("x")))).toEqual(changed);
    expect(originalOfSignedPdf(concat(signed, ascii("\n")))).toEqual(changed);
    expect(originalOfSignedPdf(concat(signed, new Uint8Array(randomBytes(40_000))))).toEqual(changed);
  });

  test("more than the tail appended: the marker is out of reach, so not signed (the whole file's hash then matches nothing)", () => {
    expect(originalOfSignedPdf(concat(signed, new Uint8Array(SIGNED_PDF_TAIL_BYTES)))).toEqual({ kind: "not-signed" });
  });

  test("not signed: a plain PDF, anything that is not a PDF, a truncated signed PDF, a forged or inconsistent marker", () => {
    const none: SignedPdf = { kind: "not-signed" };
    expect(originalOfSignedPdf(new Uint8Array())).toEqual(none);
    expect(originalOfSignedPdf(ascii("hello"))).toEqual(none);
    expect(originalOfSignedPdf(new Uint8Array(randomBytes(100_000)))).toEqual(none);
    expect(originalOfSignedPdf(makeTestPdf({ updated: true }))).toEqual(none);
    // Cut anywhere in the update: the declared signed length is past the end.
    for (let cut = signed.length - 1; cut > original.length; cut -= 7) expect(originalOfSignedPdf(signed.subarray(0, cut)).kind).toBe("not-signed");

    const text = new TextDecoder("latin1").decode(signed);
    const forge = (from: RegExp, to: string) => {
      const changed = text.replace(from, to);
      expect(changed).not.toBe(text);
      return Uint8Array.from(changed, (c) => c.charCodeAt(0));
    };
    // The original length must fall right after a %%EOF (and the whitespace after it).
    expect(originalOfSignedPdf(forge(/\/DocverifyOriginalLength \(\d+\)/, `/DocverifyOriginalLength (${original.length - 6})`))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifyOriginalLength \(\d+\)/, `/DocverifyOriginalLength (${original.length + 3})`))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifyOriginalLength \(\d+\)/, "/DocverifyOriginalLength (0)"))).toEqual(none);
    // Past the marker itself, or past the end.
    expect(originalOfSignedPdf(forge(/\/DocverifyOriginalLength \(\d+\)/, `/DocverifyOriginalLength (${signed.length})`))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifySignedLength \(\d+\)/, `/DocverifySignedLength (${String(signed.length + 1).padStart(10, "0")})`))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifySignedLength \(\d+\)/, `/DocverifySignedLength (${String(signed.length - 7).padStart(10, "0")})`))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifyRecordId \([^)]*\)/, "/DocverifyRecordId (not-a-uuid-at-all-no-no-no-no-no-no)"))).toEqual(none);
    expect(originalOfSignedPdf(forge(/\/DocverifyRecordId \([^)]*\)/, "/DocverifyNothing (x)"))).toEqual(none);
  });

  test("from the tail alone: the same answer as from the whole file", async () => {
    const big = makeTestPdf({ pages: 1500 });
    expect(big.length).toBeGreaterThan(3 * SIGNED_PDF_TAIL_BYTES);
    const bigSigned = await signPdf(big, STAMP);
    expect(STAMP_TAIL).toBe(SIGNED_PDF_TAIL_BYTES);
    for (const bytes of [bigSigned, concat(bigSigned, ascii("more")), big, signed]) {
      const tail = bytes.subarray(Math.max(0, bytes.length - SIGNED_PDF_TAIL_BYTES));
      expect(originalOfSignedPdfTail(tail, bytes.length)).toEqual(originalOfSignedPdf(bytes));
    }
    expect(originalOfSignedPdf(bigSigned)).toEqual({ kind: "signed", originalLength: big.length, recordId: RECORD });
    // A tail longer than the file it claims to end is nonsense.
    expect(originalOfSignedPdfTail(signed, signed.length - 1)).toEqual({ kind: "not-signed" });
  });
});

/** The test PDF's text with its xref offsets recomputed after an edit that changed lengths. */
function fixXref(text: string): Uint8Array {
  const offsets: number[] = [];
  for (const m of text.matchAll(/(\d+) 0 obj/g)) offsets[Number(m[1])] = m.index;
  const xrefAt = text.indexOf("xref\n");
  const entries = offsets.slice(1).map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  const head = text.slice(0, xrefAt);
  const trailer = text.slice(text.indexOf("trailer"), text.indexOf("startxref"));
  return Uint8Array.from(`${head}xref\n0 ${offsets.length}\n0000000000 65535 f \n${entries}${trailer}startxref\n${xrefAt}\n%%EOF\n`, (c) => c.charCodeAt(0));
}
