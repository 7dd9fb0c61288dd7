/**
 * `docverify serve` as a process, with one validated organisation holding the add-on and a live
 * key of it, minted by the administrator's core on the same data folder (as `docverify key mint`
 * would). The organisation's topic is created by the service on its own: see topic.ts.
 */
import { openCore, type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import type { Organisation } from "../../src/keys/organisations.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { onCleanup, startService, tempDir, type ServiceProcess } from "./env.ts";

export interface ServiceWithOrg {
  readonly svc: ServiceProcess;
  readonly port: number;
  /** The core opened on the service's data folder, closed by cleanup(). */
  readonly admin: Core;
  readonly org: Organisation;
  /** A live key of `org`: records:write, and records:revoke when asked for. */
  readonly key: string;
}

export async function startServiceWithOrg(options: { env?: Record<string, string>; orgName?: string; revoke?: boolean } = {}): Promise<ServiceWithOrg> {
  const data = tempDir();
  const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, ...options.env } });
  const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  onCleanup(() => admin.close());
  const org = await admin.organisations.create({ name: options.orgName ?? "Test Ltd", apiAccess: true, addon: true, validated: true }, "test");
  const key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live", revoke: options.revoke ?? false }, "test")).key;
  return { svc, port: Number(new URL(svc.url).port), admin, org, key };
}
