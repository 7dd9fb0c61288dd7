/**
 * A hash with more than 100 records is read through the partial index records_anchored_by_class
 * (three class heads, merged in JavaScript, then the chosen rows by rowid). Here its answers are
 * held against a brute-force computation over every record of randomised large hashes (mixed
 * verdict classes, revocations, abandoned and accepted records, tampered rows, consensus ties and
 * seconds of different lengths), and its choice of rows against the single window-function pass
 * it replaced. The JavaScript order is also checked against SQLite's own ORDER BY, value types
 * and non-ASCII text included, since a corrupt row must be placed where SQLite places it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { compareConsensus } from "../../src/lib/formats.ts";
import type { Verdict } from "../../src/verification/types.ts";
import { createVerifier, MAX_MATCHES, type SqliteVerifier } from "../../src/verification/verify.ts";
import { CLASS_HEAD_SQL } from "../../src/storage/sqlite/verification-reads.ts";
import { compareSqlValues, selectLargeHash, type ClassHead } from "../../src/storage/verification-large-hash.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, type FixtureOrg, type PersonKey, type RecordsFixture } from "../support/records-fixture.ts";
import { WINDOW_PASS_SQL } from "./window-pass.ts";
import { seededRandom } from "../support/random.ts";
import { sqliteStore } from "../../src/storage/store.ts";

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };


let fx: RecordsFixture;
let orgs: FixtureOrg[];
let people: PersonKey[];
let verifier: SqliteVerifier;

beforeAll(async () => {
  fx = createRecordsFixture();
  orgs = [];
  for (const name of ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark"]) orgs.push(await fx.createOrg(name));
  people = [fx.createPerson(), fx.createPerson()];
  verifier = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links });
});
afterAll(cleanup);

interface Row {
  readonly id: string;
  readonly signer_type: "org" | "user";
  readonly anchor_state: string;
  readonly revoked_at: number | null;
  readonly consensus_at: string | null;
  readonly created_at: number;
}

const classOf = (r: Row) => (r.revoked_at !== null ? 2 : r.signer_type === "user" ? 0 : 1);

/**
 * The answer over every record of the hash, computed the slow, obvious way: every anchored
 * record sorted by consensus instant (`compareConsensus`) then id; the matches are the first 100;
 * the verdict rests on the matches and on the earliest record of each class they lack; a
 * tampered record among those gives `signature_invalid` (docs/verification.md, the trade-off).
 */
