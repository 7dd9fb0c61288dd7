/**
 * The verifier's trust roots (src/verifier/trust.ts): the trust file of docs/receipts.md §7, read
 * strictly (every malformed case refused naming its field, as a receipt is), and the built-in
 * mirror nodes per network (none for local).
 */
import { describe, expect, test } from "bun:test";
import roots from "../../src/verifier/trust-roots.json" with { type: "json" };
import { builtinMirrors, isPublicNetwork, parseTrustFile, PUBLIC_NETWORKS, TrustFileError } from "../../src/verifier/trust.ts";
import { ORG_ID, SIGNER_FINGERPRINT, TOPIC } from "./fixtures.ts";

/** The documented example (docs/receipts.md §7), as a value tests change. */
function example(): Record<string, any> {
  return {
    v: 1,
    service: "https://verify.example.org",
    exportedAt: "2026-11-28T12:00:00.000Z",
    networks: { testnet: { mirrors: ["https://testnet.mirrornode.hedera.com"] } },
    organisations: [{ orgId: ORG_ID, name: "Acme Certification Ltd", domain: "acme.example", network: "testnet", topicId: TOPIC, keys: [{ algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT }] }],
  };
}

/** The error parseTrustFile throws for `text`. */
function refusal(text: string): TrustFileError {
  try {
    parseTrustFile(text);
  } catch (e) {
    if (e instanceof TrustFileError) return e;
    throw e;
  }
  throw new Error("accepted");
}

