/**
 * The anchor queue and the ledger's health: `docverify status`'s own report, shown in the UI.
 * It probes the ledger (up to a couple of seconds when it does not answer), so the screen says
 * so before it asks.
 */
import { runStatus } from "../status.ts";
import { BACK, describeError, type Ctx } from "./ui.ts";

/** Runs `status` and returns its text; what it would print on stderr (its log lines) is caught, never drawn over the screen. */
async function statusText(ctx: Ctx): Promise<{ text: string; warnings: string[] }> {
  let text = "";
  const warnings: string[] = [];
  const stderr = process.stderr;
  const write = stderr.write;
  stderr.write = ((chunk: string | Uint8Array) => {
    const s = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    for (const line of s.split("\n").filter((l) => l.trim() !== "")) {
      try {
        warnings.push(String((JSON.parse(line) as { msg?: unknown }).msg ?? line));
      } catch {
        warnings.push(line);
      }
    }
    return true;
  }) as typeof stderr.write;
  try {
    await runStatus(["--data", ctx.core.config.dataDir], ctx.env, { write: (s) => (text += s) });
  } finally {
    stderr.write = write;
  }
  return { text, warnings };
}

export async function queueScreen(ctx: Ctx): Promise<void> {
  const { ui } = ctx;
  for (;;) {
    ui.screen("Anchor queue and ledger");
    ui.info("Asking the ledger…");
    try {
      const { text, warnings } = await statusText(ctx);
      for (const w of warnings) ui.warn(w);
      ui.note(text.trimEnd(), "Status");
    } catch (e) {
      ui.flash("error", describeError(e));
    }
    const next = await ui.select("What now?", [
      { value: "refresh", label: "Refresh" },
      { value: "back", label: "← Back" },
    ]);
    if (next === BACK || next === "back") return;
  }
}
