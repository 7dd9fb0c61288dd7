/**
 * Organisations: list, create, rename, switch API access, the add-on, validation and suspension,
 * and set or clear the domain (docs/admin.md "The organisation's domain"). A name another
 * organisation holds is refused and asked again. Every change goes through `core.organisations`,
 * which writes the audit row in the same transaction. A switch that takes something away (API
 * access or add-on off, validation off, suspension on) asks first, and so does every change of
 * domain or name (the key is announced on the ledger again); nothing changes when the person
 * cancels. The system key: shown with its predecessor and any compromise, rotated or declared
 * compromised (key-screens.ts).
 */
import { isExpired } from "../../keys/api-keys.ts";
import { NameTakenError, parseOrgDomain, validateOrgName, type OrgFlags, type Organisation } from "../../keys/organisations.ts";
import { declareOrgKeyCompromised, keyLines, rotateOrgKey } from "./key-screens.ts";
import { BACK, cut, describeError, onOff, time, validateWith, type Ctx } from "./ui.ts";
import { mintKey, keysScreen } from "./keys.ts";

const FLAGS: readonly { key: keyof OrgFlags; label: string; short: string; what: string; loss: string }[] = [
  { key: "apiAccess", label: "API access", short: "API access", what: "its keys may call the /v1 API", loss: "Its keys are refused with 402 PAYMENT_REQUIRED from the next request." },
  { key: "addon", label: "Authentication add-on", short: "add-on", what: "live keys minted from now on get records:write", loss: "Record operations of its keys are refused with 402 ADDON_REQUIRED." },
  { key: "validated", label: "Validated", short: "validated", what: "its keys get the higher rate limits", loss: "Its keys fall back to the anonymous rate limit." },
  { key: "suspended", label: "Suspended", short: "suspended", what: "verifications report signerStanding suspended", loss: "Verifications of its records report signerStanding suspended." },
];

/** Turning this flag to `to` takes something away from the organisation's callers. */
const restricts = (key: keyof OrgFlags, to: boolean) => (key === "suspended" ? to : !to);

export function orgSummary(o: Organisation): string {
  const flags = [o.apiAccess ? "API" : "no API", o.addon ? "add-on" : "no add-on", o.validated ? "validated" : "unvalidated"];
  if (o.suspended) flags.push("SUSPENDED");
  return `${cut(o.name, 36).padEnd(36)}  ${flags.join(" · ")}`;
}

