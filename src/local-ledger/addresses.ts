/**
 * Where a local ledger can be found: the address it remembers in its folder, and the URL of a
 * transaction's page on its mirror. A module of its own, importing neither protobuf nor gRPC, so
 * that the product's commands that only read these (status, links) do not load the ledger.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Where a ledger started on remembered ports (remembered.ts) keeps them, inside its folder. */
export const PORTS_FILE = "ports.json";

/** A ledger's remembered address (`<ledger folder>/ports.json`). */
export interface RememberedAddress {
  readonly host: string;
  readonly grpcPort: number;
  readonly mirrorPort: number;
}

/** The address remembered in ledger folder `dir`, or null when there is none or it is unreadable. */
export function readRememberedAddress(dir: string): RememberedAddress | null {
  const file = join(dir, PORTS_FILE);
  if (!existsSync(file)) return null;
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<RememberedAddress>;
    const port = (p: unknown) => typeof p === "number" && Number.isInteger(p) && p > 0 && p < 65536;
    if (typeof v.host === "string" && port(v.grpcPort) && port(v.mirrorPort)) return { host: v.host, grpcPort: v.grpcPort!, mirrorPort: v.mirrorPort! };
  } catch {
    /* unreadable: choose again */
  }
  return null;
}

/** The local ledger's own page of a transaction (its mirror serves it). */
export function transactionPageUrl(mirrorUrl: string, transactionId: string): string {
  return `${mirrorUrl.replace(/\/+$/, "")}/transaction/${encodeURIComponent(transactionId)}`;
}
