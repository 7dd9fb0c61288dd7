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

/** Wires the file picker and the drop zone; reads the expected hash from `#check[data-hash]`. */
const UI_JS = String.raw`
var section = document.getElementById("check");
var input = document.getElementById("file");
var drop = document.getElementById("drop");
var result = document.getElementById("result");
if (section && input && drop && result) {
  var expected = section.getAttribute("data-hash");
  var status = section.getAttribute("data-status");
  var revoked = status === "revoked";
  var waiting = status === "waiting";
  section.hidden = false;
  var say = function (text, kind) {
    result.textContent = text;
    result.className = kind;
  };
  var check = function (file) {
    if (!file) return;
    say("Computing the SHA-256 of the file on this computer…", "busy");
    var hasher = createSha256();
    var reader = file.stream().getReader();
    var step = function () {
      return reader.read().then(function (r) {
        if (r.done) return "sha256:" + hasher.hex();
        hasher.update(r.value);
        return step();
      });
    };
    step().then(function (actual) {
      if (actual === expected) {
        say(revoked
          ? "Match: this file is the document of this record, but the record has been revoked (see its status above)."
          : waiting
            ? "Match: this file is the document of this record, but the record is not final yet: it awaits the ledger (see its status above)."
            : "Match: this file is the document this record authenticates.", revoked ? "match revoked" : waiting ? "match waiting" : "match");
      } else {
        say("No match: this file is not the document of this record. Its hash is " + actual + ".", "mismatch");
      }
    }, function () {
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

export const VERIFY_SCRIPT = `(function () {\n"use strict";\n${SHA256_JS}\n${UI_JS}\n})();`;