function bruteForce(hash: string, tampered: ReadonlySet<string>) {
  const all = fx.db.$client.query("SELECT id, signer_type, anchor_state, revoked_at, consensus_at, created_at FROM records WHERE doc_hash = ?").all(hash) as Row[];
  const anchored = all
    .filter((r) => r.anchor_state === "anchored")
    .sort((a, b) => compareConsensus(a.consensus_at!, b.consensus_at!) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const matches = anchored.slice(0, MAX_MATCHES);
  const beyond = [0, 1, 2].flatMap((c) => (matches.some((m) => classOf(m) === c) ? [] : anchored.filter((r) => classOf(r) === c).slice(0, 1)));
  const deciding = [...matches, ...beyond];
  const has = (c: number) => deciding.some((r) => classOf(r) === c);
  const verdict: Verdict = deciding.some((r) => tampered.has(r.id))
    ? "signature_invalid"
    : has(0)
      ? "verified"
      : has(1)
        ? "verified_org"
        : has(2)
          ? "revoked"
          : all.some((r) => r.anchor_state === "accepted")
            ? "pending_anchor"
            : "no_record";
  return { verdict, matches: verdict === "pending_anchor" || verdict === "no_record" ? [] : matches, anchored, deciding: deciding.map((r) => r.id).sort() };
}

function expectAsBruteForce(hash: string, tampered: ReadonlySet<string>, label: string) {
  const expected = bruteForce(hash, tampered);
  const result = verifier.verify({ docHash: hash, tier: "organisation" });
  expect(result.verdict, label).toBe(expected.verdict);
  expect(result.matches.map((m) => m.recordId), label).toEqual(expected.matches.map((r) => r.id));
  for (const [i, m] of result.matches.entries()) {
    const r = expected.matches[i]!;
    expect([m.status, m.signerType], label).toEqual([r.revoked_at === null ? "active" : "revoked", r.signer_type]);
    const checks = [m.checksPerformed.hashBinding, m.checksPerformed.userSignature, m.checksPerformed.serverSeal];
    expect(checks.includes("fail"), `${label}: match ${m.recordId}`).toBe(tampered.has(m.recordId));
  }
  // The rows read whole are the very rows the window-function pass read, and those brute force names.
  const heads = [0, 1, 2].map((c) => fx.db.$client.query(CLASS_HEAD_SQL).all(hash, c) as ClassHead[]);
  const { page, beyond } = selectLargeHash(heads);
  const viaIndex = [...page, ...beyond].map((h) => h.id as string);
  const viaWindow = (fx.db.$client.query(WINDOW_PASS_SQL).all(hash, MAX_MATCHES) as { id: string }[]).map((r) => r.id);
  expect(viaIndex, label).toEqual(viaWindow);
  expect([...viaIndex].sort(), label).toEqual(expected.deciding);
  return expected;
}

describe("a large hash through the index answers as brute force over every record does", () => {
  // Each seed: how many records, the share of active person-signed and active organisation-signed
  // records (the rest revoked), and for each of the three classes the share of its records that
  // reach consensus late, beyond the first 100, where the verdict has to look a class up.
  const seeds = [
    { seed: 1, records: 260, person: 0.02, org: 0.02, late: [0.8, 0.8, 0] },
    { seed: 2, records: 180, person: 0.25, org: 0.1, late: [0.2, 1, 0] },
    { seed: 3, records: 140, person: 0, org: 0.03, late: [0, 1, 0] },
    { seed: 4, records: 220, person: 0.01, org: 0, late: [1, 0, 0] },
    { seed: 5, records: 150, person: 0.8, org: 0.03, late: [0, 0, 1] },
  ];
  for (const { seed, records, person, org, late } of seeds) {
    test(`seed ${seed}: ${records} records, active person-signed ${person * 100} %, organisation-signed ${org * 100} %, late shares ${late.join("/")}`, () => {
      const rand = seededRandom(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(rand() * 16)]).join("");
      const id = () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`; // seeded: ties are broken by id
      const hash = docHashOf(`large hash seed ${seed}`);
      const tampered = new Set<string>();
      const activeOrg = new Set<string>(); // one active (non-abandoned) record per organisation and hash
      // Seconds of nine and ten digits and few distinct nanoseconds: order by instant, and ties by id.
      const at = (from: number, span: number) => `${from + Math.floor(rand() * span)}.${String(Math.floor(rand() * 3)).padStart(9, "0")}`;
      const consensus = (verdictClass: number) => (rand() < late[verdictClass]! ? at(1_000_000_004, 3) : at(999_999_995, 9));
      for (let i = 0; i < records; i++) {
        const roll = rand();
        const state = roll < 0.85 ? "anchored" : roll < 0.9 ? "accepted" : roll < 0.95 ? "abandoned" : "pending";
        const options = (verdictClass: number) => ({ docHash: hash, id: id(), anchorState: state, ...(state === "anchored" ? { consensusAt: consensus(verdictClass) } : {}) }) as const;
        const kind = rand();
        const free = orgs.filter((o) => !activeOrg.has(o.id));
        if (kind < person) fx.addPersonRecord(pick(people), options(0));
        else if (kind < person + org && state !== "abandoned" && free.length > 0) {
          const signer = pick(free);
          activeOrg.add(signer.id);
          fx.addOrgRecord(signer, options(1));
        } else if (rand() < 0.2) fx.addPersonRecord(pick(people), { ...options(2), revoked: { reason: "OTHER" } });
        else fx.addOrgRecord(pick(orgs), { ...options(2), revoked: { reason: "SUPERSEDED" } });
      }
      let expected = expectAsBruteForce(hash, tampered, `seed ${seed}, as created`);
      expect(expected.anchored.length).toBeGreaterThan(MAX_MATCHES);
      let restedBeyond = expected.deciding.length > expected.matches.length;

      // Mutations that may leave the verdict anything first; those that make it signature_invalid
      // for good (a tampered record the verdict rests on) last.
      const steps = [...Array.from({ length: 6 }, () => pick(["revoke", "abandon", "tamper-beyond", "anchor-earliest", "revoke-match"] as const)), pick(["tamper-rested-on", "move-in"] as const), "tamper-rested-on" as const];
      for (const [step, what] of steps.entries()) {
        const label = `seed ${seed}, step ${step}: ${what}`;
        const beyond = expected.anchored.slice(MAX_MATCHES);
        const restedOn = beyond.filter((r) => expected.deciding.includes(r.id));
        if (what === "revoke" || what === "revoke-match") {
          const active = (what === "revoke" ? expected.anchored : expected.matches).filter((r) => r.revoked_at === null);
          if (active.length > 0) fx.revoke(pick(active).id, "OTHER");
        } else if (what === "abandon") {
          fx.setAnchorState(pick(expected.anchored).id, "abandoned");
        } else if (what === "tamper-beyond" || what === "tamper-rested-on") {
          // Beyond the matches: a record the verdict does not rest on changes nothing, one it rests on does.
          const from = what === "tamper-beyond" ? beyond.filter((r) => !restedOn.includes(r)) : restedOn;
          if (from.length > 0) {
            const victim = pick(from);
            if (rand() < 0.5) fx.tamper.signature(victim.id);
            else fx.tamper.seal(victim.id);
            tampered.add(victim.id);
          }
        } else if (what === "move-in") {
          // A valid active record of another hash rewritten onto this one, late in the order.
          const elsewhere = docHashOf(`elsewhere ${seed} ${step}`);
          const moved = fx.addPersonRecord(pick(people), { docHash: elsewhere, id: id(), consensusAt: consensus(0) });
          fx.tamper.docHash(moved, hash);
          tampered.add(moved);
        } else {
          // A person-signed record accepted until now reaches consensus earlier than every other.
          const early = fx.addPersonRecord(pick(people), { docHash: hash, id: id(), anchorState: "accepted" });
          fx.db.$client.run("UPDATE records SET anchor_state = 'anchored', sequence_number = 1, consensus_at = '99999999.000000000' WHERE id = ?", [early]);
        }
        expected = expectAsBruteForce(hash, tampered, label);
        restedBeyond ||= expected.deciding.length > expected.matches.length;
      }
      // Each seed exercised the lookup beyond the matches at least once.
      expect(restedBeyond).toBe(true);
    });
  }

  test("many records, none anchored: pending_anchor; then one anchored beyond nothing: verified", () => {
    const hash = docHashOf("large hash, nothing anchored");
    const ids = Array.from({ length: MAX_MATCHES + 20 }, () => fx.addPersonRecord(people[0]!, { docHash: hash, anchorState: "abandoned" }));
    fx.addPersonRecord(people[1]!, { docHash: hash, anchorState: "accepted", createdAt: fx.clock.now() });
    expect(expectAsBruteForce(hash, new Set(), "accepted only").verdict).toBe("pending_anchor");
    fx.setAnchorState(ids[7]!, "anchored");
    expect(expectAsBruteForce(hash, new Set(), "one anchored").verdict).toBe("verified");
  });
});

describe("consensus order in JavaScript is SQLite's ORDER BY", () => {
  test("NULL, numbers, text (UTF-8 byte order, astral characters included) and blobs, in random mixes", () => {
    const rand = seededRandom(42);
    const alphabet = ["0", "9", ".", "a", "Z", "é", "\u00ff", "\u0800", "\ue000", "\uffff", "😀", "𝄞"];
    const value = (): null | number | string | Uint8Array => {
      const kind = rand();
      if (kind < 0.1) return null;
      if (kind < 0.25) return rand() < 0.5 ? Math.floor(rand() * 20) - 5 : rand() * 10;
      if (kind < 0.85) return Array.from({ length: Math.floor(rand() * 4) }, () => alphabet[Math.floor(rand() * alphabet.length)]!).join("");
      return Uint8Array.from({ length: Math.floor(rand() * 3) }, () => Math.floor(rand() * 256));
    };
    const db = new Database(":memory:");
    db.run("CREATE TABLE v (n INTEGER PRIMARY KEY, x)"); // no affinity: each value keeps its type
    const insert = db.prepare("INSERT INTO v (n, x) VALUES (?, ?)");
    const values = Array.from({ length: 2000 }, value);
    values.forEach((x, n) => insert.run(n, x));
    const bySqlite = (db.query("SELECT n FROM v ORDER BY x, n").all() as { n: number }[]).map((r) => r.n);
    const byUs = values.map((x, n) => ({ x, n })).sort((a, b) => compareSqlValues(a.x, b.x) || a.n - b.n).map((r) => r.n);
    expect(byUs).toEqual(bySqlite);
    db.close();
  });
});

test("a large hash's verification drops public keys kept under an older change counter: a key changed in place fails at once", async () => {
  const org = await fx.createOrg("Key Changers Ltd");
  const hash = docHashOf("large hash, key changed in place");
  // One active record per organisation and hash: the others revoked.
  for (let i = 0; i < MAX_MATCHES + 5; i++) fx.addOrgRecord(org, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
  fx.addOrgRecord(org, { docHash: hash });
  const v = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links });
  expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
  fx.tamper.publicKey(org.systemKey.fingerprint);
  expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
  fx.tamper.publicKey(org.systemKey.fingerprint); // flipped back
  expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
});
