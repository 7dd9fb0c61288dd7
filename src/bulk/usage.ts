/**
 * The bulk commands' usage texts, shared by `docverify authenticate|check|revoke` (src/main.ts lists
 * them with the other commands' usages) and the standalone `node docverify-client.mjs`. Imports
 * nothing, so the main command line shows them without loading the client.
 */

const CONNECTION =
  "  --url URL            the docverify service (default DOCVERIFY_URL, else http://127.0.0.1:8080)\n" +
  "  --key-file FILE      the API key: the file's first line (default DOCVERIFY_API_KEY); never printed\n";
const SELECTION =
  "  --include GLOB       only files whose path below the folder given matches (repeat for several)\n" +
  "  --exclude GLOB       leave out files whose path below the folder given matches (repeat for several)\n";
const OUTPUT =
  "  --concurrency N      requests at once, 1 to 64 (default 8)\n" +
  "  --json               one JSON line per file on stdout as each finishes, then {\"summary\":{…}}\n" +
  "  --no-progress        no progress line on stderr (there is none either when stderr is not a terminal)\n" +
  "  -h, --help           this text\n";

const EXITS =
  "Exit codes: 0 every file done; 1 some failed (listed, and in the manifest); 2 usage error;\n" +
  "3 nothing could start (server unreachable, key refused or unfit); 130/143 interrupted\n" +
  "(SIGINT/SIGTERM; the manifest is complete up to there, run again to resume). docs/bulk.md.\n";

export const AUTHENTICATE_USAGE =
  "Usage: docverify authenticate PATH... [--url URL] [--key-file FILE] [--include GLOB]... [--exclude GLOB]...\n" +
  "         [--concurrency N] [--manifest FILE] [--no-filename] [--wait] [--wait-timeout SECONDS]\n" +
  "         [--receipts DIR] [--json] [--no-progress]\n" +
  "       node docverify-client.mjs authenticate    (the same arguments)\n\n" +
  "Authenticates every file of PATH (files, and folders recursively) as the key's organisation. Each\n" +
  "file is hashed here (SHA-256, as it streams): the document never leaves this machine, only its hash\n" +
  "and its base name. Every file is recorded in the manifest as it finishes; a second run over the same\n" +
  "paths skips what the manifest already holds (same path, same hash) and authenticates changed files\n" +
  "anew. The service never creates two records of one hash for one organisation, so an interrupted run\n" +
  "is simply run again. The key needs records:write (a live key); this is checked before anything.\n\n" +
  "Options:\n" +
  CONNECTION +
  SELECTION +
  "  --manifest FILE      the manifest, JSON lines, appended to (default ./docverify-manifest.jsonl)\n" +
  "  --no-filename        do not send the file's base name (it is shown publicly on the verify page)\n" +
  "  --wait               then wait until every record verifies as verified_org\n" +
  "  --wait-timeout SECONDS  how long --wait and --receipts wait for the ledger (default 600)\n" +
  "  --receipts DIR       save each record's receipt as DIR/<recordId>.json once anchored (waits for it)\n" +
  OUTPUT +
  "\n" +
  EXITS;

export const CHECK_USAGE =
  "Usage: docverify check PATH... [--url URL] [--key-file FILE] [--anonymous] [--include GLOB]...\n" +
  "         [--exclude GLOB]... [--concurrency N] [--json] [--no-progress]\n" +
  "       node docverify-client.mjs check    (the same arguments)\n\n" +
  "Verifies every file of PATH by its hash (computed here; the document never leaves this machine):\n" +
  "one verdict per file, with the records it rests on. With a key the verifications are the key's\n" +
  "organisation's (and in its verification log); without one, or with --anonymous, public.\n\n" +
  "Options:\n" +
  CONNECTION +
  "  --anonymous          verify without a key, even when DOCVERIFY_API_KEY is set\n" +
  SELECTION +
  OUTPUT +
  "\n" +
  "Exit codes: 0 every file verified (verified_org or verified); 1 some file not (revoked, no_record,\n" +
  "pending_anchor, unreadable…); 2 usage error; 3 nothing could start (server unreachable, key\n" +
  "refused); 130/143 interrupted. docs/bulk.md.\n";

export const REVOKE_USAGE =
  "Usage: docverify revoke --manifest FILE --reason REASON [--url URL] [--key-file FILE] [--concurrency N]\n" +
  "         [--json] [--no-progress]\n" +
  "       node docverify-client.mjs revoke    (the same arguments)\n\n" +
  "Revokes every record of a manifest written by docverify authenticate, permanently, and appends\n" +
  "each result to it (state revoked). Records already revoked are counted as such, not as failures;\n" +
  "a record not yet final on the ledger is waited for. The key needs records:revoke: checked before\n" +
  "any record is revoked.\n\n" +
  "Options:\n" +
  "  --manifest FILE      the manifest (required)\n" +
  "  --reason REASON      SUPERSEDED, ERROR_IN_DOCUMENT, KEY_COMPROMISE, PRIVILEGE_WITHDRAWN,\n" +
  "                       AFFILIATION_CHANGED, CESSATION_OF_OPERATION, CERTIFICATE_HOLD, UNSPECIFIED\n" +
  "                       or OTHER (required)\n" +
  CONNECTION +
  OUTPUT +
  "\n" +
  "Exit codes: 0 every record revoked (now or before); 1 some not; 2 usage error; 3 nothing could\n" +
  "start (server unreachable, key refused or without records:revoke); 130/143 interrupted. docs/bulk.md.\n";

/** Keyed by command, for src/usage.ts's USAGES. */
export const BULK_USAGES = { authenticate: AUTHENTICATE_USAGE, check: CHECK_USAGE, revoke: REVOKE_USAGE } as const;