describe("parseTrustFile accepts the documented format", () => {
  test("a trust file exported before keys had windows (keys with algorithm and fingerprint only) still loads: the key is pinned for every place on the topic", () => {
    expect(parseTrustFile(JSON.stringify(example()))).toEqual({
      v: 1,
      service: "https://verify.example.org",
      exportedAt: "2026-11-28T12:00:00.000Z",
      networks: { testnet: ["https://testnet.mirrornode.hedera.com"] },
      organisations: [{ orgId: ORG_ID, name: "Acme Certification Ltd", domain: "acme.example", network: "testnet", topicId: TOPIC, keys: [{ algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT, announcedAt: null, sequenceNumber: null, replacedAt: null, replacedBySequenceNumber: null, compromisedSince: null }] }],
    });
  });

  test("the example of docs/receipts.md §7: each key with its window, several keys for one organisation", () => {
    const t = example();
    t.organisations[0].keys = [
      { algorithm: "ML-DSA-65", fingerprint: "aa".repeat(32), announcedAt: "1768469390.000000007", sequenceNumber: 1, replacedAt: "1768469990.000000001", replacedBySequenceNumber: 40, compromisedSince: "2026-01-20T00:00:00.000Z" },
      { algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT, announcedAt: "1768469990.000000001", sequenceNumber: 40 },
    ];
    expect(parseTrustFile(JSON.stringify(t)).organisations[0]!.keys).toEqual([
      { algorithm: "ML-DSA-65", fingerprint: "aa".repeat(32), announcedAt: "1768469390.000000007", sequenceNumber: 1, replacedAt: "1768469990.000000001", replacedBySequenceNumber: 40, compromisedSince: "2026-01-20T00:00:00.000Z" },
      { algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT, announcedAt: "1768469990.000000001", sequenceNumber: 40, replacedAt: null, replacedBySequenceNumber: null, compromisedSince: null },
    ]);
  });

  const badWindows: [string, Record<string, unknown>, string][] = [
    ["announcedAt not a consensus time", { announcedAt: "2026-01-15T09:30:00.123Z" }, "organisations[0].keys[0].announcedAt: expected a consensus time seconds.nanoseconds (nine digits)"],
    ["sequenceNumber 0", { sequenceNumber: 0 }, "organisations[0].keys[0].sequenceNumber: expected an integer ≥ 1"],
    ["replacedBySequenceNumber not after the key's own", { sequenceNumber: 5, replacedBySequenceNumber: 5 }, "organisations[0].keys[0].replacedBySequenceNumber: expected a sequence number after the key's own announcement"],
    ["compromisedSince without milliseconds", { compromisedSince: "2026-01-15T09:30:00Z" }, "organisations[0].keys[0].compromisedSince: expected an RFC 3339 UTC time with milliseconds (2026-01-15T09:30:00.123Z)"],
    ["an unknown key field", { retiredAt: null }, "organisations[0].keys[0].retiredAt: unexpected field"],
  ];
  for (const [name, over, message] of badWindows) {
    test(`a key's window refused: ${name}`, () => {
      const t = example();
      Object.assign(t.organisations[0].keys[0], over);
      expect(() => parseTrustFile(JSON.stringify(t))).toThrow(message);
    });
  }

  const accepted: [string, (t: Record<string, any>) => void, (parsed: ReturnType<typeof parseTrustFile>) => void][] = [
    ["without service and exportedAt (optional)", (t) => (delete t.service, delete t.exportedAt), (p) => expect([p.service, p.exportedAt]).toEqual([null, null])],
    ["service and exportedAt null", (t) => ((t.service = null), (t.exportedAt = null)), (p) => expect([p.service, p.exportedAt]).toEqual([null, null])],
    ["no networks and no organisations", (t) => ((t.networks = {}), (t.organisations = [])), (p) => expect([p.networks, p.organisations]).toEqual([{}, []])],
    [
      "every network, mirror URLs normalised as --mirror's are",
      (t) => (t.networks = { mainnet: { mirrors: ["HTTPS://Mainnet.Example/"] }, testnet: { mirrors: [] }, previewnet: { mirrors: ["https://p.example/prefix/"] }, local: { mirrors: ["http://127.0.0.1:5551", "http://127.0.0.1:5600/"] } }),
      (p) => expect(p.networks).toEqual({ mainnet: ["https://mainnet.example"], testnet: [], previewnet: ["https://p.example/prefix"], local: ["http://127.0.0.1:5551", "http://127.0.0.1:5600"] }),
    ],
    ["an organisation without a domain (null)", (t) => (t.organisations[0].domain = null), (p) => expect(p.organisations[0]!.domain).toBeNull()],
    ["several keys, several organisations", (t) => (t.organisations[0].keys.push({ algorithm: "ML-DSA-65", fingerprint: "0".repeat(64) }), t.organisations.push({ ...t.organisations[0], orgId: "0190f5a3-0000-7000-8000-000000000002", network: "local", topicId: "0.0.1001" })), (p) => expect(p.organisations.map((o) => [o.network, o.topicId, o.keys.length])).toEqual([["testnet", TOPIC, 2], ["local", "0.0.1001", 2]])],
    ["a name with any characters (it is shown escaped)", (t) => (t.organisations[0].name = "Ācme \u202e Ltd"), (p) => expect(p.organisations[0]!.name).toBe("Ācme \u202e Ltd")],
  ];
  for (const [what, change, check] of accepted) {
    test(what, () => {
      const t = example();
      change(t);
      check(parseTrustFile(JSON.stringify(t)));
    });
  }
});

