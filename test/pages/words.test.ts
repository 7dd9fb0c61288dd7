/**
 * One vocabulary for people, one way to write a time, on every page people read: the public
 * verify page (src/http/pages/verify.ts), the receipt verifier (src/verifier/page/view.ts and
 * src/verifier/render.ts) and the signing page (src/sign-pages/words.ts). The three live in areas
 * that may not import one another (the verifier stands alone; the signing page's script imports
 * only the PDF stamp and the time writer; test/architecture.test.ts), so each holds its own
 * words; all three write times with the verifier's src/verifier/human-time.ts, which imports
 * nothing. This test holds the words to docs/verification.md's "Words on the pages" table and
 * the times to known answers. test/pages/layout.test.ts checks the pages themselves in Chromium.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { timeElement } from "../../src/http/pages/html.ts";
import { humanTime } from "../../src/verifier/human-time.ts";
import { renderVerifyPage, STATUS_WORDS } from "../../src/http/pages/verify.ts";
import type { PublicRecord } from "../../src/records/views.ts";
import { recordStateWords, STATE_WORDS } from "../../src/sign-pages/words.ts";
import { OUTCOME_WORDS, verdictText } from "../../src/verifier/page/view.ts";
import { humanTimesIn, machineTime } from "../../src/verifier/render.ts";
import { ROOT } from "../support/env.ts";

/** docs/verification.md's "Words on the pages": each machine name (in backticks) → the word people see. */
function documentedWords(): { byName: Map<string, string>; words: Set<string> } {
  const doc = readFileSync(join(ROOT, "docs", "verification.md"), "utf8");
  const section = /^## Words on the pages\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc);
  expect(section).not.toBeNull();
  // The header row, then one row per outcome (the |---| line has no spaces, so it does not match).
  const rows = [...section![1]!.matchAll(/^\| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/gm)].slice(1);
  const byName = new Map<string, string>();
  const words = new Set<string>();
  for (const [, , word, names] of rows) {
    words.add(word!.trim());
    for (const [, name] of names!.matchAll(/`([a-z_]+)`/g)) {
      // One machine name, one word: a name in two rows would be two words for one outcome.
      expect([name, byName.get(name!) ?? word!.trim()]).toEqual([name, word!.trim()]);
      byName.set(name!, word!.trim());
    }
  }
  return { byName, words };
}

const RECEIPT_VERDICTS = ["verified", "verified_org", "revoked", "signature_invalid", "no_record", "inconsistent_mirrors", "unverifiable"];

describe("docs/verification.md's words are the pages' words", () => {
  const { byName, words } = documentedWords();

  test("the table names every verdict and state the pages show", () => {
    for (const name of [...RECEIPT_VERDICTS, "pending_anchor", "active", "anchored", "pending", "accepted", "abandoned"]) expect([name, byName.has(name)]).toEqual([name, true]);
  });

  test("the receipt page: each verdict's headline is the table's word", () => {
    for (const v of RECEIPT_VERDICTS) expect([v, verdictText(v).headline]).toEqual([v, byName.get(v)!]);
  });

  test("the verify page: Valid, Awaiting the ledger, Revoked, as the table says, and as the page's headline", () => {
    expect(STATUS_WORDS).toEqual({ active: byName.get("active")!, waiting: byName.get("pending")!, revoked: byName.get("revoked")! });
    expect(byName.get("accepted")).toBe(byName.get("pending")!);
    const record: PublicRecord = {
      recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
      originalDocHash: `sha256:${"ab".repeat(32)}`,
      authenticatedAt: "2026-01-15T09:30:00.123Z",
      signerType: "org",
      organisationName: "Acme",
      organisationSuspended: false,
      signerHint: null,
      filename: "a.pdf",
      anchorState: "anchored",
      anchor: { topicId: "0.0.1001", transactionId: "0.0.2@1768469400.000000001", hashscanUrl: "https://hashscan.io/x", sequenceNumber: 3, consensusAt: "2026-01-15T09:30:03.123456789Z", mirrorNodeUrl: null },
      revocation: null,
    };
    expect(renderVerifyPage(record)).toContain(`<strong>${byName.get("active")}</strong>`);
    expect(renderVerifyPage({ ...record, anchorState: "accepted" })).toContain(`<strong>${byName.get("accepted")}</strong>`);
    expect(renderVerifyPage({ ...record, revocation: { reason: "SUPERSEDED", revokedAt: "2026-01-16T10:00:00.000Z" } })).toContain(`<strong>${byName.get("revoked")}</strong>`);
  });

  test("the signing page's list: each state's words start with the table's word", () => {
    for (const state of ["pending", "accepted", "anchored", "abandoned"]) expect([state, recordStateWords(state, null).split(": ")[0]]).toEqual([state, byName.get(state)!]);
    expect(recordStateWords("anchored", { reason: "SUPERSEDED" })).toStartWith(`${byName.get("revoked")} (`);
  });

  test("every word in the table is one a page uses, and no page has a word the table lacks", () => {
    const used = new Set([...Object.values(OUTCOME_WORDS), ...Object.values(STATUS_WORDS), ...Object.values(STATE_WORDS)]);
    expect([...used].sort()).toEqual([...words].sort());
  });
});

