/**
 * `docverify trust export [--org ORG]` (docs/admin.md "Trust files"): one trust file on stdout, for
 * an auditor who records once what this appliance anchors for, and checks receipts later with
 * `verify-receipt --trust FILE`, without asking the appliance again. docs/receipts.md §7 gives the
 * format; the receipt verifier (src/verifier/trust.ts) reads it strictly, refusing unknown fields.
 *
 * What it holds: the appliance's own network with the mirror nodes receipts suggest (the same
 * list as a receipt's `mirrorNodes`), and each organisation with a topic as
 * `/.well-known/docverify.json` lists it (receipts/identity.ts, the same query), its keys by
 * algorithm and fingerprint with their windows on the topic (announced, replaced, compromised). Reads only, on either engine, also while `serve` runs; it creates
 * nothing, and a data folder that does not exist is refused.
 */
import { suggestedMirrorNodes } from "../anchoring/links.ts";
import type { LedgerNetwork } from "../config/index.ts";
import { parseFlags, UsageError } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import { createIdentity, type IdentityKey } from "../receipts/identity.ts";
import { withExistingAdminCore } from "./cli.ts";

type Out = { write(s: string): void };

export const TRUST_FILE_VERSION = 1;

/** The trust file, with its properties in the order they are written. */
export interface TrustFile {
  readonly v: typeof TRUST_FILE_VERSION;
  /** DOCVERIFY_PUBLIC_URL, without a trailing slash. */
  readonly service: string;
  /** RFC 3339, UTC, with milliseconds. */
  readonly exportedAt: string;
  /** One entry: the appliance's own network. */
  readonly networks: Readonly<Partial<Record<LedgerNetwork, { readonly mirrors: readonly string[] }>>>;
  readonly organisations: readonly {
    readonly orgId: string;
    readonly name: string;
    readonly domain: string | null;
    readonly network: LedgerNetwork;
    readonly topicId: string;
    /** Each key with its window (docs/receipts.md §7), as /.well-known/docverify.json lists it. */
    readonly keys: readonly IdentityKey[];
  }[];
}

export async function runTrust(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "export") throw new UsageError(sub === undefined ? "trust needs a subcommand: export" : `unknown trust subcommand "${sub}": use export`);
  const { values } = parseFlags(rest, { org: { type: "string" }, json: { type: "boolean" }, data: { type: "string" } });
  const only = typeof values.org === "string" ? values.org : null;
  const { file, defaultUrl } = await withExistingAdminCore(env, values.data, async (core) => {
    // An unknown organisation is NOT_FOUND, as everywhere else on the command line.
    if (only !== null) await core.organisations.get(only);
    const network = core.config.ledger.network;
    const identity = await createIdentity({ store: core.store, network, publicUrl: () => core.config.publicUrl }).identity();
    const organisations = identity.organisations.filter((o) => only === null || o.orgId === only);
    if (only !== null && organisations.length === 0) {
      throw new OpsError(`organisation ${only} has no ledger topic yet: nothing of it can be pinned (the running service creates the topic once it holds the add-on)`);
    }
    const file: TrustFile = {
      v: TRUST_FILE_VERSION,
      service: identity.service,
      exportedAt: rfc3339Ms(core.clock.now()),
      networks: { [network]: { mirrors: suggestedMirrorNodes(core.config) } },
      organisations: organisations.map((o) => ({
        orgId: o.orgId,
        name: o.name,
        domain: o.domain,
        network: o.network,
        topicId: o.topicId,
        keys: o.keys,
      })),
    };
    return { file, defaultUrl: core.config.publicUrlIsDefault };
  });
  out.write(JSON.stringify(file, null, 2) + "\n");
  if (defaultUrl) process.stderr.write("DOCVERIFY_PUBLIC_URL is not set: \"service\" names this machine's listening address; set it to the address verifiers reach.\n");
  if (Object.values(file.networks)[0]!.mirrors.length === 0) {
    process.stderr.write("No mirror node is known yet (the embedded ledger has not run on this data folder): the trust file's network lists none; add them with --mirror when verifying.\n");
  }
  return 0;
}
