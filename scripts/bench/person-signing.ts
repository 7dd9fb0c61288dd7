/**
 * Person signatures per second end to end through the JSON endpoints (docs/persons.md "The API
 * behind the pages: /app"):
 * each signature is POST /app/signatures/options, a passkey assertion by a software
 * authenticator (test/support/soft-authenticator.ts: P-256, as a platform authenticator signs),
 * and POST /app/signatures, which verifies the assertion, signs with the person's ML-DSA-65 key,
 * seals, and commits the record and its ledger message. Persons are added on the server's data
 * folder as `docverify person add` does, and enrolled through POST /app/enrol. Closed loop:
 * `workers` persons sign concurrently, one signature at a time each, for `seconds` after a
 * warm-up; every signature must answer 201.
 */
import { createHash } from "node:crypto";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createPersons } from "../../src/persons/persons.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { SoftAuthenticator } from "../../test/support/soft-authenticator.ts";

export interface PersonSigningResult {
  readonly signaturesPerSecond: number;
  readonly signatures: number;
  readonly seconds: number;
  readonly workers: number;
  /** Median and 99th percentile of one signature's two requests, milliseconds. */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function runPersonSigningBench(options: { url: string; dataDir: string; workers: number; warmupS: number; seconds: number }): Promise<PersonSigningResult> {
  const { url, workers } = options;
  const origin = new URL(url).origin;
  const core = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: options.dataDir }), log: memoryLogger() });
  let people: { auth: SoftAuthenticator; session: string }[];
  try {
    const org = core.db.$client.query("SELECT id FROM organisations WHERE addon = 1 AND topic_id IS NOT NULL AND suspended = 0 ORDER BY created_at LIMIT 1").get() as { id: string } | null;
    if (org === null) throw new Error("person-signing bench: no organisation with the add-on and a topic");
    const persons = createPersons({ store: core.store, clock: core.clock, publicUrl: url });
    people = [];
    for (let i = 0; i < workers; i++) {
      const { link } = await persons.add({ orgId: org.id, name: `Bench Signer ${i + 1}`, email: `signer${i + 1}@bench.test`, identity: "benchmark: no identity" }, "bench");
      const token = link.enrolUrl.split("/enrol/")[1]!;
      const auth = new SoftAuthenticator(origin);
      const options = await post(`${url}/app/enrol/${token}/options`, origin, {}, null);
      const res = await fetch(`${url}/app/enrol/${token}`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify(auth.register(options as never)) });
      if (res.status !== 201) throw new Error(`person-signing bench: enrolment answered ${res.status}: ${await res.text()}`);
      const session = /docverify_session=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
      if (session === undefined) throw new Error("person-signing bench: enrolment set no session cookie");
      people.push({ auth, session });
    }
  } finally {
    await core.close();
  }

  let n = 0;
  const sign = async (p: { auth: SoftAuthenticator; session: string }, w: number): Promise<void> => {
    const docHash = "sha256:" + createHash("sha256").update(`person-signing bench ${w} ${n++} ${Math.random()}`).digest("hex");
    const options = await post(`${url}/app/signatures/options`, origin, { originalDocHash: docHash, filename: "bench.pdf" }, p.session);
    const res = await fetch(`${url}/app/signatures`, {
      method: "POST",
      headers: { origin, "content-type": "application/json", cookie: `docverify_session=${p.session}` },
      body: JSON.stringify(p.auth.assert(options as never)),
    });
    if (res.status !== 201) throw new Error(`person-signing bench: POST /app/signatures answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };

  const loop = async (until: number, latencies: number[] | null) => {
    await Promise.all(
      people.map(async (p, w) => {
        while (performance.now() < until) {
          const started = performance.now();
          await sign(p, w);
          latencies?.push(performance.now() - started);
        }
      }),
    );
  };
  await loop(performance.now() + options.warmupS * 1000, null);
  const latencies: number[] = [];
  const started = performance.now();
  await loop(started + options.seconds * 1000, latencies);
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { signaturesPerSecond: latencies.length / elapsed, signatures: latencies.length, seconds: elapsed, workers, p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function post(url: string, origin: string, body: unknown, session: string | null): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { origin, "content-type": "application/json", ...(session === null ? {} : { cookie: `docverify_session=${session}` }) },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`person-signing bench: ${new URL(url).pathname} answered ${res.status}: ${await res.text()}`);
  return res.json();
}
