/**
 * API keys: mint (the key shown once, with an expiry if wanted), list (expired keys marked),
 * revoke. The full key exists only in the screen
 * that shows it: it is never logged, never written to a file, never put in a flash message,
 * and the screen is cleared once the person says it is copied (the UI runs on the alternate
 * screen, so it does not reach the terminal's scrollback either).
 */
import type { Environment } from "../../keys/api-key.ts";
import { isExpired, parseExpiry, scopesAtMinting, type ApiKeyInfo } from "../../keys/api-keys.ts";
import type { Organisation } from "../../keys/organisations.ts";
import { BACK, cut, describeError, time, validateWith, type Ctx } from "./ui.ts";

const SHORT_SCOPE: Record<string, string> = { "verifications:read": "read", "records:write": "write", "records:revoke": "revoke" };

function keyLabel(k: ApiKeyInfo, orgName: string, now: number): string {
  const scopes = k.scopes.map((s) => SHORT_SCOPE[s] ?? s).join(",");
  const used = k.lastUsedAt !== null ? `used ${minute(k.lastUsedAt)}` : "never used";
  const state =
    k.revokedAt !== null ? `REVOKED ${minute(k.revokedAt)}`
    : isExpired(k, now) ? `EXPIRED ${minute(k.expiresAt!)}`
    : k.expiresAt !== null ? `${used}, expires ${minute(k.expiresAt)}`
    : used;
  return `${k.prefix}  ${cut(orgName, 18).padEnd(18)}  ${scopes.padEnd(17)}  ${state}`;
}

/** A key's expiry as the UI shows it. */
const expiry = (k: ApiKeyInfo, now: number) => (k.expiresAt === null ? "never" : `${time(k.expiresAt)}${isExpired(k, now) ? " (EXPIRED: the key is refused)" : ""}`);

const minute = (ms: number) => time(ms).slice(0, 16);

