/**
 * Find a record by its id or by document hash, and show its anchor (state, topic, transaction,
 * sequence, consensus; attempts and last error while unfinished) and its revocation.
 */
import { findRecords, parseRecordQuery, type LedgerTx, type RecordView } from "./queries.ts";
import { BACK, consensusTime, time, type Ctx } from "./ui.ts";

const SHOWN = 5;

function ledgerLine(tx: LedgerTx | null): string {
  if (tx === null) return "-";
  // A batch: its message carries this record with the others of its window.
  const parts = tx.batch === null ? [tx.state] : [`${tx.state === "open" ? "open batch, taking records" : tx.state}`, `batch ${tx.batch.sequence ?? "(not closed yet)"} of ${tx.batch.size} record(s) and revocation(s)`];
  if (tx.sequenceNumber !== null) parts.push(`sequence ${tx.sequenceNumber}`);
  if (tx.consensusAt !== null) parts.push(`consensus ${consensusTime(tx.consensusAt)}`);
  if (tx.state !== "anchored") parts.push(`${tx.attempts} attempt(s)`);
  if (tx.lastError !== null && tx.state !== "anchored") parts.push(`last error: ${tx.lastError}`);
  return parts.join(", ");
}

function describe(r: RecordView): string {
  const lines = [
    `record        ${r.id}`,
    r.signerType === "org" ? `organisation  ${r.orgName ?? "?"} (${r.orgId ?? "-"})` : `signer        ${r.signerHint ?? "a person"}${r.orgName !== null ? `, within ${r.orgName}` : ""}`,
    `kind          ${r.kind} (signed by ${r.signerType === "org" ? "the organisation" : "a person"})`,
    `document      ${r.docHash}`,
    `filename      ${r.filename ?? "-"}`,
    `signed at     ${time(r.signedAtMs)}`,
    `anchor state  ${r.anchorState}`,
    `topic         ${r.topicId}`,
    `transaction   ${r.transactionId}`,
    `sequence      ${r.sequenceNumber ?? "-"}`,
    `consensus     ${consensusTime(r.consensusAt)}`,
  ];
  if (r.anchorState !== "anchored" && r.anchorTx !== null) lines.push(`ledger queue  ${ledgerLine(r.anchorTx)}`);
  if (r.revocation === null) {
    lines.push("revocation    none");
  } else {
    lines.push(`revocation    REVOKED ${time(r.revocation.revokedAt)}, reason ${r.revocation.reason ?? "UNSPECIFIED"}`);
    lines.push(`  message     ${r.revocation.transactionId ?? "-"}: ${ledgerLine(r.revocation.tx)}`);
  }
  return lines.join("\n");
}

export async function recordsScreen(ctx: Ctx): Promise<void> {
  const { ui, core } = ctx;
  for (;;) {
    ui.screen("Find a record");
    const input = await ui.text("Record id or document hash", (v) => {
      const q = parseRecordQuery(v);
      return typeof q === "string" ? q : undefined;
    }, "sha256:… or a record id");
    if (input === BACK) return;
    const q = parseRecordQuery(input);
    if (typeof q === "string") continue; // validated above
    const found = await findRecords(core.admin, q);
    if (found.length === 0) {
      ui.flash("warn", q.by === "id" ? `No record with id ${q.id}.` : `No record for ${q.docHash}.`);
      continue;
    }
    ui.screen("Find a record › Result");
    if (found.length > 1) ui.info(`${found.length} records for this hash, newest first${found.length > SHOWN ? ` (the first ${SHOWN} shown)` : ""}.`);
    for (const r of found.slice(0, SHOWN)) ui.note(describe(r), r.revocation !== null ? "Record (revoked)" : `Record (${r.anchorState})`);
    const next = await ui.select("What now?", [
      { value: "again", label: "Find another record" },
      { value: "back", label: "← Back" },
    ]);
    if (next === BACK || next === "back") return;
  }
}
