/**
 * `docverify sandbox --help`, apart from the command (sandbox.ts): main.ts holds every usage, and
 * importing the command itself would load the whole service for `docverify key list`.
 */
export const SANDBOX_USAGE =
  "Usage: docverify sandbox [--port N] [--host H] [--keep] [--json]\n\n" +
  "A throwaway docverify for trying the API's writes (a dv_test_ key can verify but never create\n" +
  "or revoke). In one command: a new temporary data folder, the whole service on the embedded\n" +
  "local ledger in it (as docverify serve runs it, rate limits at their defaults), an organisation\n" +
  "\"Sandbox organisation\" (API access, add-on, validated) and a live API key with records:write and\n" +
  "records:revoke. It prints, once, on stdout: the URL, the key, the organisation id, the data folder,\n" +
  "and export lines for DOCVERIFY_URL and DOCVERIFY_API_KEY (examples/README.md). Nothing it anchors\n" +
  "is public. Runs until SIGINT (Ctrl-C) or SIGTERM, drains like serve, then deletes the folder.\n\n" +
  "It ignores DOCVERIFY_DATA_DIR, DOCVERIFY_DATABASE_URL, DOCVERIFY_LEDGER_NETWORK and every other\n" +
  "DOCVERIFY_* setting but DOCVERIFY_LOG_LEVEL (its log, JSON lines on stderr; default warn): always\n" +
  "the local ledger and SQLite in its own folder. It has no --data.\n\n" +
  "Options:\n" +
  "  --port N    the port to listen on; default 0: a free one, printed (8080 is serve's)\n" +
  "  --host H    the address to listen on (default 127.0.0.1)\n" +
  "  --keep      keep the data folder when it stops (docverify status --data DIR reads it)\n" +
  "  --json      what it prints as one JSON document on stdout\n" +
  "  -h, --help  this text\n";
