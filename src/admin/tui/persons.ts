/**
 * Persons (docs/admin.md "Persons"): list, add (the enrolment link shown once), suspend, a new
 * link (for an enrolled person a re-enrolment link, which replaces their key), their key shown with
 * its predecessor and any compromise, and a key declared compromised (key-screens.ts). Every change goes through the persons capability, which
 * writes the audit row in the same transaction. The link exists only in the screen that shows it,
 * as a minted API key does (keys.ts): never logged, never in a flash message, cleared once the
 * administrator says it is copied.
 */
import { validateOrgName } from "../../keys/organisations.ts";
import { createPersons, validateEmail, validateIdentityEvidence, type EnrolmentLink, type Person, type Persons } from "../../persons/persons.ts";
import { createPersonKeys } from "../../persons/person-keys.ts";
import { enrolmentBase, type EnrolmentBase } from "../enrolment-url.ts";
import { declarePersonKeyCompromised, keyLines } from "./key-screens.ts";
import { BACK, cut, describeError, time, validateWith, type Ctx } from "./ui.ts";

/** `publicUrl`: the base of enrolment links, asked for when one is made (serve may have started or stopped since the UI did). */
const personsOf = (ctx: Ctx, publicUrl = ctx.core.config.publicUrl): Persons => createPersons({ store: ctx.core.store, clock: ctx.core.clock, publicUrl });

function state(p: Person): string {
  return [p.enrolledAt === null ? "not enrolled" : "enrolled", ...(p.suspended ? ["SUSPENDED"] : [])].join(" · ");
}

export async function personsScreen(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    ui.screen("Persons");
    const list = await personsOf(ctx).list();
    const orgName = new Map((await core.organisations.list()).map((o) => [o.id, o.name]));
    if (list.length === 0) ui.info("No persons yet.");
    const choice = await ui.select("Choose a person, or add one", [
      { value: "+add", label: "+ Add a person" },
      ...list.map((p) => ({ value: p.id, label: `${cut(p.name, 30).padEnd(30)}  ${cut(orgName.get(p.orgId) ?? p.orgId, 24).padEnd(24)}  ${state(p)}`, hint: p.email })),
      { value: "+back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "+back") return;
    if (choice === "+add") await addPerson(ctx);
    else await personScreen(ctx, choice);
  }
}

async function addPerson(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  ui.screen("Persons › New");
  const orgs = await core.organisations.list();
  if (orgs.length === 0) return ui.flash("info", "Create an organisation first: a person belongs to one.");
  const orgId = await ui.select(
    "Organisation the person signs for",
    orgs.map((o) => ({ value: o.id, label: cut(o.name, 60), hint: o.id })),
  );
  if (orgId === BACK) return ui.flash("info", "Nothing added.");
  const name = await ui.text("Name (shown to anyone verifying what they sign)", validateWith(validateOrgName), "Alice Example");
  if (name === BACK) return ui.flash("info", "Nothing added.");
  const email = await ui.text("Email address", validateWith(validateEmail), "alice@example.org");
  if (email === BACK) return ui.flash("info", "Nothing added.");
  const identity = await ui.text("How was their identity verified? Document type and reference, never the document", validateWith(validateIdentityEvidence), "Passport, number ending 4821, seen in person");
  if (identity === BACK) return ui.flash("info", "Nothing added.");
  const ok = await ui.confirm(`Add "${validateOrgName(name)}" <${email}> to "${orgs.find((o) => o.id === orgId)!.name}"?`, true);
  if (ok === BACK || !ok) return ui.flash("info", "Nothing added.");
  let added: { person: Person; link: EnrolmentLink };
  const base = enrolmentBase(core.config);
  try {
    added = await personsOf(ctx, base.url).add({ orgId, name, email, identity }, ctx.actor);
  } catch (e) {
    return ui.flash("error", describeError(e));
  }
  await showLink(ctx, added.person, added.link, base, "Added");
}

async function showLink(ctx: Ctx, person: Person, link: EnrolmentLink, base: EnrolmentBase, verb: string): Promise<void> {
  const { ui } = ctx;
  ui.screen("Persons › Enrolment link");
  ui.warn(`This link is shown ONCE. Send it to ${person.name} alone: it works once, until ${time(link.expiresAt)}.\nIf it is lost, issue a new link from the person's screen.`);
  if (base.notice !== null) ui.warn(base.notice);
  ui.note(link.enrolUrl, "Enrolment link, copy it now");
  await ui.select("When you have copied the link:", [{ value: "done", label: "I have copied the link, clear it from the screen" }]);
  ui.flash("success", `${verb} "${person.name}". The link is no longer on the screen.`);
}

async function personScreen(ctx: Ctx, id: string): Promise<void> {
  const { ui } = ctx;
  for (;;) {
    let p: Person;
    try {
      p = await personsOf(ctx).get(id);
    } catch (e) {
      return ui.flash("error", describeError(e));
    }
    const keys = await createPersonKeys({ store: ctx.core.store, clock: ctx.core.clock }).keys(id);
    ui.screen(`Persons › ${cut(p.name, 40)}`);
    ui.note(
      [
        `id            ${p.id}`,
        `name          ${p.name}`,
        `email         ${p.email}`,
        `organisation  ${p.orgId}`,
        `identity      ${p.identityEvidence}`,
        `created       ${time(p.createdAt)}`,
        `enrolled      ${time(p.enrolledAt)}`,
        `suspended     ${p.suspended ? "yes" : "no"}`,
        ...keyLines(keys),
      ].join("\n"),
      p.name,
    );
    const choice = await ui.select("What now?", [
      ...(p.suspended
        ? []
        : [
            p.enrolledAt === null
              ? { value: "link", label: "New enrolment link", hint: "older unused links stop working" }
              : { value: "link", label: "Re-enrolment link", hint: "a new passkey and key replace theirs when they use it" },
          ]),
      ...(keys.some((k) => k.compromise === null) ? [{ value: "compromised", label: "Declare their key compromised", hint: "what it signed since a time you give verifies as revoked" }] : []),
      ...(!p.suspended ? [{ value: "suspend", label: "Suspend this person", hint: "cannot enrol or sign; their records verify as suspended" }] : []),
      { value: "+back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "+back") return;
    if (choice === "compromised") {
      await declarePersonKeyCompromised(ctx, p, keys);
      continue;
    }
    if (choice === "link") {
      try {
        const base = enrolmentBase(ctx.core.config);
        const link = await personsOf(ctx, base.url).issueLink(id, ctx.actor);
        await showLink(ctx, p, link, base, "New link for");
      } catch (e) {
        ui.flash("error", describeError(e));
      }
      continue;
    }
    const ok = await ui.confirm(`Suspend "${p.name}"? They cannot enrol or sign, and verifications of their records report signerStanding suspended.`, false);
    if (ok === BACK || !ok) {
      ui.flash("info", "Nothing changed.");
      continue;
    }
    try {
      await personsOf(ctx).suspend(id, ctx.actor);
      ui.flash("success", `"${p.name}" is suspended.`);
    } catch (e) {
      ui.flash("error", describeError(e));
    }
  }
}
