/**
 * The verify page's only script, inlined and allowed by its SHA-256 in the page's
 * Content-Security-Policy. It hashes a file the visitor picks or drops, in the browser (the file
 * never leaves the machine), and says whether it is the document of the record shown.
 *
 * SHA-256 is computed here in plain JavaScript, streaming the file in chunks, rather than with
 * `crypto.subtle`: SubtleCrypto exists only in secure contexts (HTTPS or localhost), and an
 * appliance on a private network is often reached over plain HTTP; it would also need the whole
 * file in memory. test/records/verify-page.test.ts checks this implementation against
 * node:crypto on the FIPS 180-4 examples and block-boundary lengths.
 *
 * A docverify-signed PDF (docs/signing.md, "The signed PDF") is recognised from the file's last
 * 64 KiB and only the original inside it, the bytes before docverify's update, is hashed; when it
 * matches, that original is offered to save (a blob: link, nothing leaves the machine).
 * `SIGNED_PDF_JS` is src/verifier/signed-pdf.ts's rule again, and the same test runs both on the
 * same inputs, so the two cannot drift apart.
 *
 * Plain ES2017 in a string (not compiled TypeScript), so the bytes the CSP hash covers are exactly
 * the bytes written here, whatever the bundler does.
 */

/** Defines `createSha256()` → `{ update(Uint8Array), hex() }`. */
export const SHA256_JS = String.raw`
function createSha256() {
  var K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ]);
  var H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  var W = new Uint32Array(64);
  var buf = new Uint8Array(64);
  var bufLen = 0;
  var total = 0;

  function block(b, o) {
    var i, t1, t2;
    for (i = 0; i < 16; i++) W[i] = (b[o + 4 * i] << 24) | (b[o + 4 * i + 1] << 16) | (b[o + 4 * i + 2] << 8) | b[o + 4 * i + 3];
    for (i = 16; i < 64; i++) {
      var x = W[i - 15], y = W[i - 2];
      var s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      var s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    var a = H[0], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7], bb = H[1];
    for (i = 0; i < 64; i++) {
      var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      var ch = (e & f) ^ (~e & g);
      t1 = (h + S1 + ch + K[i] + W[i]) | 0;
      var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      var maj = (a & bb) ^ (a & c) ^ (bb & c);
      t2 = (S0 + maj) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = bb; bb = a; a = (t1 + t2) | 0;
    }
    H[0] += a; H[1] += bb; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }

  return {
    update: function (data) {
      var i = 0;
      total += data.length;
      if (bufLen > 0) {
        while (bufLen < 64 && i < data.length) buf[bufLen++] = data[i++];
        if (bufLen < 64) return;
        block(buf, 0);
        bufLen = 0;
      }
      for (; i + 64 <= data.length; i += 64) block(data, i);
      while (i < data.length) buf[bufLen++] = data[i++];
    },
    hex: function () {
      var bits = total * 8;
      var pad = new Uint8Array(((bufLen < 56 ? 56 : 120) - bufLen) + 8);
      pad[0] = 0x80;
      var hi = Math.floor(bits / 4294967296), lo = bits >>> 0;
      var n = pad.length;
      pad[n - 8] = hi >>> 24; pad[n - 7] = hi >>> 16; pad[n - 6] = hi >>> 8; pad[n - 5] = hi;
      pad[n - 4] = lo >>> 24; pad[n - 3] = lo >>> 16; pad[n - 2] = lo >>> 8; pad[n - 1] = lo;
      total -= pad.length; // update() below counts the padding; the length is already encoded
      this.update(pad);
      var out = "";
      for (var j = 0; j < 8; j++) out += ("00000000" + H[j].toString(16)).slice(-8);
      return out;
    }
  };
}
`;

/**
 * Defines `SIGNED_PDF_TAIL_BYTES` and `originalOfSignedPdfTail(tail, totalLength)` →
 * `{kind: "signed" | "changed-after-signing", originalLength, recordId}` or `{kind: "not-signed"}`,
 * exactly as src/verifier/signed-pdf.ts.
 */
export const SIGNED_PDF_JS = String.raw`
var SIGNED_PDF_TAIL_BYTES = 65536;
function originalOfSignedPdfTail(tail, totalLength) {
  var NOT_SIGNED = { kind: "not-signed" };
  var MAX_SPACE = 32;
  if (tail.length > totalLength) return NOT_SIGNED;
  var text = "";
  for (var i = 0; i < tail.length; i += 8192) text += String.fromCharCode.apply(null, tail.subarray(i, i + 8192));
  var base = totalLength - tail.length;
  var isSpace = function (c) { return c === 0 || c === 9 || c === 10 || c === 12 || c === 13 || c === 32; };
  var endsAtEof = function (end) {
    var at = end;
    while (at > 0 && end - at < MAX_SPACE && isSpace(text.charCodeAt(at - 1))) at--;
    return at >= 5 && text.slice(at - 5, at) === "%%EOF";
  };
  var at = text.lastIndexOf("/DocverifyOriginalLength");
  if (at === -1) return NOT_SIGNED;
  var start = text.lastIndexOf(" obj", at);
  var end = text.indexOf("endobj", at);
  if (start === -1 || end === -1) return NOT_SIGNED;
  var dict = text.slice(start, end);
  var n = /\/DocverifyOriginalLength\s*\((\d{1,10})\)/.exec(dict);
  var s = /\/DocverifySignedLength\s*\((\d{10})\)/.exec(dict);
  var id = /\/DocverifyRecordId\s*\(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)/.exec(dict);
  if (n === null || s === null || id === null) return NOT_SIGNED;
  var originalLength = Number(n[1]);
  var signedLength = Number(s[1]);
  if (!(base + MAX_SPACE + 5 <= originalLength && originalLength <= base + start && originalLength < signedLength && signedLength <= totalLength)) return NOT_SIGNED;
  if (!endsAtEof(originalLength - base) || !endsAtEof(signedLength - base)) return NOT_SIGNED;
  return { kind: signedLength === totalLength ? "signed" : "changed-after-signing", originalLength: originalLength, recordId: id[1] };
}
`;

