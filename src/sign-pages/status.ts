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
