/**
 * The command line's usage texts: the whole (`docverify help`) and each subcommand's, printed on
 * stdout for `--help`/`-h` (and `docverify help COMMAND`). The flags listed are those each
 * command's parser accepts: keep the two together when a flag changes. Loads no command's module.
 */
import { VERSION } from "./version.ts";
import { VERIFY_RECEIPT_USAGE } from "./verifier/usage.ts";
import { SANDBOX_USAGE } from "./app/sandbox-usage.ts";
import { BULK_USAGES } from "./bulk/usage.ts";

export const USAGE = `docverify ${VERSION}: document authenticity service

Usage:
  docverify serve [--data DIR]     the API, on DOCVERIFY_HOST:DOCVERIFY_PORT (default 127.0.0.1:8080)
  docverify admin [--data DIR]     the administrator's terminal UI (needs a terminal)
  docverify org create --name NAME [--api-access] [--addon] [--validated]
  docverify org set ORG [--api-access on|off] [--addon on|off] [--validated on|off] [--suspended on|off]
                      [--domain DOMAIN|none] [--name NAME]
  docverify org list
  docverify org rotate-key ORG     a new system key for the organisation, announced on its topic
  docverify org key-compromised ORG --since TIME [--key FINGERPRINT]
                                   its records signed since TIME verify as revoked (KEY_COMPROMISE)
  docverify seal rotate-key        a new service seal key, announced on every organisation's topic
  docverify key mint --org ORG --env live|test [--revoke] [--expires DATE]
  docverify key list [--org ORG]
  docverify key revoke KEYID
  docverify person add --org ORG --name NAME --email EMAIL --identity TEXT
                                   a person who signs PDFs; prints their one-time enrolment link
  docverify person list [--org ORG]
  docverify person suspend PERSON
  docverify person link PERSON     a new enrolment link (older unused ones stop working)
  docverify status                 records by anchor state, the ledger and its health, the anchor queue
  docverify trust export [--org ORG]
                                   a trust file for verify-receipt --trust: the organisations'
                                   topics and keys, and this network's mirror nodes
  docverify backup FILE [--force] [--progress]
                                   a consistent copy of the database, also while serve runs
  docverify restore FILE [--force] puts a backup in place; refused while the database is in use
  docverify master-key rotate      a new master key, every private key re-encrypted under it;
                                   refused while serve runs
  docverify local-ledger [--host H] [--mirror-port P] [--second-mirror-port P] [--grpc-port P]
                         [--consensus-ms N] [--consensus-interval-ms N] [--operator-key-file FILE]
                                   the local ledger alone, until SIGTERM/SIGINT
  docverify verify-receipt RECEIPT (--file DOC | --hash sha256:HEX) [--mirror URL]... [--offline]
                                   checks a receipt on the ledger's mirror nodes, without
                                   docverify's data (docs/receipts.md; no --data)
  docverify sandbox [--port N] [--host H] [--keep]
                                   a throwaway appliance and a live key, for trying writes (no --data)
  docverify authenticate PATH... [--url URL] [--key-file FILE] [--manifest FILE] [--wait] [--receipts DIR]
  docverify check PATH... [--url URL] [--key-file FILE] [--anonymous]
  docverify revoke --manifest FILE --reason REASON [--url URL] [--key-file FILE]
                                   files hashed here, their records made, verified or revoked over
                                   a service's API, with a manifest (docs/bulk.md; no --data)

  Every command takes --json (one JSON document on stdout), --data DIR, and --help for its usage.
  docverify --version              version and commit
  docverify help [COMMAND]         this text, or COMMAND's usage

Settings come from DOCVERIFY_* environment variables; see the README.
`;

type Option = readonly [flag: string, meaning: string];
const DATA: Option = ["--data DIR", "the data folder (default DOCVERIFY_DATA_DIR, else ./data)"];
const JSON_OUT: Option = ["--json", "one JSON document on stdout"];
const HELP: Option = ["-h, --help", "this text"];
const SETTINGS_NOTE = "\nSettings come from DOCVERIFY_* environment variables; see the README.\n";