describe("parseTrustFile refuses, naming the field", () => {
  const cases: [string, string | ((t: Record<string, any>) => void), string][] = [
    ["not JSON", "{v:1}", ""],
    ["truncated", JSON.stringify(example()).slice(0, 40), ""],
    ["an array", "[]", ""],
    ["null", "null", ""],
    ["version 2", (t) => (t.v = 2), "v"],
    ["version as a string", (t) => (t.v = "1"), "v"],
    ["no version", (t) => delete t.v, "v"],
    ["an unknown field at the top", (t) => (t.signature = "x"), "signature"],
    ["service not a URL", (t) => (t.service = "verify.example.org"), "service"],
    ["exportedAt not an RFC 3339 time with milliseconds", (t) => (t.exportedAt = "2026-11-28T12:00:00Z"), "exportedAt"],
    ["no networks", (t) => delete t.networks, "networks"],
    ["networks an array", (t) => (t.networks = []), "networks"],
    ["an unknown network", (t) => (t.networks.devnet = { mirrors: [] }), "networks.devnet"],
    ["a network in capitals", (t) => (t.networks = { Testnet: { mirrors: [] } }), "networks.Testnet"],
    ["a network named __proto__", `{"v":1,"networks":{"__proto__":{"mirrors":[]}},"organisations":[]}`, "networks.__proto__"],
    ["an unknown field in a network", (t) => (t.networks.testnet.weight = 1), "networks.testnet.weight"],
    ["a network without mirrors", (t) => (t.networks.testnet = {}), "networks.testnet.mirrors"],
    ["mirrors not an array", (t) => (t.networks.testnet.mirrors = "https://m.example"), "networks.testnet.mirrors"],
    ["a mirror that is not http(s)", (t) => t.networks.testnet.mirrors.push("ftp://m.example"), "networks.testnet.mirrors[1]"],
    ["a mirror with a query", (t) => (t.networks.testnet.mirrors = ["https://m.example/?a=1"]), "networks.testnet.mirrors[0]"],
    ["a mirror with a fragment", (t) => (t.networks.testnet.mirrors = ["https://m.example/#x"]), "networks.testnet.mirrors[0]"],
    ["a mirror with credentials", (t) => (t.networks.testnet.mirrors = ["https://user:pw@m.example"]), "networks.testnet.mirrors[0]"],
    ["a mirror without a scheme", (t) => (t.networks.testnet.mirrors = ["m.example"]), "networks.testnet.mirrors[0]"],
    ["a mirror that is not a string", (t) => (t.networks.testnet.mirrors = [42]), "networks.testnet.mirrors[0]"],
    ["no organisations", (t) => delete t.organisations, "organisations"],
    ["organisations an object", (t) => (t.organisations = {}), "organisations"],
    ["an organisation that is not an object", (t) => (t.organisations = ["acme"]), "organisations[0]"],
    ["an unknown field in an organisation", (t) => (t.organisations[0].country = "GB"), "organisations[0].country"],
    ["an orgId in capitals", (t) => (t.organisations[0].orgId = ORG_ID.toUpperCase()), "organisations[0].orgId"],
    ["an orgId that is not a UUID", (t) => (t.organisations[0].orgId = "acme"), "organisations[0].orgId"],
    ["an empty name", (t) => (t.organisations[0].name = ""), "organisations[0].name"],
    ["no name", (t) => delete t.organisations[0].name, "organisations[0].name"],
    ["no domain (null must be said)", (t) => delete t.organisations[0].domain, "organisations[0].domain"],
    ["a domain in capitals", (t) => (t.organisations[0].domain = "Acme.Example"), "organisations[0].domain"],
    ["a domain of one label", (t) => (t.organisations[0].domain = "acme"), "organisations[0].domain"],
    ["a domain with a trailing dot", (t) => (t.organisations[0].domain = "acme.example."), "organisations[0].domain"],
    ["a domain with a scheme", (t) => (t.organisations[0].domain = "https://acme.example"), "organisations[0].domain"],
    ["a domain with a leading hyphen", (t) => (t.organisations[0].domain = "-acme.example"), "organisations[0].domain"],
    ["a domain with a space", (t) => (t.organisations[0].domain = "acme example.org"), "organisations[0].domain"],
    ["an unknown network for an organisation", (t) => (t.organisations[0].network = "devnet"), "organisations[0].network"],
    ["a topic id that is not 0.0.N", (t) => (t.organisations[0].topicId = "5012345"), "organisations[0].topicId"],
    ["no keys", (t) => delete t.organisations[0].keys, "organisations[0].keys"],
    ["an empty keys list", (t) => (t.organisations[0].keys = []), "organisations[0].keys"],
    ["a key that is not an object", (t) => (t.organisations[0].keys = [SIGNER_FINGERPRINT]), "organisations[0].keys[0]"],
    ["an unknown field in a key", (t) => (t.organisations[0].keys[0].retiredAt = null), "organisations[0].keys[0].retiredAt"],
    ["another algorithm", (t) => (t.organisations[0].keys[0].algorithm = "Ed25519"), "organisations[0].keys[0].algorithm"],
    ["a fingerprint in capitals", (t) => (t.organisations[0].keys[0].fingerprint = SIGNER_FINGERPRINT.toUpperCase()), "organisations[0].keys[0].fingerprint"],
    ["a fingerprint one digit short", (t) => (t.organisations[0].keys[0].fingerprint = SIGNER_FINGERPRINT.slice(1)), "organisations[0].keys[0].fingerprint"],
    ["a fingerprint with a prefix", (t) => (t.organisations[0].keys[0].fingerprint = "sha256:" + SIGNER_FINGERPRINT), "organisations[0].keys[0].fingerprint"],
    ["the second organisation's key", (t) => t.organisations.push({ ...t.organisations[0], keys: [{ algorithm: "ML-DSA-65", fingerprint: "xyz" }] }), "organisations[1].keys[0].fingerprint"],
  ];
  for (const [what, change, field] of cases) {
    test(`${what}: ${field === "" ? "the whole file" : field}`, () => {
      let text: string;
      if (typeof change === "string") text = change;
      else {
        const t = example();
        change(t);
        text = JSON.stringify(t);
      }
      const e = refusal(text);
      expect(e.field).toBe(field);
      expect(e.message).toStartWith(field === "" ? e.message : `${field}: `);
      expect(e.message.length).toBeGreaterThan(field.length + 2);
    });
  }

  test("the messages say what was expected", () => {
    const t = example();
    t.organisations[0].keys[0].fingerprint = SIGNER_FINGERPRINT.toUpperCase();
    expect(refusal(JSON.stringify(t)).message).toBe("organisations[0].keys[0].fingerprint: expected 64 lowercase hex digits");
    expect(refusal("{").message).toBe("not JSON");
    expect(refusal(JSON.stringify({ ...example(), v: 2 })).message).toBe("v: unsupported trust file version 2 (this verifier reads version 1)");
    expect(refusal(JSON.stringify({ ...example(), networks: { devnet: { mirrors: [] } } })).message).toBe("networks.devnet: unknown network (one of mainnet, testnet, previewnet, local)");
    expect(refusal(JSON.stringify({ ...example(), organisations: [{ ...example().organisations[0], keys: [] }] })).message).toBe("organisations[0].keys: expected at least one key");
  });
});

describe("the built-in mirror nodes", () => {
  test("per public network, from trust-roots.json, normalised; none for local", () => {
    expect(builtinMirrors("mainnet")).toEqual(["https://mainnet-public.mirrornode.hedera.com", "https://mainnet.mirrornode.hedera.com"]);
    expect(builtinMirrors("testnet")).toEqual(["https://testnet.mirrornode.hedera.com"]);
    expect(builtinMirrors("previewnet")).toEqual(["https://previewnet.mirrornode.hedera.com"]);
    expect(builtinMirrors("local")).toEqual([]);
    // The data file names exactly the public networks, each with at least one mirror node.
    expect(Object.keys(roots.networks).sort()).toEqual([...PUBLIC_NETWORKS].sort());
    for (const n of PUBLIC_NETWORKS) expect(builtinMirrors(n).length).toBeGreaterThan(0);
  });

  test("only local is not public", () => {
    expect((["mainnet", "testnet", "previewnet", "local"] as const).map((n) => [n, isPublicNetwork(n)])).toEqual([
      ["mainnet", true],
      ["testnet", true],
      ["previewnet", true],
      ["local", false],
    ]);
  });
});
