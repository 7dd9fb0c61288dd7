/**
 * docverify with the signature memo off, for the benchmark's memo-off scenario (issue 6: at
 * least 5,000 verifications per second when every signature is verified from scratch).
 *
 * The memo cannot be turned off in the product: there is no DOCVERIFY_* setting for it, and
 * there should not be one. So this process builds the same app `serve` builds, from the same
 * settings (createApp from src/app.ts), passing the test-only option `verificationMemo: false`,
 * and serves it with the same Bun.serve options as src/serve.ts. It runs from source rather
 * than from the compiled binary; docs/benchmarks.md says what that changes (nothing measurable).
 * It announces itself with the same log line as `serve`, and drains and closes on SIGTERM.
 */
import { createApp } from "../../src/app.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/lib/log.ts";

const config = parseConfig(process.env);
const log = createLogger({ level: config.logLevel });
const app = await createApp({ config, log, verificationMemo: false });
const server = Bun.serve({
  hostname: config.host,
  port: config.port,
  development: false,
  reusePort: false,
  maxRequestBodySize: 1 << 20,
  fetch: (request, srv) => app.http.handle(request, srv.requestIP(request)?.address),
});
log.info("docverify started", { url: `http://${config.host}:${server.port}`, verificationMemo: false });

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