describe("one way to write a time, on every page and on the command line", () => {
  /** Known answers: to the second (never rounded up), in UTC, whatever the offset written. */
  const KNOWN: [string, string][] = [
    ["2026-12-01T17:58:48.123Z", "1 December 2026, 17:58:48 UTC"],
    ["2026-01-15T09:30:03.123456789Z", "15 January 2026, 09:30:03 UTC"],
    ["2026-01-15T23:59:59.999999999Z", "15 January 2026, 23:59:59 UTC"],
    ["2026-01-15T09:30:00Z", "15 January 2026, 09:30:00 UTC"],
    ["2026-01-16T00:30:00.5+01:00", "15 January 2026, 23:30:00 UTC"],
    ["2026-02-28T22:15:00-03:00", "1 March 2026, 01:15:00 UTC"],
    ["not a time", "not a time"],
  ];
  const CONSENSUS: [string, string][] = [
    ["1764611928.999999999", "1 December 2025, 17:58:48 UTC"],
    ["1768469403.000000001", "15 January 2026, 09:30:03 UTC"],
  ];

  test("a time is written for people as every page writes it (src/verifier/human-time.ts)", () => {
    for (const [value, shown] of KNOWN) expect([value, humanTime(value)]).toEqual([value, shown]);
  });

  test("a ledger consensus time (seconds.nanoseconds) the same way", () => {
    for (const [value, shown] of CONSENSUS) expect([value, humanTime(value)]).toEqual([value, shown]);
  });

  test("a <time> keeps the exact value: the instant in datetime (milliseconds, as HTML accepts), the value itself in title", () => {
    expect(timeElement("2026-01-15T09:30:03.123456789Z")).toBe('<time datetime="2026-01-15T09:30:03.123Z" title="2026-01-15T09:30:03.123456789Z">15 January 2026, 09:30:03 UTC</time>');
    expect(timeElement("1768469403.000000001")).toBe('<time datetime="2026-01-15T09:30:03.000Z" title="1768469403.000000001">15 January 2026, 09:30:03 UTC</time>');
    expect(machineTime("1768469403.000000001")).toBe("2026-01-15T09:30:03.000Z");
  });

  test("times inside a check's detail are written for people; a transaction id's seconds.nanoseconds is an id and stays", () => {
    expect(humanTimesIn("revoked: SUPERSEDED at 2026-01-16T09:30:00.123Z (message #4, consensus 1768555803.000000004).")).toBe(
      "revoked: SUPERSEDED at 16 January 2026, 09:30:00 UTC (message #4, consensus 16 January 2026, 09:30:03 UTC).",
    );
    expect(humanTimesIn("transaction 0.0.2@1768469400.123456789 on topic 0.0.123456789")).toBe("transaction 0.0.2@1768469400.123456789 on topic 0.0.123456789");
  });
});
