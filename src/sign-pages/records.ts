/**
 * The signing page's list of the person's records (GET /app/records, newest first) with each
 * one's state in words, and revocation: a Revoke button on each final, unrevoked record opens a
 * modal dialog that says what revoking means, asks for a reason, and only then POSTs
 * /app/records/{id}/revoke. Focus goes to the dialog's reason, back to the button on cancel, and
 * to the list's heading once revoked (the button is gone by then).
 */
import { call, type AppRecord } from "./api.ts";
import { byId, el, type DomControl, type DomDialog, type DomElement, type DomLink } from "./dom.ts";
import { markBusy, say } from "./status.ts";
import { humanTime } from "../verifier/human-time.ts";
import { reasonLabel, recordStateWords, REVOKE_REASONS, type Step } from "./words.ts";

export interface RecordsListDeps {
  readonly status: DomElement;
  /** Shows a failure at `step` (and signs out on a lost session). */
  fail(error: unknown, step: Step): void;
  /** The page's busy flag, shared with signing: one step at a time. */
  isBusy(): boolean;
  setBusy(busy: boolean): void;
  isSignedIn(): boolean;
}

/** After a change, the list reloads every 3 s while a record awaits the ledger, this many times (2 minutes). */
const REFRESHES_AFTER_CHANGE = 40;
const REFRESH_MS = 3000;

export function recordsList(deps: RecordsListDeps) {
  const title = byId("records-title");
  const empty = byId("records-empty");
  const table = byId("records");
  const body = byId("records-body");
  const dialog = byId<DomDialog>("revoke-dialog");
  const what = byId("revoke-what");
  const reasonSelect = byId<DomControl>("revoke-reason");
  const confirm = byId<DomControl>("revoke-confirm");
  const cancel = byId<DomControl>("revoke-cancel");

  let revoking: AppRecord | null = null;
  let refreshTimer: ReturnType<typeof setTimeout> | null = null;
  let refreshesLeft = 0;

  function stop(): void {
    if (refreshTimer !== null) clearTimeout(refreshTimer);
    refreshTimer = null;
  }

  /** Loads the list; `afterChange` starts the reloading while a record awaits the ledger. */
  async function load(afterChange = false): Promise<void> {
    stop();
    if (afterChange) refreshesLeft = REFRESHES_AFTER_CHANGE;
    let records: AppRecord[];
    try {
      ({ records } = await call<{ records: AppRecord[] }>("GET", "/app/records"));
    } catch (e) {
      return deps.fail(e, "records");
    }
    render(records);
    const waiting = records.some((r) => r.revocation === null && (r.anchorState === "pending" || r.anchorState === "accepted"));
    if (waiting && refreshesLeft > 0 && deps.isSignedIn()) {
      refreshesLeft--;
      refreshTimer = setTimeout(() => void load(), REFRESH_MS);
    }
  }

  function render(records: AppRecord[]): void {
    empty.hidden = records.length > 0;
    table.hidden = records.length === 0;
    body.replaceChildren(...records.map(row));
  }

  function row(r: AppRecord): DomElement {
    // Roles said outright: on a phone the table is laid out as stacked rows (person-pages.ts's
    // style), and cells no longer laid out as cells can lose their table semantics.
    const tr = el("tr");
    tr.setAttribute("role", "row");
    const name = r.filename ?? "(no file name)";
    const docCell = el("td");
    docCell.append(el("bdi", name));
    const time = el("time", humanTime(r.authenticatedAt));
    time.setAttribute("datetime", r.authenticatedAt);
    time.setAttribute("title", r.authenticatedAt);
    const timeCell = el("td");
    timeCell.append(time);
    const stateCell = el("td", recordStateWords(r.anchorState, r.revocation));
    stateCell.setAttribute("data-state", r.revocation !== null ? "revoked" : r.anchorState);
    const actions = el("td");
    // On a phone each cell stands on its own line, named by its column (person-pages.ts's style).
    timeCell.setAttribute("data-label", "Signed");
    stateCell.setAttribute("data-label", "State");
    for (const cell of [docCell, timeCell, stateCell, actions]) cell.setAttribute("role", "cell");
    // Each link and button names its document for a screen reader's list of links and buttons.
    const link = el<DomLink>("a", "Verify page");
    link.href = r.verifyUrl;
    link.append(el("span", ` of ${name}`, "vh"));
    actions.append(link);
    // Only a final record can be revoked (the service answers ANCHOR_NOT_FINAL before that).
    if (r.revocation === null && r.anchorState === "anchored") {
      const revoke = el<DomControl>("button", "Revoke", "secondary");
      revoke.setAttribute("type", "button");
      revoke.append(el("span", ` my signature of ${name}`, "vh"));
      revoke.addEventListener("click", () => ask(r));
      actions.append(" ", revoke);
    }
    tr.append(docCell, timeCell, stateCell, actions);
    return tr;
  }

  function ask(r: AppRecord): void {
    if (deps.isBusy()) return;
    revoking = r;
    what.textContent =
      `“${r.filename ?? "(no file name)"}”, signed ${humanTime(r.authenticatedAt)}. ` +
      "Anyone who verifies this document will be told that your signature was revoked and no longer counts. This cannot be undone.";
    reasonSelect.value = REVOKE_REASONS[0]!.code;
    dialog.showModal();
    reasonSelect.focus();
  }

  async function revoke(): Promise<void> {
    const r = revoking;
    if (r === null || deps.isBusy()) return;
    deps.setBusy(true);
    markBusy(true, confirm);
    const reason = reasonSelect.value;
    try {
      say(deps.status, "Revoking your signature…");
      await call<{ recordId: string }>("POST", `/app/records/${encodeURIComponent(r.recordId)}/revoke`, { reason });
      dialog.close();
      // The list first, so that what the status says is what the list shows.
      await load();
      say(deps.status, `Your signature of “${r.filename ?? "(no file name)"}” is revoked (${reasonLabel(reason)}).`, "ok");
      title.focus();
    } catch (e) {
      dialog.close();
      deps.fail(e, "revoke");
      title.focus();
    } finally {
      revoking = null;
      deps.setBusy(false);
      markBusy(false, confirm);
    }
  }

  for (const { code, label } of REVOKE_REASONS) {
    const option = el<DomControl>("option", label);
    option.value = code;
    reasonSelect.append(option);
  }
  confirm.addEventListener("click", () => void revoke());
  cancel.addEventListener("click", () => {
    dialog.close();
    revoking = null;
  });

  return { load, stop };
}

