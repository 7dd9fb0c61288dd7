/**
 * Where a local ledger can be found: the address it remembers in its folder, and the URL of a
 * transaction's page on its mirror. A module of its own, importing neither protobuf nor gRPC, so
 * that the product's commands that only read these (status, links) do not load the ledger.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Where a ledger started on remembered ports (remembered.ts) keeps them, inside its folder. */
export const PORTS_FILE = "ports.json";

/**
 * A ledger's remembered address (`<ledger folder>/ports.json`). `secondMirrorPort` is there once
 * the ledger has served a second mirror listener (the embedded one always does); files written
 * before that existed have none, and are read all the same.
 */
export interface RememberedAddress {
  readonly host: string;
  readonly grpcPort: number;
  readonly mirrorPort: number;
  readonly secondMirrorPort?: number;
}

/**
 * The address remembered in ledger folder `dir`, or null when there is none or it is unreadable.
 * A `secondMirrorPort` that is missing or not a port is left out (the rest still holds).
 */
export function readRememberedAddress(dir: string): RememberedAddress | null {
  const file = join(dir, PORTS_FILE);
  if (!existsSync(file)) return null;
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<Record<keyof RememberedAddress, unknown>> | null;
    const port = (p: unknown): p is number => typeof p === "number" && Number.isInteger(p) && p > 0 && p < 65536;
    if (v !== null && typeof v.host === "string" && port(v.grpcPort) && port(v.mirrorPort)) {
      const second = port(v.secondMirrorPort) && v.secondMirrorPort !== v.mirrorPort ? { secondMirrorPort: v.secondMirrorPort } : {};
      return { host: v.host, grpcPort: v.grpcPort, mirrorPort: v.mirrorPort, ...second };
    }
  } catch {
    /* unreadable: choose again */
  }
  return null;
}

/** The mirror base URLs of a remembered address: the first, then the second when there is one. */
export function rememberedMirrorUrls(address: RememberedAddress): string[] {
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return [address.mirrorPort, ...(address.secondMirrorPort !== undefined ? [address.secondMirrorPort] : [])].map((p) => `http://${host}:${p}`);
}

/** The local ledger's own page of a transaction (its mirror serves it). */
export function transactionPageUrl(mirrorUrl: string, transactionId: string): string {
  return `${mirrorUrl.replace(/\/+$/, "")}/transaction/${encodeURIComponent(transactionId)}`;
}
