/**
 * `docverify serve`: the API on Bun.serve, with a drain on SIGTERM/SIGINT. The shutdown
 * order matters: stop taking requests (new ones on kept-alive connections get 503), let
 * in-flight ones finish within DRAIN_MS, then stop background loops and close storage, so
 * nothing acknowledged is cut off half-written.
 */
import { existsSync } from "node:fs";
import type { AppOptions, ServiceApp } from "./compose.ts";
import { createApp } from "./sqlite.ts";
import { ConfigError, type Config } from "../config/index.ts";
import type { AnyElysia } from "../http/server.ts";
import type { Logger } from "../lib/log.ts";
import { createNotifier } from "../lib/sd-notify.ts";
import { lockDataFolder, recordServeAddress } from "../storage/data-folder.ts";
import { VERSION, COMMIT } from "../version.ts";

/** Longest wait for in-flight requests at shutdown; the systemd unit's stop timeout is longer. */
export const DRAIN_MS = 10_000;

export interface Running {
  readonly app: ServiceApp;
  readonly url: string;
  readonly port: number;
  /**
   * The ledger starts after the listener is up (App.anchoringStarted). Resolves with null once it
   * is up ("ledger ready" logged, READY=1 sent), or, when it cannot start, with the reason, after
   * the failure is logged and the server drained and closed: the caller then exits non-zero.
   */
  readonly ledger: Promise<Error | null>;
  /** Drains and closes; resolves once everything is closed. Idempotent. */
  stop(): Promise<void>;
}

export interface ServerExtras {
  readonly plugins?: readonly AnyElysia[];
  /**
   * `$NOTIFY_SOCKET` as systemd set it (Type=notify): `READY=1` is sent once the listener is
   * up, storage migrated and the ledger started (the listener comes first: see `ledger`);
   * `STOPPING=1` when the drain begins.
   */
  readonly notifySocket?: string;
}

export async function startServer(config: Config, log: Logger, extra: ServerExtras = {}): Promise<Running> {
  let tls: { cert: ReturnType<typeof Bun.file>; key: ReturnType<typeof Bun.file> } | undefined;
  if (config.tls !== null) {
    for (const [setting, file] of [["DOCVERIFY_TLS_CERT_FILE", config.tls.certFile], ["DOCVERIFY_TLS_KEY_FILE", config.tls.keyFile]] as const) {
      if (!existsSync(file)) throw new ConfigError(setting, `file ${file} does not exist`);
    }
    tls = { cert: Bun.file(config.tls.certFile), key: Bun.file(config.tls.keyFile) };
  }

  // One serve per data folder, on every network (docs/operations.md "Administration on the
  // server"): taken before anything in the folder is opened, held until everything is closed;
  // the kernel drops it if the process dies.
  // With several nodes on PostgreSQL each node still has a data folder of its own (its master
  // key file, its logs).
  const lock = lockDataFolder(config.dataDir);

  // With no DOCVERIFY_PUBLIC_URL, verify links use the address actually bound (port 0 picks one).
  let publicUrl = config.publicUrl;
  let app: ServiceApp;
  try {
    app = await createService({ config, log, plugins: extra.plugins, publicUrl: () => publicUrl });
  } catch (e) {
    lock.release();
    throw e;
  }
  let inFlight = 0;
  let idle: (() => void) | null = null;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      development: false,
      // Two services on one port would split requests between two data folders: refuse instead.
      reusePort: false,
      // The runtime's own 413 is a bare response outside the envelope, the log and X-Request-Id:
      // its ceiling is set out of reach, and http/server.ts refuses any body declared over
      // MAX_REQUEST_BODY (1 MiB) itself. Routes read bodies under their own limits (4–8 KiB) and
      // stop a chunked one at its limit; a body nobody reads is discarded, never buffered.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      ...(tls !== undefined ? { tls } : {}),
      async fetch(request, srv) {
        inFlight++;
        try {
          return await app.http.handle(request, srv.requestIP(request)?.address);
        } finally {
          if (--inFlight === 0 && idle !== null) idle();
        }
      },
    });
  } catch (e) {
    await app.close();
    lock.release();
    throw e;
  }
  const scheme = tls !== undefined ? "https" : "http";
  const hostForUrl = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${scheme}://${hostForUrl}:${server.port}`;
  if (config.publicUrlIsDefault) publicUrl = url;
  // Where this serve listens, for the commands beside it (`person add` names it in enrolment
  // links when they run without DOCVERIFY_PUBLIC_URL). A courtesy: serving goes on without it.
  let address: { remove(): void } | null = null;
  try {
    address = recordServeAddress(config.dataDir, { url, publicUrl: config.publicUrlIsDefault ? null : config.publicUrl });
  } catch (e) {
    log.warn("could not record the listening address in the data folder", { dir: config.dataDir, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
  }
  log.info("docverify started", {
    version: VERSION,
    commit: COMMIT,
    url,
    publicUrl,
    dataDir: config.dataDir,
    ...(config.databaseUrl !== null ? { database: config.databaseUrlRedacted } : {}),
    node: config.nodeName,
    instanceId: app.instanceId,
    ledgerNetwork: config.ledger.network,
    ...(config.ledger.network === "local"
      ? { notice: "ledger network is local: anchors go to a ledger on this machine and nothing is public" }
      : {}),
  });
  const notifier = await createNotifier(extra.notifySocket);
  const notify = (state: string) => {
    const failed = notifier.notify(state);
    if (failed !== null) log.error("systemd notification failed", { state: state.split("\n")[0], error: failed });
  };

  let stopping: Promise<void> | null = null;
  const ledger = app.anchoringStarted.then(
    (anchoring) => {
      log.info("ledger ready", { ledgerNetwork: config.ledger.network, ...anchoring.describe });
      // Ready for systemd means able to do the service's work: anchoring included.
      if (notifier.enabled && stopping === null) notify(`READY=1\nSTATUS=serving on ${url}\nMAINPID=${process.pid}`);
      return null;
    },
    async (e: unknown) => {
      const error = e instanceof Error ? e : new Error(String(e));
      log.error("ledger failed to start; stopping", { error: error.message });
      await running.stop().catch((closing: unknown) => log.error("shutdown failed", { error: closing }));
      return error;
    },
  );
  const running: Running = {
    app,
    url,
    port: server.port ?? config.port,
    ledger,
    stop() {
      stopping ??= (async () => {
        const started = Date.now();
        if (notifier.enabled) notify("STOPPING=1\nSTATUS=draining");
        app.http.beginDrain();
        // New requests are refused from here on: the commands beside it no longer name this address.
        try {
          address?.remove();
        } catch (e) {
          log.warn("could not remove the listening address from the data folder", { dir: config.dataDir, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
        }
        void server.stop(false);
        if (inFlight > 0) {
          await Promise.race([
            new Promise<void>((resolve) => (idle = resolve)),
            Bun.sleep(DRAIN_MS),
          ]);
        }
        const abandoned = inFlight;
        await server.stop(true);
        await app.close();
        lock.release();
        log.info("docverify stopped", { drainMs: Date.now() - started, ...(abandoned > 0 ? { abandonedRequests: abandoned } : {}) });
      })();
      return stopping;
    },
  };
  return running;
}

/**
 * The service on the engine the settings name: the embedded SQLite (sqlite.ts), or one node of
 * several on PostgreSQL (postgres.ts, loaded only then).
 */
export async function createService(options: AppOptions): Promise<ServiceApp> {
  if (options.config.databaseUrl === null) return createApp(options);
  const { createClusterApp } = await import("./postgres.ts");
  return createClusterApp(options);
}
