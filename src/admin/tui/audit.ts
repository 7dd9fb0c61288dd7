/**
 * The audit trail, newest first, a page at a time; choosing an entry shows what it changed.
 */
import { keyPrefix, type Environment } from "../../keys/api-key.ts";
import { auditChanges, auditPage, type AuditRow } from "./queries.ts";
import { BACK, cut, time, type Ctx } from "./ui.ts";

const PAGE = 12;

/** The subject as a person knows it: the organisation's or person's name, or the key's prefix. */
function subject(e: AuditRow): string {
  const v = (e.after ?? e.before ?? {}) as { name?: unknown; environment?: unknown; keyId?: unknown };
  if (e.subjectType === "organisation" && typeof v.name === "string") return v.name;
  if (e.subjectType === "person" && typeof v.name === "string") return v.name;
  if (e.subjectType === "api_key" && typeof v.environment === "string") return keyPrefix({ environment: v.environment as Environment, keyId: e.subjectId });
  return e.subjectId;
}

export async function auditScreen(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  // Page starts: the id every entry on a page is below (null: the newest). Older pages push.
  const starts: (number | null)[] = [null];
  for (;;) {
    const page = await auditPage(core.admin, starts.at(-1)!, PAGE);
    ui.screen(`Audit trail › page ${starts.length}`);
    if (page.entries.length === 0) ui.info("No entries yet.");
    else ui.message("time (UTC), action, subject, who");
    const choice = await ui.select("Newest first; choose an entry to see what it changed", [
      ...page.entries.map((e) => ({ value: `#${e.id}`, label: `${time(e.at)}  ${e.action.padEnd(19)}  ${cut(subject(e), 24).padEnd(24)}  ${e.actor}` })),
      ...(page.more ? [{ value: "older", label: "Older entries →" }] : []),
      ...(starts.length > 1 ? [{ value: "newer", label: "← Newer entries" }] : []),
      { value: "back", label: "← Back" },
    ]);
    if (choice === BACK || choice === "back") return;
    if (choice === "older") {
      starts.push(page.entries.at(-1)!.id);
      continue;
    }
    if (choice === "newer") {
      starts.pop();
      continue;
    }
    const entry = page.entries.find((e) => `#${e.id}` === choice)!;
    ui.screen(`Audit trail › entry ${entry.id}`);
    ui.note(
      [
        `when     ${time(entry.at)}`,
        `who      ${entry.actor}`,
        `action   ${entry.action}`,
        `subject  ${entry.subjectType} ${entry.subjectId} (${subject(entry)})`,
        `changes  ${auditChanges(entry.before, entry.after).join("\n         ") || "-"}`,
      ].join("\n"),
      `Audit entry ${entry.id}`,
    );
    await ui.select("What now?", [{ value: "back", label: "← Back to the list" }]);
  }
}
