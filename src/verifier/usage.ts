/**
 * The verifier's usage text, shared by `docverify verify-receipt` (src/main.ts lists it with the
 * other commands' usages) and the standalone `node docverify-verify.mjs`. Imports nothing, so the
 * main command line can show it without loading the verifier.
 */
export const VERIFY_RECEIPT_USAGE =
  "Usage: docverify verify-receipt RECEIPT (--file DOC | --hash sha256:HEX) [--mirror URL]... [--no-builtin-mirrors]\n" +
  "         [--trust FILE] [--require-identity] [--min-mirrors N] [--connect-to HOST:PORT:ADDRESS:PORT]...\n" +
  "         [--dns-server ADDRESS[:PORT]]... [--max-scan-pages N] [--offline] [--json]\n" +
  "       node docverify-verify.mjs    (the same arguments)\n\n" +
  "Checks a docverify receipt without docverify: the document's hash, the organisation's and the\n" +
  "seal's ML-DSA signatures, and, on at least two distinct hosts among the mirror nodes this verifier\n" +
  "trusts, the record's message, the key announcement, that the key was in force at the record's place\n" +
  "on the topic, any revocation and any compromise of the key; then who made the record:\n" +
  "confirmed by a trust file, by the announced domain's https://DOMAIN/.well-known/docverify.json or\n" +
  "its _docverify.DOMAIN TXT record, or reported as an unconfirmed claim (docs/receipts.md).\n" +
  "The mirror nodes asked are built in for mainnet, testnet and previewnet, plus those you name;\n" +
  "never the receipt's own suggestions unless you name them. A local-ledger receipt needs --mirror\n" +
  "and proves nothing publicly. RECEIPT is a file, or - for standard input.\n\n" +
  "Options:\n" +
  "  --file DOC           the document: its SHA-256 is computed here (of a docverify-signed PDF, of the original inside it)\n" +
  "  --hash sha256:HEX    the document's SHA-256, instead of --file\n" +
  "  --mirror URL         a mirror node to ask as well (repeat for several)\n" +
  "  --no-builtin-mirrors ask only the mirror nodes of --mirror and --trust\n" +
  "  --trust FILE         a trust file: mirror nodes per network, organisations pinned by topic and key\n" +
  "  --require-identity   exit 1 unless the organisation's identity is confirmed\n" +
  "  --min-mirrors N      distinct hosts required among the mirror nodes (default 2; 1 is a weakened check)\n" +
  "  --connect-to HOST:PORT:ADDRESS:PORT\n" +
  "                       connect to ADDRESS:PORT for HOST:PORT (certificates still checked for HOST), like curl's\n" +
  "  --dns-server ADDRESS[:PORT]  the DNS server for TXT records (default: the system's)\n" +
  "  --max-scan-pages N   pages of 100 messages the topic scan reads per mirror node at most (default 10000)\n" +
  "  --offline            check the signatures only, without the ledger (never verified)\n" +
  "  --json               the report as one JSON object on stdout\n" +
  "  -h, --help           this text\n\n" +
  "Exit codes: 0 verified or verified_org (with --require-identity: and the identity confirmed),\n" +
  "1 any other verdict, 2 usage errors.\n";