/** Wires the file picker and the drop zone; reads the expected hash from `#check[data-hash]`. */
const UI_JS = String.raw`
var section = document.getElementById("check");
var input = document.getElementById("file");
var drop = document.getElementById("drop");
var result = document.getElementById("result");
var original = document.getElementById("original");
var originalLink = document.getElementById("original-link");
if (section && input && drop && result && original && originalLink) {
  var expected = section.getAttribute("data-hash");
  var recordId = section.getAttribute("data-record");
  var status = section.getAttribute("data-status");
  var revoked = status === "revoked";
  var waiting = status === "waiting";
  section.hidden = false;
  var say = function (text, kind) {
    result.textContent = text;
    result.className = kind;
  };
  // The original cut out of a signed PDF that matched, offered to save: what was signed, no stamp.
  var originalUrl = null;
  var offerOriginal = function (blob) {
    if (originalUrl !== null) URL.revokeObjectURL(originalUrl);
    originalUrl = blob === null ? null : URL.createObjectURL(blob);
    if (originalUrl === null) originalLink.removeAttribute("href");
    else originalLink.setAttribute("href", originalUrl);
    original.hidden = originalUrl === null;
  };
  var hashOf = function (blob) {
    var hasher = createSha256();
    var reader = blob.stream().getReader();
    var step = function () {
      return reader.read().then(function (r) {
        if (r.done) return "sha256:" + hasher.hex();
        hasher.update(r.value);
        return step();
      });
    };
    return step();
  };
  // Three sentences for a match: active, revoked, awaiting the ledger.
  var matched = function (active, revokedText, waitingText) {
    if (revoked) say(revokedText + ", but the record has been revoked (see its status above).", "match revoked");
    else if (waiting) say(waitingText + ", but the record is not final yet: it awaits the ledger (see its status above).", "match waiting");
    else say(active, "match");
  };
  var check = function (file) {
    if (!file) return;
    offerOriginal(null);
    say("Computing the SHA-256 of the file on this computer…", "busy");
    // A docverify-signed PDF carries its original's length in its last bytes: read those first.
    file.slice(Math.max(0, file.size - SIGNED_PDF_TAIL_BYTES)).arrayBuffer().then(function (buffer) {
      var pdf = originalOfSignedPdfTail(new Uint8Array(buffer), file.size);
      var other = pdf.kind !== "not-signed" && pdf.recordId !== recordId ? " It names another record, " + pdf.recordId + "." : "";
      if (pdf.kind === "changed-after-signing") {
        say("No match: this PDF was signed with docverify, but changed after signing (something was added to it afterwards), so it is no longer the signed document." + other, "mismatch");
        return;
      }
      if (pdf.kind === "signed") {
        var inside = file.slice(0, pdf.originalLength, "application/pdf");
        return hashOf(inside).then(function (actual) {
          if (actual === expected) offerOriginal(inside);
          if (actual === expected && pdf.recordId === recordId) {
            var ours = "Match: this is the signed PDF of this record, and its original document matches";
            matched("Match: this is the signed PDF of this record: its original document matches. The stamp and metadata were added when it was signed and are not part of what was signed.", ours, ours);
          } else if (actual === expected) {
            var theirs = "Match: this PDF was signed with docverify under another record (" + pdf.recordId + "); its original document is the document";
            matched(theirs + " this record authenticates.", theirs + " of this record", theirs + " of this record");
          }
          else say("No match: this is a PDF signed with docverify, but its original document is not the document of this record." + other + " The original's hash is " + actual + ".", "mismatch");
        });
      }
      return hashOf(file).then(function (actual) {
        if (actual === expected) matched("Match: this file is the document this record authenticates.", "Match: this file is the document of this record", "Match: this file is the document of this record");
        else say("No match: this file is not the document of this record. Its hash is " + actual + ".", "mismatch");
      });
    }).then(null, function () {
      say("The file could not be read.", "mismatch");
    });
  };
  input.addEventListener("change", function () { check(input.files && input.files[0]); });
  drop.addEventListener("dragover", function (e) { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", function () { drop.classList.remove("over"); });
  drop.addEventListener("drop", function (e) {
    e.preventDefault();
    drop.classList.remove("over");
    check(e.dataTransfer && e.dataTransfer.files[0]);
  });
  // A file dropped beside the zone must not make the browser navigate away to it.
  document.addEventListener("dragover", function (e) { e.preventDefault(); });
  document.addEventListener("drop", function (e) { e.preventDefault(); });
}
`;

export const VERIFY_SCRIPT = `(function () {\n"use strict";\n${SHA256_JS}\n${SIGNED_PDF_JS}\n${UI_JS}\n})();`;