export async function organisationsScreen(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    ui.screen("Organisations");
    const orgs = await core.organisations.list();
    if (orgs.length === 0) ui.info("No organisations yet.");
    const choice = await ui.select("Choose an organisation, or create one", [
      { value: "+create", label: "+ Create an organisation" },
      ...orgs.map((o) => ({ value: o.id, label: orgSummary(o), hint: o.id })),
      { value: "+back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "+back") return;
    if (choice === "+create") await createOrganisation(ctx);
    else await organisationScreen(ctx, choice);
  }
}

/**
 * Asks for a name no other organisation holds (names are unique, compared ignoring case, width
 * and Unicode form: lib/name-key.ts): a taken one is refused with the holder's name and id, and asked
 * again. `self`: the organisation being renamed, which may keep its own name. BACK on Escape.
 */
async function askFreeName(ctx: Ctx, heading: string, question: string, placeholder: string | undefined, self: string | null): Promise<string | typeof BACK> {
  const { ui, core } = ctx;
  for (;;) {
    const typed = await ui.text(question, validateWith(validateOrgName), placeholder);
    if (typed === BACK) return BACK;
    const name = validateOrgName(typed);
    const holder = await core.organisations.named(name);
    if (holder === undefined || holder.id === self) return name;
    ui.flash("error", `${new NameTakenError(name, holder).message}. Type another name.`);
    ui.screen(heading);
  }
}

async function createOrganisation(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  const heading = "Organisations › New";
  for (;;) {
    ui.screen(heading);
    const clean = await askFreeName(ctx, heading, "Name (shown to verifiers as the signing organisation)", "Acme Ltd", null);
    if (clean === BACK) return ui.flash("info", "Nothing created.");
    const flags = await ui.multiselect<keyof OrgFlags>(
      "Switch on now? (Space ticks, Enter goes on; all can be changed later)",
      FLAGS.filter((f) => f.key !== "suspended").map((f) => ({ value: f.key, label: f.label, hint: f.what })),
    );
    if (flags === BACK) return ui.flash("info", "Nothing created.");
    const summary = flags.length === 0 ? "everything off" : flags.map((k) => FLAGS.find((f) => f.key === k)!.label).join(", ");
    const ok = await ui.confirm(`Create "${clean}" (${summary})?`, true);
    if (ok === BACK || !ok) return ui.flash("info", "Nothing created.");
    try {
      const org = await core.organisations.create({ name: clean, apiAccess: flags.includes("apiAccess"), addon: flags.includes("addon"), validated: flags.includes("validated") }, ctx.actor);
      return ui.flash("success", `Created "${org.name}" (id ${org.id}).`);
    } catch (e) {
      // Taken meanwhile (by another administrator or process): nothing created; ask again.
      if (e instanceof NameTakenError) {
        ui.flash("error", `${e.message}. Nothing created; type another name.`);
        continue;
      }
      return ui.flash("error", describeError(e));
    }
  }
}

/** Renames the organisation, after a confirmation: its key is announced again with the new name. */
async function rename(ctx: Ctx, org: Organisation): Promise<void> {
  const { ui, core } = ctx;
  const heading = `Organisations › ${cut(org.name, 40)} › Name`;
  for (;;) {
    ui.screen(heading);
    const name = await askFreeName(ctx, heading, `New name of "${org.name}" (shown to verifiers as the signing organisation)`, undefined, org.id);
    if (name === BACK) return ui.flash("info", "Nothing changed.");
    if (name === org.name) return ui.flash("info", "Nothing changed.");
    const ok = await ui.confirm(`Rename "${org.name}" to "${name}"? Its key is announced again on the ledger, with the new name.`, true);
    if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
    try {
      await core.organisations.set(org.id, { name }, ctx.actor);
      return ui.flash("success", `"${org.name}" is now named "${name}".`);
    } catch (e) {
      if (e instanceof NameTakenError) {
        ui.flash("error", `${e.message}. Nothing changed; type another name.`);
        continue;
      }
      return ui.flash("error", describeError(e));
    }
  }
}

export async function organisationScreen(ctx: Ctx, id: string): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    let org: Organisation;
    try {
      org = await core.organisations.get(id);
    } catch (e) {
      return ui.flash("error", describeError(e));
    }
    const keys = await core.apiKeys.list({ orgId: id });
    const now = core.clock.now();
    // An expired key is refused like a revoked one: not active.
    const revoked = keys.filter((k) => k.revokedAt !== null).length;
    const expired = keys.filter((k) => k.revokedAt === null && isExpired(k, now)).length;
    const active = keys.length - revoked - expired;
    const systemKeys = await core.organisations.keys(id);
    ui.screen(`Organisations › ${cut(org.name, 40)}`);
    ui.note(
      [
        `id            ${org.id}`,
        `name          ${org.name}`,
        `created       ${time(org.createdAt)}`,
        ...FLAGS.map((f) => `${f.short.padEnd(13)} ${onOff(org[f.key])}`),
        `domain        ${org.domain ?? "-"}`,
        `ledger topic  ${org.topicId ?? (org.addon ? "not yet created (the running service creates it)" : "-")}`,
        `API keys      ${active} active, ${expired} expired, ${revoked} revoked`,
        ...keyLines(systemKeys),
      ].join("\n"),
      org.name,
    );
    const choice = await ui.select("What now?", [
      ...FLAGS.map((f) => ({ value: f.key as string, label: `${f.label}: ${onOff(org[f.key])} → turn ${onOff(!org[f.key])}`, hint: f.what })),
      { value: "+name", label: `Name: ${cut(org.name, 40)} → rename`, hint: "announced on its ledger topic with its key" },
      {
        value: "+domain",
        label: org.domain === null ? "Domain: none → set one" : `Domain: ${org.domain} → change or clear`,
        hint: "announced on its ledger topic with its key",
      },
      { value: "+rotate", label: "Rotate the system key", hint: "a new key signs its records from now on" },
      { value: "+compromised", label: "Declare a system key compromised", hint: "what it signed since a time you give verifies as revoked" },
      { value: "+mint", label: "Mint an API key for this organisation" },
      { value: "+keys", label: `Keys of this organisation (${keys.length})` },
      { value: "+back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "+back") return;
    if (choice === "+rotate") {
      await rotateOrgKey(ctx, org);
      continue;
    }
    if (choice === "+compromised") {
      await declareOrgKeyCompromised(ctx, org);
      continue;
    }
    if (choice === "+mint") {
      await mintKey(ctx, id);
      continue;
    }
    if (choice === "+keys") {
      await keysScreen(ctx, id);
      continue;
    }
    if (choice === "+name") {
      await rename(ctx, org);
      continue;
    }
    if (choice === "+domain") {
      await changeDomain(ctx, org);
      continue;
    }
    const flag = FLAGS.find((f) => f.key === choice)!;
    const to = !org[flag.key];
    if (restricts(flag.key, to)) {
      const ok = await ui.confirm(`Turn ${flag.label} ${onOff(to)} for "${org.name}"? ${flag.loss}`, false);
      if (ok === BACK || !ok) {
        ui.flash("info", "Nothing changed.");
        continue;
      }
    }
    try {
      await core.organisations.set(id, { [flag.key]: to }, ctx.actor);
      ui.flash("success", `${flag.label} is now ${onOff(to)} for "${org.name}".`);
    } catch (e) {
      ui.flash("error", describeError(e));
    }
  }
}

/** `--domain`'s check, for the prompt: empty is allowed (it clears the domain). */
function domainProblem(value: string): string | undefined {
  if (value === "") return undefined;
  const parsed = parseOrgDomain(value);
  return "problem" in parsed ? `Invalid domain: ${parsed.problem}` : undefined;
}

/** Sets, changes or clears the organisation's domain, after a confirmation; a change is announced on the ledger again. */
async function changeDomain(ctx: Ctx, org: Organisation): Promise<void> {
  const { ui, core } = ctx;
  const typed = await ui.text(
    org.domain === null ? `Domain of "${org.name}" (its DNS name, e.g. example.org)` : `Domain of "${org.name}" (now ${org.domain}; leave empty to clear it)`,
    domainProblem,
    org.domain === null ? "example.org" : undefined,
  );
  if (typed === BACK) return ui.flash("info", "Nothing changed.");
  const parsed = typed === "" ? { domain: null } : parseOrgDomain(typed);
  if ("problem" in parsed) return ui.flash("error", `Invalid domain: ${parsed.problem}`); // the prompt refused it already
  const domain = parsed.domain;
  if (domain === org.domain) return ui.flash("info", "Nothing changed.");
  const what = domain === null ? `Clear the domain of "${org.name}" (now ${org.domain})?` : `Set the domain of "${org.name}" to ${domain}?`;
  const ok = await ui.confirm(`${what} Its key is announced again on the ledger${domain === null ? ", without one" : ", with it"}.`, domain !== null);
  if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
  try {
    await core.organisations.set(org.id, { domain }, ctx.actor);
    ui.flash("success", domain === null ? `"${org.name}" has no domain now.` : `The domain of "${org.name}" is now ${domain}.`);
  } catch (e) {
    ui.flash("error", describeError(e));
  }
}
