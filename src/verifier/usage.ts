/**
 * The verifier's usage text, shared by `docverify verify-receipt` (src/main.ts lists it with the
 * other commands' usages) and the standalone `node docverify-verify.mjs`. Imports nothing, so the
 * main command line can show it without loading the verifier.
 */
export const VERIFY_RECEIPT_USAGE =
  "Usage: docverify verify-receipt RECEIPT (--file DOC | --hash sha256:HEX) [--mirror URL]... [--min-mirrors N] [--offline] [--json]\n" +
  "       node docverify-verify.mjs    (the same arguments)\n\n" +
  "Checks a docverify receipt without docverify: the document's hash, the organisation's and the\n" +
  "seal's ML-DSA signatures, and, on at least two independent mirror nodes of the ledger, the record's\n" +
  "message, the organisation's key announcement and any revocation (docs/receipts.md).\n" +
  "RECEIPT is a file, or - for standard input.\n\n" +
  "Options:\n" +
  "  --file DOC         the document: its SHA-256 is computed here (of a docverify-signed PDF, of the original inside it)\n" +
  "  --hash sha256:HEX  the document's SHA-256, instead of --file\n" +
  "  --mirror URL       a mirror node to ask (repeat for several); asked before the receipt's own\n" +
  "  --min-mirrors N    distinct mirror nodes required (default 2; 1 is a weakened check)\n" +
  "  --offline          check the signatures only, without the ledger (never verified)\n" +
  "  --json             the report as one JSON object on stdout\n" +
  "  -h, --help         this text\n\n" +
  "Exit codes: 0 verified or verified_org, 1 any other verdict, 2 usage errors.\n";