/** An "Options:" block, meanings in one column. */
function options(...rows: Option[]): string {
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return "Options:\n" + rows.map(([flag, meaning]) => `  ${flag.padEnd(width)}${meaning}\n`).join("");
}

/**
 * Each subcommand's usage: printed on stdout for `--help`/`-h` (and `docverify help COMMAND`).
 * The flags listed are those its parser accepts: keep the two together when a flag changes.
 */
export const USAGES: Readonly<Record<string, string>> = {
  serve:
    "Usage: docverify serve [--data DIR]\n\n" +
    "The API on DOCVERIFY_HOST:DOCVERIFY_PORT (default 127.0.0.1:8080), the anchor loop and, on ledger\n" +
    "network local, the local ledger (embedded, or the one at DOCVERIFY_LOCAL_LEDGER_URL). Runs until\n" +
    "SIGTERM or SIGINT, then drains. One serve per data folder: a second one refuses to start.\n\n" +
    options(DATA, HELP) +
    SETTINGS_NOTE,
  admin:
    "Usage: docverify admin [--data DIR]\n\n" +
    "The administrator's terminal UI: organisations, API keys, persons, records, the anchor queue and\n" +
    "the audit trail. Needs a terminal; scripts use the org, key, person and status commands.\n\n" +
    options(DATA, HELP),
  org:
    "Usage: docverify org create|set|list|rotate-key|key-compromised [OPTIONS]\n\n" +
    "  docverify org create --name NAME [--api-access] [--addon] [--validated]\n" +
    "  docverify org set ORG [--api-access on|off] [--addon on|off] [--validated on|off] [--suspended on|off] [--domain DOMAIN|none] [--name NAME]\n" +
    "  docverify org list\n" +
    "  docverify org rotate-key ORG\n" +
    "  docverify org key-compromised ORG --since TIME [--key FINGERPRINT]\n\n" +
    "Each takes --data DIR and --json; docverify org SUBCOMMAND --help for its usage.\n",
  "org create":
    "Usage: docverify org create --name NAME [--api-access] [--addon] [--validated] [--json] [--data DIR]\n\n" +
    "Creates an organisation with its own system key; prints its id ({\"id\":…} with --json). Names are\n" +
    "unique: one another organisation holds (compared ignoring case, width and Unicode form) is refused.\n\n" +
    options(
      ["--name NAME", "the organisation's registered name (required)"],
      ["--api-access", "it may use the API"],
      ["--addon", "it holds the anchoring add-on"],
      ["--validated", "its identity has been validated"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  "org set":
    "Usage: docverify org set ORG [--api-access on|off] [--addon on|off] [--validated on|off] [--suspended on|off]\n" +
    "                         [--domain DOMAIN|none] [--name NAME] [--json] [--data DIR]\n\n" +
    "Changes organisation ORG (its id); give at least one flag. Prints the organisation as it now is.\n" +
    "A new domain (or none) is announced on the organisation's ledger topic again, with its key, by\n" +
    "the running service; verifiers confirm it at https://DOMAIN/.well-known/docverify.json or in the\n" +
    "DNS TXT record _docverify.DOMAIN (docs/admin.md). A new name is announced the same way.\n\n" +
    options(
      ["--api-access on|off", "whether it may use the API"],
      ["--addon on|off", "whether it holds the anchoring add-on"],
      ["--validated on|off", "whether its identity has been validated"],
      ["--suspended on|off", "whether it is suspended"],
      ["--domain DOMAIN|none", "its DNS name (example.org: lowercase letters, digits and hyphens, an IDN in its xn-- form; no scheme, port or path), or none to clear it"],
      ["--name NAME", "renames it; a name another organisation holds (ignoring case, width and Unicode form) is refused"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  "org list": "Usage: docverify org list [--json] [--data DIR]\n\nOrganisations, their flags and domains.\n\n" + options(JSON_OUT, DATA, HELP),
  "org rotate-key":
    "Usage: docverify org rotate-key ORG [--json] [--data DIR]\n\n" +
    "Gives organisation ORG (its id) a new system key, which signs its records from now on. The running\n" +
    "service announces it on the organisation's ledger topic, naming the key it replaces, once every\n" +
    "record message signed with the old key has settled; records signed with the new key are anchored\n" +
    "after that announcement, and the old key's records keep verifying (docs/signing.md \"Key lifecycle\").\n" +
    "Refused, changing nothing, while the previous rotation's announcement is not anchored yet.\n\n" +
    options(JSON_OUT, DATA, HELP),
  seal:
    "Usage: docverify seal rotate-key [OPTIONS]\n\n" +
    "  docverify seal rotate-key [--json] [--data DIR]\n\n" +
    "docverify seal rotate-key --help for its usage.\n",
  "seal rotate-key":
    "Usage: docverify seal rotate-key [--json] [--data DIR]\n\n" +
    "Gives the service a new seal key, which seals every record from now on (running services take it\n" +
    "up at their next record). The running service announces every organisation's key and every\n" +
    "enrolled person's key again with the new seal key, each once that signer's record messages sealed\n" +
    "with the old seal key have settled; records sealed with the new key are anchored after their\n" +
    "signer's new announcement, and records sealed before keep verifying (docs/signing.md \"Key lifecycle\").\n" +
    "Refused, changing nothing: while some organisation's or person's key is not announced with the\n" +
    "current seal key yet (a previous rotation under way), without the master key, before the first record.\n\n" +
    options(JSON_OUT, DATA, HELP),
  "org key-compromised":
    "Usage: docverify org key-compromised ORG --since TIME [--key FINGERPRINT] [--json] [--data DIR]\n\n" +
    "Declares one of organisation ORG's keys compromised: every record it signed at or after TIME\n" +
    "verifies as revoked (KEY_COMPROMISE) from now on, records signed before are unaffected, and the\n" +
    "running service puts one key_compromise message on the organisation's topic. When the key is the\n" +
    "current one it is rotated as by rotate-key, in the same change. Refused, changing nothing: a TIME\n" +
    "in the future, a key that is not the organisation's, a key already declared compromised.\n\n" +
    options(
      ["--since TIME", "RFC 3339 with its offset, such as 2026-12-01T10:00:00Z, not in the future (required)"],
      ["--key FINGERPRINT", "the compromised key's fingerprint, 64 hex digits (default: the current key)"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  key:
    "Usage: docverify key mint|list|revoke [OPTIONS]\n\n" +
    "  docverify key mint --org ORG --env live|test [--revoke] [--expires DATE]\n" +
    "  docverify key list [--org ORG]\n" +
    "  docverify key revoke KEYID\n\n" +
    "Each takes --data DIR and --json; docverify key SUBCOMMAND --help for its usage.\n",
  "key mint":
    "Usage: docverify key mint --org ORG --env live|test [--revoke] [--expires DATE] [--json] [--data DIR]\n\n" +
    "Mints an API key for organisation ORG and prints it, once: copy it now, only its digest is kept.\n" +
    "From its expiry on, the key is refused (401) like a revoked one; without --expires it never expires.\n" +
    "DATE is YYYY-MM-DD (that day's 00:00 UTC) or an RFC 3339 time with its zone, such as\n" +
    "2027-01-31T17:00:00Z or 2027-01-31T18:00:00+01:00, and must be in the future.\n\n" +
    options(
      ["--org ORG", "the organisation's id (required)"],
      ["--env live|test", "the key's environment (required)"],
      ["--revoke", "the key may also revoke records (a live key of an organisation with the add-on)"],
      ["--expires DATE", "when the key stops working (default: never)"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  "key list":
    "Usage: docverify key list [--org ORG] [--json] [--data DIR]\n\n" +
    "Keys without secrets: id, organisation, environment, scopes, created, last used, revoked,\n" +
    "expiry and whether it has passed (expired=yes: the key is refused).\n\n" +
    options(["--org ORG", "only this organisation's keys"], JSON_OUT, DATA, HELP),
  "key revoke": "Usage: docverify key revoke KEYID [--json] [--data DIR]\n\nRevokes the key KEYID.\n\n" + options(JSON_OUT, DATA, HELP),
  person:
    "Usage: docverify person add|list|suspend|link [OPTIONS]\n\n" +
    "  docverify person add --org ORG --name NAME --email EMAIL --identity TEXT\n" +
    "  docverify person list [--org ORG]\n" +
    "  docverify person suspend PERSON\n" +
    "  docverify person link PERSON\n\n" +
    "Persons of an organisation who sign PDFs themselves (docs/admin.md). Each takes --data DIR and\n" +
    "--json; docverify person SUBCOMMAND --help for its usage.\n",
  "person add":
    "Usage: docverify person add --org ORG --name NAME --email EMAIL --identity TEXT [--json] [--data DIR]\n\n" +
    "Adds a person to organisation ORG and prints their enrolment link {DOCVERIFY_PUBLIC_URL}/enrol/TOKEN,\n" +
    "once: it works once, for 24 hours, and only its digest is kept. With --json: {id, enrolUrl, expiresAt}.\n" +
    "Without DOCVERIFY_PUBLIC_URL the link names the address of the serve running on the data folder\n" +
    "(else the default one), and stderr says where it works.\n\n" +
    options(
      ["--org ORG", "the organisation's id (required)"],
      ["--name NAME", "the person's name, shown to anyone verifying what they sign (required)"],
      ["--email EMAIL", "the person's email address (required)"],
      ["--identity TEXT", "how their identity was verified: document type and reference, never the document (required)"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  "person list":
    "Usage: docverify person list [--org ORG] [--json] [--data DIR]\n\n" +
    "Persons: id, organisation, name, email, enrolment, suspension, identity evidence. Never a link.\n\n" +
    options(["--org ORG", "only this organisation's persons"], JSON_OUT, DATA, HELP),
  "person suspend":
    "Usage: docverify person suspend PERSON [--json] [--data DIR]\n\n" +
    "Suspends person PERSON (their id): they cannot enrol or sign, and their records verify with\n" +
    "signerStanding suspended. Suspending a suspended person changes nothing.\n\n" +
    options(JSON_OUT, DATA, HELP),
  "person link":
    "Usage: docverify person link PERSON [--json] [--data DIR]\n\n" +
    "A new enrolment link for person PERSON, printed once (as person add prints it); their older unused\n" +
    "links stop working. For an enrolled person it is a re-enrolment link: a new passkey and key replace\n" +
    "theirs (refused while their key is not yet announced on the ledger).\n\n" +
    options(JSON_OUT, DATA, HELP),
  status:
    "Usage: docverify status [--json] [--data DIR]\n\n" +
    "Records by anchor state, the ledger network and whether it answers, and the anchor queue.\n" +
    "Works while serve runs; never submits anything.\n\n" +
    options(JSON_OUT, DATA, HELP),
  trust:
    "Usage: docverify trust export [OPTIONS]\n\n" +
    "  docverify trust export [--org ORG]\n\n" +
    "Takes --data DIR and --json; docverify trust export --help for its usage.\n",
  "trust export":
    "Usage: docverify trust export [--org ORG] [--json] [--data DIR]\n\n" +
    "Prints a trust file on stdout (JSON, docs/receipts.md §7) for verify-receipt --trust: this\n" +
    "service's organisations that have a ledger topic, each with its id, name, domain, network, topic\n" +
    "and key fingerprints, and this ledger network's mirror nodes (those receipts suggest). Works\n" +
    "while serve runs; an organisation without a topic cannot be exported.\n\n" +
    options(["--org ORG", "only this organisation (its id)"], ["--json", "the same output (it is always JSON)"], DATA, HELP),
  backup:
    "Usage: docverify backup FILE [--force] [--progress] [--json] [--data DIR]\n\n" +
    "A consistent copy of the database into FILE (mode 0600), also while serve runs. The master key\n" +
    "is never in it: keep that apart. FILE may not be the database, its -wal/-shm or the master key.\n\n" +
    options(["--force", "replace FILE if it exists"], ["--progress", "show progress on stderr (the default on a terminal)"], JSON_OUT, DATA, HELP),
  restore:
    "Usage: docverify restore FILE [--force] [--json] [--data DIR]\n\n" +
    "Checks FILE and puts it in place as the data folder's database. Refused while any process has\n" +
    "the database open.\n\n" +
    options(["--force", "replace an existing database (its contents are lost)"], JSON_OUT, DATA, HELP),
  "master-key":
    "Usage: docverify master-key rotate [OPTIONS]\n\n" +
    "  docverify master-key rotate [--json] [--data DIR]\n\n" +
    "docverify master-key rotate --help for its usage.\n",
  "master-key rotate":
    "Usage: docverify master-key rotate [--json] [--data DIR]\n\n" +
    "Makes a new master key and re-encrypts every private key the service holds under it (organisation\n" +
    "keys, the seal key, the ledger submit key) in one transaction, then puts the new key in place of\n" +
    "DOCVERIFY_MASTER_KEY_FILE; the old file is kept until the new one is confirmed. Prints the new and\n" +
    "previous key ids: backups taken before now open only with the previous key. Refused while serve\n" +
    "runs on the data folder (with DOCVERIFY_DATABASE_URL: while any node is connected), and while\n" +
    "the key store is sealed. Under systemd, name the credential's source file in\n" +
    "DOCVERIFY_MASTER_KEY_FILE (docs/operations.md \"Rotate the master key\").\n\n" +
    options(JSON_OUT, DATA, HELP),
  "local-ledger":
    "Usage: docverify local-ledger [--host H] [--mirror-port P] [--second-mirror-port P] [--grpc-port P]\n" +
    "                              [--consensus-ms N] [--consensus-interval-ms N] [--operator-key-file FILE]\n" +
    "                              [--json] [--data DIR]\n\n" +
    "The local ledger alone, in DATA_DIR/ledger/, until SIGTERM or SIGINT; prints its gRPC and mirror\n" +
    "addresses (two mirror addresses, over the same ledger, with --second-mirror-port or when the folder\n" +
    "remembers a second one, as the embedded ledger of serve does: receipts name two mirror nodes).\n" +
    "A serve needs only DOCVERIFY_LOCAL_LEDGER_URL=<mirror address> to use it: its operator\n" +
    "0.0.2 has the public development key (docs/local-ledger.md; for development only) unless the\n" +
    "ledger was created with --operator-key-file.\n\n" +
    options(
      ["--host H", "listen address (default 127.0.0.1)"],
      ["--mirror-port P", "mirror REST port (default: remembered, else a free one)"],
      ["--second-mirror-port P", "a second mirror REST port, 0 for a free one (default: remembered, else none)"],
      ["--grpc-port P", "gRPC port (default: remembered, else a free one)"],
      ["--consensus-ms N", "delay from acceptance to consensus, 0 to 60000"],
      ["--consensus-interval-ms N", "least time between two transactions' consensus, 0 (default: none) to 60000"],
      ["--operator-key-file FILE", "0.0.2's key (hex DER PKCS#8 ED25519) for a new ledger"],
      JSON_OUT,
      DATA,
      HELP,
    ),
  "verify-receipt": VERIFY_RECEIPT_USAGE,
  sandbox: SANDBOX_USAGE,
  ...BULK_USAGES,
};

/**
 * The usage `--help`/`-h` asks for, or null when it is not asked for. Tokens after `--` are
 * arguments, never flags. `org`/`key`/`seal`/`person`/`trust`/`master-key` with a known subcommand give that subcommand's usage.
 */
export function helpRequested(command: string, rest: readonly string[]): string | null {
  const end = rest.indexOf("--");
  const flags = end === -1 ? rest : rest.slice(0, end);
  if (!flags.some((t) => t === "--help" || t === "-h")) return null;
  return USAGES[`${command} ${rest[0]}`] ?? USAGES[command] ?? null;
}
