/**
 * What an engine's drivers give (types only): each capability's ports over one store. Each engine
 * implements it once (storage/sqlite/drivers.ts, storage/postgres/drivers.ts), and the
 * composition (src/app/) asks the one for its store's engine, so a service never learns which
 * engine it runs on and the embedded appliance never loads the other engine's code.
 */
import type { AdminReads } from "../admin/ports.ts";
import type { Journal, JournalRules } from "../anchoring/journal/ports.ts";
import type { LoopStorage } from "../anchoring/loop/ports.ts";
import type { CredentialReads } from "../keys/ports.ts";
import type { ReceiptSource } from "../receipts/ports.ts";
import type { RecordPorts } from "../records/ports.ts";
import type { LogStore } from "../verification/log/ports.ts";
import type { VerificationReads } from "../verification/ports.ts";

export interface EngineDrivers {
  readonly verification: () => { readonly reads: VerificationReads };
  /** The verification log's storage (on SQLite, written by a thread of its own when `writerThread` names the database). */
  readonly log: (options?: { readonly writerThread?: { readonly path: string } }) => { readonly log: LogStore };
  readonly records: () => RecordPorts;
  readonly receipts: () => { readonly reads: ReceiptSource };
  readonly keys: () => { readonly credentials: CredentialReads };
  readonly admin: () => { readonly reads: AdminReads };
  readonly anchoring: () => { readonly loop: LoopStorage };
  /** The anchor journal, once the loop gives its rules (its clock and transaction ids). */
  readonly journal: () => { journal(rules: JournalRules): Journal };
}
