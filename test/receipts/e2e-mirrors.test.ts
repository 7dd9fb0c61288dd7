/**
 * Receipts end to end against a lying mirror node (test/support/lying-mirror.ts) beside an honest
 * one, both over the same real ledger, serve stopped: each lie of the fixture is
 * `inconsistent_mirrors`, a mirror that is down is `unverifiable`, in every shell; the honest proxy
 * alone changes nothing (so each failure is the lie's); and `--offline` asks no mirror at all.
 * The liar listens on a loopback address of its own: a verifier counts witnesses by host, and the
 * ledger's own ports are one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanup, onCleanup } from "../support/env.ts";
import { startLyingMirror, type Lie, type LyingMirror } from "../support/lying-mirror.ts";
import { nextLoopback } from "../support/loopback.ts";
import { authenticate, cliVerify, deploy, nodeVerify, SHELLS, verifyIn, type Deployment, type Held } from "./e2e-rig.ts";

afterAll(cleanup);

interface Anchored {
  readonly anchor: { topicId: string; sequenceNumber: number };
  readonly keyAnnouncement: { sequenceNumber: number };
}

let d: Deployment;
let kept: Held;
let withdrawn: Held;
/** The sequence number of `withdrawn`'s revocation message. */
let revocationSequence: number;
let liar: LyingMirror;
let honest: string;

beforeAll(async () => {
  d = await deploy("separate");
  kept = await authenticate(d);
  withdrawn = await authenticate(d, "withdrawn.pdf");
  await d.revoke(withdrawn.recordId, "KEY_COMPROMISE");
  const after = JSON.parse(await d.receipt(withdrawn.recordId)) as { revocation: { anchor: { sequenceNumber: number } } };
  revocationSequence = after.revocation.anchor.sequenceNumber;
  await d.stopServe();
  honest = d.mirrors[0]!;
  liar = await startLyingMirror({ upstream: d.mirrors[1]!, hostname: nextLoopback() });
  onCleanup(() => liar.close());
}, 60_000);

const receiptOf = (h: Held) => JSON.parse(h.receiptText) as Anchored;

/** Every shell, with the honest mirror and the liar as the verifier's own two. */
async function everyShell(h: Held, lie: Lie) {
  await liar.setLie(lie);
  const out = [];
  for (const shell of SHELLS) out.push(await verifyIn(shell, h.receiptPath, h.documentPath, { mirrors: [honest, liar.url] }));
  return out;
}

describe("one lying mirror node of two", () => {
  test(
    "an honest proxy in the liar's place: verified_org (the failures below are the lies')",
    async () => {
      for (const o of await everyShell(kept, { kind: "none" })) expect([o.shell, o.verdict]).toEqual([o.shell, "verified_org"]);
      expect(liar.requests().length).toBeGreaterThan(0);
    },
    60_000,
  );

  test(
    "each lie is inconsistent_mirrors in every shell, exit 1",
    async () => {
      const r = receiptOf(kept);
      const lies: [string, Held, Lie][] = [
        ["the record's message bytes", kept, { kind: "message-bytes", sequenceNumber: r.anchor.sequenceNumber, topicId: r.anchor.topicId }],
        ["the key announcement's bytes", kept, { kind: "message-bytes", sequenceNumber: r.keyAnnouncement.sequenceNumber, topicId: r.anchor.topicId }],
        ["the record's consensus time", kept, { kind: "consensus-time", sequenceNumber: r.anchor.sequenceNumber, topicId: r.anchor.topicId }],
        ["the record's message hidden", kept, { kind: "hide", sequenceNumber: r.anchor.sequenceNumber, topicId: r.anchor.topicId }],
        ["a revocation hidden", withdrawn, { kind: "hide", sequenceNumber: revocationSequence, topicId: r.anchor.topicId }],
        ["a revocation invented", kept, { kind: "invent-revocation", recordId: kept.recordId, topicId: r.anchor.topicId }],
      ];
      for (const [what, h, lie] of lies) {
        for (const o of await everyShell(h, lie)) {
          expect([what, o.shell, o.verdict, o.code]).toEqual([what, o.shell, "inconsistent_mirrors", o.shell === "page" ? null : 1]);
        }
      }
    },
    120_000,
  );

  test(
    "a mirror node down (connection refused, or 503): unverifiable in every shell, exit 1",
    async () => {
      for (const lie of [{ kind: "down" }, { kind: "down", mode: "503" }] as const) {
        for (const o of await everyShell(kept, lie)) {
          expect([lie, o.shell, o.verdict, o.code, o.failed]).toEqual([lie, o.shell, "unverifiable", o.shell === "page" ? null : 1, ["mirrors"]]);
        }
      }
    },
    60_000,
  );

  test("--offline asks no mirror node: the liar sees no request", async () => {
    await liar.setLie({ kind: "none" });
    const before = liar.requests().length;
    for (const run of [cliVerify, nodeVerify]) {
      const r = await run([kept.receiptPath, "--file", kept.documentPath, "--mirror", liar.url, "--offline", "--json"]);
      expect([r.code, r.report?.verdict]).toEqual([1, "unverifiable"]);
    }
    expect(liar.requests().length).toBe(before);
  });
});
