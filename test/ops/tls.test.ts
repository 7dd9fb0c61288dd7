/**
 * HTTPS served directly (DOCVERIFY_TLS_CERT_FILE / DOCVERIFY_TLS_KEY_FILE): a self-signed
 * certificate made with openssl, /healthz and a /v1 call over https trusting exactly that
 * certificate, plain http on the same port refused, and the startup line naming an https URL.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requireProgram } from "../support/programs.ts";
import { cleanup, startService, tempDir } from "../support/env.ts";
import { cli } from "./support.ts";

afterAll(cleanup);

function selfSigned(): { cert: string; key: string } {
  const openssl = requireProgram("openssl");
  const dir = tempDir();
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const r = Bun.spawnSync([
    openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
  ]);
  expect(r.exitCode, r.stderr.toString()).toBe(0);
  return { cert, key };
}

test("serve speaks HTTPS with the configured certificate, and only HTTPS", async () => {
  const { cert, key } = selfSigned();
  const svc = await startService({ env: { DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_TLS_CERT_FILE: cert, DOCVERIFY_TLS_KEY_FILE: key } });
  const started = svc.logLines().find((l) => l.msg === "docverify started")!;
  expect(String(started.url)).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  expect(started.publicUrl).toBe(started.url);
  const ca = readFileSync(cert, "utf8");

  const health = await fetch(`${svc.url}/healthz`, { tls: { ca } });
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });

  const v = await fetch(`${svc.url}/v1/verifications`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ originalDocHash: `sha256:${"ab".repeat(32)}` }),
    tls: { ca },
  });
  expect(v.status).toBe(200);
  expect(((await v.json()) as { verdict: string }).verdict).toBe("no_record");

  // A client that does not trust the certificate is refused by its own TLS check.
  await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();

  // Plain HTTP on the TLS port gets no HTTP answer.
  const port = new URL(svc.url).port;
  let plain: number | string;
  try {
    plain = (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).status;
  } catch (e) {
    plain = (e as Error).name;
  }
  expect(plain).not.toBe(200);
  expect(typeof plain).toBe("string");
  expect(await svc.stop()).toBe(0);
}, 30_000);

test("a missing certificate file stops startup with exit 2 naming the setting", () => {
  const { key } = selfSigned();
  const r = cli(["serve", "--data", tempDir()], { DOCVERIFY_PORT: "0", DOCVERIFY_TLS_CERT_FILE: "/nonexistent/cert.pem", DOCVERIFY_TLS_KEY_FILE: key });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("DOCVERIFY_TLS_CERT_FILE");
  const half = cli(["serve", "--data", tempDir()], { DOCVERIFY_PORT: "0", DOCVERIFY_TLS_KEY_FILE: key });
  expect(half.code).toBe(2);
  expect(half.stderr).toContain("DOCVERIFY_TLS_CERT_FILE");
});