/** Every key (or one organisation's), newest first; choosing one shows it and offers revocation. */
export async function keysScreen(ctx: Ctx, orgId?: string): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    const names = new Map((await core.organisations.list()).map((o) => [o.id, o.name]));
    const keys = (await core.apiKeys.list(orgId === undefined ? {} : { orgId })).reverse();
    ui.screen(orgId === undefined ? "API keys" : `API keys › ${cut(names.get(orgId) ?? orgId, 40)}`);
    const now = core.clock.now();
    if (keys.length === 0) ui.info("No keys yet.");
    else ui.message(`${keys.length} key(s): prefix (with environment), organisation, scopes, last used and expiry, or revoked or expired (UTC)`);
    const choice = await ui.select("Choose a key to see or revoke it, or mint one", [
      { value: "+mint", label: "+ Mint a key" },
      ...keys.map((k) => ({ value: k.keyId, label: keyLabel(k, names.get(k.orgId) ?? k.orgId, now), hint: `${k.environment}; ${k.scopes.join(" ")}; created ${time(k.createdAt)}` })),
      { value: "+back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "+back") return;
    if (choice === "+mint") {
      await mintKey(ctx, orgId);
      continue;
    }
    const key = keys.find((k) => k.keyId === choice)!;
    await keyScreen(ctx, key, names.get(key.orgId) ?? key.orgId);
  }
}

async function keyScreen(ctx: Ctx, k: ApiKeyInfo, orgName: string): Promise<void> {
  const { ui, core } = ctx;
  ui.screen(`API keys › ${k.prefix}`);
  ui.note(
    [
      `key          ${k.prefix}… (the secret is not stored and cannot be shown)`,
      `organisation ${orgName} (${k.orgId})`,
      `environment  ${k.environment}`,
      `scopes       ${k.scopes.join(" ")}`,
      `created      ${time(k.createdAt)}`,
      `last used    ${time(k.lastUsedAt)}`,
      `revoked      ${time(k.revokedAt)}`,
      `expires      ${expiry(k, core.clock.now())}`,
    ].join("\n"),
    k.prefix,
  );
  const choice = await ui.select("What now?", [...(k.revokedAt === null ? [{ value: "revoke", label: "Revoke this key" }] : []), { value: "back", label: "← Back" }]);
  if (choice !== "revoke") return;
  const ok = await ui.confirm(`Revoke ${k.prefix} of "${orgName}"? Every request with it is refused from now on; this cannot be undone.`, false);
  if (ok === BACK || !ok) return ui.flash("info", "Nothing changed.");
  try {
    await core.apiKeys.revoke(k.keyId, ctx.actor);
    ui.flash("success", `Revoked ${k.prefix} of "${orgName}".`);
  } catch (e) {
    ui.flash("error", describeError(e));
  }
}

/**
 * Asks for the organisation (unless given), the environment, the revoke scope and the expiry,
 * then mints and shows the key once.
 */
export async function mintKey(ctx: Ctx, orgId?: string): Promise<void> {
  const { ui, core } = ctx;
  ui.screen("API keys › Mint");
  let org: Organisation;
  if (orgId === undefined) {
    const orgs = await core.organisations.list();
    if (orgs.length === 0) return ui.flash("warn", "There is no organisation yet: create one first (Organisations).");
    const chosen = await ui.select(
      "For which organisation?",
      orgs.map((o) => ({ value: o.id, label: cut(o.name, 60), hint: `${o.addon ? "add-on" : "no add-on"}, API access ${o.apiAccess ? "on" : "off"}` })),
    );
    if (chosen === BACK) return ui.flash("info", "No key minted.");
    org = orgs.find((o) => o.id === chosen)!;
  } else {
    try {
      org = await core.organisations.get(orgId);
    } catch (e) {
      return ui.flash("error", describeError(e));
    }
  }
  const environment = await ui.select<Environment>(`Environment of the key for "${org.name}"`, [
    { value: "live", label: "live", hint: org.addon ? "verifications:read and records:write" : "verifications:read (records:write needs the add-on)" },
    { value: "test", label: "test", hint: "verifications:read only; record operations answer 403 TEST_ENVIRONMENT" },
  ]);
  if (environment === BACK) return ui.flash("info", "No key minted.");
  let revoke = false;
  if (environment === "live" && org.addon) {
    const r = await ui.confirm("Also grant records:revoke (lets the key revoke the organisation's records)?", false);
    if (r === BACK) return ui.flash("info", "No key minted.");
    revoke = r;
  }
  // Checked as `key mint --expires` checks it, against the clock when typed (the service checks again).
  const expires = await ui.text(
    "Expires (YYYY-MM-DD for that day's 00:00 UTC, or an RFC 3339 time such as 2027-01-31T17:00:00Z; empty: never)",
    (v) => (v === "" ? undefined : validateWith((text) => parseExpiry(text, core.clock.now()))(v)),
  );
  if (expires === BACK) return ui.flash("info", "No key minted.");
  // Its form was checked as typed; whether it is still in the future is the service's to say.
  const expiresAt = expires === "" ? null : parseExpiry(expires, Number.MIN_SAFE_INTEGER);
  const until = expiresAt === null ? "" : `, expiring ${time(expiresAt)}`;
  const scopes = scopesAtMinting(environment, org.addon, revoke);
  if (!org.apiAccess) ui.warn(`API access is off for "${org.name}": the key is refused (402) until it is turned on.`);
  const ok = await ui.confirm(`Mint a ${environment} key for "${org.name}" with ${scopes.join(" ")}${until}?`, true);
  if (ok === BACK || !ok) return ui.flash("info", "No key minted.");
  let minted;
  try {
    minted = await core.apiKeys.mint({ orgId: org.id, environment, revoke, expiresAt }, ctx.actor);
  } catch (e) {
    return ui.flash("error", describeError(e));
  }
  await showOnce(ctx, minted.key, `${minted.prefix} (${minted.environment}, ${minted.scopes.join(" ")}) for "${org.name}"${until}`);
}

/** The one screen that shows a key. Whatever the person presses, the screen is cleared after. */
async function showOnce(ctx: Ctx, key: string, what: string): Promise<void> {
  const { ui } = ctx;
  ui.screen("API keys › New key");
  ui.warn("This key is shown ONCE. Copy it now: it is not stored anywhere and cannot be shown again.\nIf it is lost, mint a new key and revoke this one.");
  ui.note(key, "New API key, copy it now");
  ui.message(what);
  await ui.select("When you have copied the key:", [{ value: "done", label: "I have copied the key, clear it from the screen" }]);
  ui.flash("success", `Minted ${what}. The key is no longer on the screen.`);
}
