/**
 * The key lifecycle in the terminal UI (docs/admin.md "Screens"): an
 * organisation's system key and a person's key shown with their predecessor and any declared
 * compromise; an organisation's key rotated; a key declared compromised from a time asked for.
 * Every change goes through the capability (keys/org-keys.ts, persons/person-keys.ts), which
 * refuses what it must and writes the audit row in the same transaction; a refusal is shown as
 * it is, and nothing changes when the person cancels.
 */
import type { KeyInfo } from "../../keys/org-keys.ts";
import type { Organisation } from "../../keys/organisations.ts";
import { rfc3339Ms } from "../../lib/formats.ts";
import { createPersonKeys } from "../../persons/person-keys.ts";
import type { Person } from "../../persons/persons.ts";
import { BACK, describeError, time, type Ctx } from "./ui.ts";

/** The note lines of a holder's keys: the current one, what it replaced, and every declared compromise. */
export function keyLines(keys: readonly KeyInfo[]): string[] {
  const current = keys.find((k) => k.retiredAt === null) ?? keys[0];
  if (current === undefined) return ["key           -"];
  const compromised = keys.filter((k) => k.compromise !== null);
  return [
    `key           ${current.fingerprint}`,
    `replaces      ${current.replaces ?? "-"}`,
    ...(compromised.length === 0
      ? ["compromised   none declared"]
      : compromised.map((k, i) => `${i === 0 ? "compromised" : "".padEnd(11)}   ${k.fingerprint.slice(0, 16)}… since ${time(k.compromise!.sinceMs)} (declared ${time(k.compromise!.at)})`)),
  ];
}

const SINCE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

/** A compromise's `since` typed by the administrator: an RFC 3339 time with its offset, not in the future. The reason it is refused, or undefined. */
export function sinceProblem(value: string, now: number): string | undefined {
  const ms = SINCE_RE.test(value.trim()) ? Date.parse(value.trim()) : NaN;
  if (!Number.isFinite(ms) || ms < 0) return "Not a time: give an RFC 3339 time with its offset, such as 2026-12-01T10:00:00Z";
  if (ms > now) return `${rfc3339Ms(ms)} is in the future: a compromise is declared for what has been signed`;
  return undefined;
}

/** Asks for `since` (refused ones are named and asked again); BACK on Escape. */
async function askSince(ctx: Ctx, whose: string): Promise<number | typeof BACK> {
  const typed = await ctx.ui.text(`Compromised since (RFC 3339, such as 2026-12-01T10:00:00Z): every record ${whose} key signed from then on is revoked`, (v) =>
    sinceProblem(v, ctx.core.clock.now()),
  );
  return typed === BACK ? BACK : Date.parse(typed.trim());
}

/** Chooses one of the keys not yet declared compromised, the current one first; BACK on Escape or when there is none. */
async function chooseKey(ctx: Ctx, keys: readonly KeyInfo[]): Promise<KeyInfo | typeof BACK> {
  const open = keys.filter((k) => k.compromise === null);
  if (open.length === 0) {
    ctx.ui.flash("info", "Every key was declared compromised already. Nothing changed.");
    return BACK;
  }
  const choice = await ctx.ui.select(
    "Which key?",
    open.map((k) => ({ value: k.fingerprint, label: `${k.fingerprint.slice(0, 16)}…  ${k.retiredAt === null ? "current" : `replaced ${time(k.retiredAt)}`}`, hint: `created ${time(k.createdAt)}` })),
  );
  if (choice === BACK) {
    ctx.ui.flash("info", "Nothing changed.");
    return BACK;
  }
  return open.find((k) => k.fingerprint === choice)!;
}

/** Rotates the organisation's system key after a confirmation. */
export async function rotateOrgKey(ctx: Ctx, org: Organisation): Promise<void> {
  const { ui, core } = ctx;
  const ok = await ui.confirm(
    `Give "${org.name}" a new system key? It signs its records from now on; it is announced on the ledger, naming the old one, once the old key's records are anchored.`,
    false,
  );
  if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
  try {
    const r = await core.organisations.rotateKey(org.id, ctx.actor);
    ui.flash("success", `"${org.name}" has a new key ${r.keyFingerprint.slice(0, 16)}…, replacing ${r.replaces.slice(0, 16)}….`);
  } catch (e) {
    ui.flash("error", describeError(e));
  }
}

/** Declares one of the organisation's keys compromised from a time asked for; the current one is rotated in the same change. */
export async function declareOrgKeyCompromised(ctx: Ctx, org: Organisation): Promise<void> {
  const { ui, core } = ctx;
  const key = await chooseKey(ctx, await core.organisations.keys(org.id));
  if (key === BACK) return;
  const sinceMs = await askSince(ctx, `"${org.name}"'s`);
  if (sinceMs === BACK) return ui.flash("info", "Nothing changed.");
  const rotates = key.retiredAt === null ? " The organisation gets a new key in the same change." : "";
  const ok = await ui.confirm(`Declare key ${key.fingerprint.slice(0, 16)}… of "${org.name}" compromised since ${time(sinceMs)}? What it signed from then on verifies as revoked (KEY_COMPROMISE).${rotates}`, false);
  if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
  try {
    const c = await core.organisations.declareKeyCompromised(org.id, { sinceMs, keyFingerprint: Buffer.from(key.fingerprint, "hex") }, ctx.actor);
    ui.flash("success", `Key ${c.keyFingerprint.slice(0, 16)}… is declared compromised since ${time(c.sinceMs)}.${c.rotation === null ? "" : ` New key ${c.rotation.keyFingerprint.slice(0, 16)}….`}`);
  } catch (e) {
    ui.flash("error", describeError(e));
  }
}

/** Declares one of the person's keys compromised from a time asked for. */
export async function declarePersonKeyCompromised(ctx: Ctx, person: Person, keys: readonly KeyInfo[]): Promise<void> {
  const { ui, core } = ctx;
  const key = await chooseKey(ctx, keys);
  if (key === BACK) return;
  const sinceMs = await askSince(ctx, `${person.name}'s`);
  if (sinceMs === BACK) return ui.flash("info", "Nothing changed.");
  const ok = await ui.confirm(
    `Declare key ${key.fingerprint.slice(0, 16)}… of "${person.name}" compromised since ${time(sinceMs)}? What it signed from then on verifies as revoked (KEY_COMPROMISE); it signs nothing more until they re-enrol.`,
    false,
  );
  if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
  try {
    const c = await createPersonKeys({ store: core.store, clock: core.clock }).declareKeyCompromised(person.id, { sinceMs, keyFingerprint: Buffer.from(key.fingerprint, "hex") }, ctx.actor);
    ui.flash("success", `Key ${c.keyFingerprint.slice(0, 16)}… of "${person.name}" is declared compromised since ${time(c.sinceMs)}. Issue a re-enrolment link for a new key.`);
  } catch (e) {
    ui.flash("error", describeError(e));
  }
}
