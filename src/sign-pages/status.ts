/**
 * The pages' status region: one `role="status"` element per page (polite live region), so a
 * screen reader reads each step as it happens; the class colours problems and successes.
 */
import type { DomElement } from "./dom.ts";

export function say(region: DomElement, text: string, kind: "" | "ok" | "error" = ""): void {
  region.textContent = text;
  region.className = kind;
}

/** Browsers offer passkeys only on https or on this computer (localhost). */
export function insecureContextMessage(): string {
  return "Passkeys only work when this page is opened over a secure (https) connection. Ask your administrator for the https address of this service.";
}

/**
 * Marks controls busy while a step runs. Not `disabled`: disabling the focused button would drop
 * keyboard focus to the page's start; `aria-disabled` keeps it where it was, and tells assistive
 * technology the control does nothing for now. The handlers check their own busy flag.
 */
export function markBusy(busy: boolean, ...controls: DomElement[]): void {
  for (const c of controls) {
    if (busy) c.setAttribute("aria-disabled", "true");
    else c.removeAttribute("aria-disabled");
  }
}
