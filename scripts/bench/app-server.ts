/**
 * docverify with a benchmark-only switch, for the scenarios that measure one path in isolation:
 *   --memo-off   the signature memo off (target: at least 5,000 verifications per second when
 *                every signature is verified from scratch);
 *   --unpaced    record creation not paced to the ledger (what signing, sealing and the
 *                durable write sustain; in the product, sustained creation is paced to the anchor
 *                loop, which the anchoring benchmark measures).
 *
 * Neither can be switched in the product: there is no DOCVERIFY_* setting for them, and there
 * should not be. So this process builds the same app `serve` builds, from the same settings
 * (createApp from src/app/sqlite.ts, or createClusterApp from src/app/postgres.ts when DOCVERIFY_DATABASE_URL
 * is set), passing the test-only options, and serves it with the same
 * Bun.serve options as src/app/serve.ts. It runs from source rather than from the compiled binary;
 * docs/benchmarks.md says what that changes (nothing measurable). It announces itself with the
 * same log line as `serve`, and drains and closes on SIGTERM.
 */
import { createApp } from "../../src/app/sqlite.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/lib/log.ts";

const flags = new Set(process.argv.slice(2));
for (const f of flags) if (f !== "--memo-off" && f !== "--unpaced") throw new Error(`app-server: unknown flag ${f}`);
const config = parseConfig(process.env);
const log = createLogger({ level: config.logLevel });
// As serve does: with the default public URL, the address is known once the listener is bound.
let publicUrl = config.publicUrl;
const options = { config, log, verificationMemo: !flags.has("--memo-off"), anchorPacing: !flags.has("--unpaced"), publicUrl: () => publicUrl };
// With DOCVERIFY_DATABASE_URL (`npm run bench -- --postgres`), one node on PostgreSQL, as `serve`
// builds it (src/app/serve.ts createService); otherwise exactly the embedded app, as before.
const app = config.databaseUrl === null ? await createApp(options) : await (await import("../../src/app/postgres.ts")).createClusterApp(options);
await app.anchoringStarted;
const server = Bun.serve({
  hostname: config.host,
  port: config.port,
  development: false,
  reusePort: false,
  maxRequestBodySize: 1 << 20,
  fetch: (request, srv) => app.http.handle(request, srv.requestIP(request)?.address),
});
if (config.publicUrlIsDefault) publicUrl = `http://${config.host}:${server.port}`;
log.info("docverify started", { url: `http://${config.host}:${server.port}`, flags: [...flags] });

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.http.beginDrain();
    void server
      .stop(false)
      .then(() => app.close())
      .then(() => process.exit(0));
  });
}
