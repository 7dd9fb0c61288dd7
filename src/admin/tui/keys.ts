/**
 * API keys: mint (the key shown once), list, revoke. The full key exists only in the screen
 * that shows it: it is never logged, never written to a file, never put in a flash message,
 * and the screen is cleared once the person says it is copied (the UI runs on the alternate
 * screen, so it does not reach the terminal's scrollback either).
 */
import type { Environment } from "../../keys/api-key.ts";
import { scopesAtMinting, type ApiKeyInfo } from "../../keys/api-keys.ts";
import type { Organisation } from "../../keys/organisations.ts";
import { BACK, cut, describeError, time, type Ctx } from "./ui.ts";

const SHORT_SCOPE: Record<string, string> = { "verifications:read": "read", "records:write": "write", "records:revoke": "revoke" };

function keyLabel(k: ApiKeyInfo, orgName: string): string {
  const scopes = k.scopes.map((s) => SHORT_SCOPE[s] ?? s).join(",");
  const state = k.revokedAt !== null ? `REVOKED ${minute(k.revokedAt)}` : k.lastUsedAt !== null ? `used ${minute(k.lastUsedAt)}` : "never used";
  return `${k.prefix}  ${cut(orgName, 18).padEnd(18)}  ${scopes.padEnd(17)}  ${state}`;
}

const minute = (ms: number) => time(ms).slice(0, 16);

/** Every key (or one organisation's), newest first; choosing one shows it and offers revocation. */
export async function keysScreen(ctx: Ctx, orgId?: string): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    const names = new Map((await core.organisations.list()).map((o) => [o.id, o.name]));
    const keys = (await core.apiKeys.list(orgId === undefined ? {} : { orgId })).reverse();
    ui.screen(orgId === undefined ? "API keys" : `API keys › ${cut(names.get(orgId) ?? orgId, 40)}`);
    if (keys.length === 0) ui.info("No keys yet.");
    else ui.message(`${keys.length} key(s): prefix (with environment), organisation, scopes, last used or revoked (UTC)`);
    const choice = await ui.select("Choose a key to see or revoke it, or mint one", [
      { value: "+mint", label: "+ Mint a key" },
      ...keys.map((k) => ({ value: k.keyId, label: keyLabel(k, names.get(k.orgId) ?? k.orgId), hint: `${k.environment}; ${k.scopes.join(" ")}; created ${time(k.createdAt)}` })),
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

/** Asks for the organisation (unless given), the environment and the revoke scope, then mints and shows the key once. */
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
  const scopes = scopesAtMinting(environment, org.addon, revoke);
  if (!org.apiAccess) ui.warn(`API access is off for "${org.name}": the key is refused (402) until it is turned on.`);
  const ok = await ui.confirm(`Mint a ${environment} key for "${org.name}" with ${scopes.join(" ")}?`, true);
  if (ok === BACK || !ok) return ui.flash("info", "No key minted.");
  let minted;
  try {
    minted = await core.apiKeys.mint({ orgId: org.id, environment, revoke }, ctx.actor);
  } catch (e) {
    return ui.flash("error", describeError(e));
  }
  await showOnce(ctx, minted.key, `${minted.prefix} (${minted.environment}, ${minted.scopes.join(" ")}) for "${org.name}"`);
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
