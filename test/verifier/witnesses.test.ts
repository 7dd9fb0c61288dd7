/**
 * Which mirror nodes a verifier asks and how many witnesses they are (src/verifier/witnesses.ts,
 * docs/receipts.md §3): the plan (the user's, then the trust file's, then the built-in ones, no
 * duplicates, never the receipt's own), hosts counted by address (two ports, two names or two
 * spellings of one address are one host), a host that does not resolve, and the address counted
 * being the one connected to.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { parseReceipt, parseTrustFile, verifyReceipt, type FetchFn } from "../../src/verifier/index.ts";
import type { FetchInit } from "../../src/verifier/mirror.ts";
import { canonicalAddress, nameResolver, planMirrors, resolveWitnesses, type HostResolver, type PlannedMirror } from "../../src/verifier/witnesses.ts";
import { cleanup } from "../support/env.ts";
import { buildReceipt, DOC_HASH, fakeMirror, trustFileText } from "./fixtures.ts";

afterAll(cleanup);

describe("planMirrors", () => {
  const trust = parseTrustFile(
    trustFileText({
      networks: {
        testnet: { mirrors: ["https://trusted.example/", "https://user.example"] },
        mainnet: { mirrors: ["https://trusted-mainnet.example"] },
        local: { mirrors: ["http://127.0.0.1:5551"] },
      },
    }),
  );
  const cases: [string, Parameters<typeof planMirrors>, [string, string][]][] = [
    [
      "the user's, then the trust file's for the network, then the built-in ones",
      ["testnet", ["https://user.example", "https://other.example/"], trust, true],
      [
        ["https://user.example", "--mirror"],
        ["https://other.example", "--mirror"],
        ["https://trusted.example", "trust file"],
        ["https://testnet.mirrornode.hedera.com", "built-in"],
      ],
    ],
    ["a duplicate keeps its first place and source, whatever its spelling", ["testnet", ["HTTPS://TESTNET.mirrornode.hedera.com/", "https://user.example//"], trust, true], [["https://testnet.mirrornode.hedera.com", "--mirror"], ["https://user.example", "--mirror"], ["https://trusted.example", "trust file"]]],
    ["without the built-in ones", ["testnet", [], trust, false], [["https://trusted.example", "trust file"], ["https://user.example", "trust file"]]],
    ["another network: its own trust-file and built-in lists", ["mainnet", [], trust, true], [["https://trusted-mainnet.example", "trust file"], ["https://mainnet-public.mirrornode.hedera.com", "built-in"], ["https://mainnet.mirrornode.hedera.com", "built-in"]]],
    ["local: nothing built in", ["local", [], trust, true], [["http://127.0.0.1:5551", "trust file"]]],
    ["local without a trust file: nothing at all", ["local", [], null, true], []],
    ["previewnet without a trust file, a path kept", ["previewnet", ["http://127.0.0.2:5551/mirror/"], null, true], [["http://127.0.0.2:5551/mirror", "--mirror"], ["https://previewnet.mirrornode.hedera.com", "built-in"]]],
  ];
  for (const [what, args, expected] of cases) {
    test(what, () => {
      expect(planMirrors(...args).map((m) => [m.url, m.source])).toEqual(expected);
    });
  }

  test("a user's URL that is not a mirror node's is refused", () => {
    for (const bad of ["ftp://mirror.example", "https://mirror.example/?a=1", "mirror.example", "https://u:p@mirror.example"]) {
      expect(() => planMirrors("testnet", [bad], null, true)).toThrow(TypeError);
    }
  });
});

describe("resolveWitnesses", () => {
  const planned = (...urls: string[]): PlannedMirror[] => urls.map((url) => ({ url, source: "--mirror" }));
  /** A resolver from a table; a name it does not know fails as DNS does. */
  const table =
    (names: Record<string, string[]>): HostResolver =>
    async (hostname) =>
      hostname in names ? { addresses: names[hostname]! } : { failed: `getaddrinfo ENOTFOUND ${hostname}` };

  const cases: [string, string[], HostResolver, number, number[]][] = [
    ["two ports of one address", ["http://127.0.0.2:5551", "http://127.0.0.2:5600"], nameResolver, 1, [0, 0]],
    ["localhost and 127.0.0.1, by name (the page)", ["http://localhost:5551", "http://127.0.0.1:5600"], nameResolver, 1, [0, 0]],
    ["localhost and ::1, by name (the page)", ["http://localhost:5551", "http://[::1]:5600"], nameResolver, 1, [0, 0]],
    ["a subdomain of localhost and 127.0.0.1, by name", ["http://mirror.localhost:5551", "http://127.0.0.1:5600"], nameResolver, 1, [0, 0]],
    ["localhost resolved to 127.0.0.1, and 127.0.0.1", ["http://localhost:5551", "http://127.0.0.1:5600"], table({ localhost: ["127.0.0.1"], "127.0.0.1": ["127.0.0.1"] }), 1, [0, 0]],
    ["an IPv4-mapped IPv6 address and the IPv4 address", ["http://[::ffff:127.0.0.1]:5551", "http://127.0.0.1:5600"], nameResolver, 1, [0, 0]],
    ["a resolver answering the mapped address", ["http://a.example", "http://b.example"], table({ "a.example": ["::ffff:127.0.0.1"], "b.example": ["127.0.0.1"] }), 1, [0, 0]],
    ["two spellings of one IPv6 address", ["http://a.example", "http://b.example"], table({ "a.example": ["2001:db8:0:0:0:0:0:1"], "b.example": ["2001:DB8::1"] }), 1, [0, 0]],
    ["a name with a trailing dot and the name", ["http://mirror.example.:5551", "http://mirror.example:5600"], nameResolver, 1, [0, 0]],
    ["127.0.0.2 and 127.0.0.3", ["http://127.0.0.2:5551", "http://127.0.0.3:5551"], nameResolver, 2, [0, 1]],
    ["two names by name (the page cannot resolve them)", ["https://a.example", "https://b.example"], nameResolver, 2, [0, 1]],
    ["two names of one address", ["https://a.example", "https://b.example"], table({ "a.example": ["192.0.2.1"], "b.example": ["192.0.2.1"] }), 1, [0, 0]],
    ["names sharing any one of their addresses, transitively", ["https://a.example", "https://b.example", "https://c.example", "https://d.example"], table({ "a.example": ["192.0.2.1", "192.0.2.2"], "b.example": ["192.0.2.3"], "c.example": ["192.0.2.2", "192.0.2.3"], "d.example": ["192.0.2.4"] }), 2, [0, 0, 0, 1]],
    ["a name that does not resolve is a host of its own", ["https://a.example", "https://nowhere.invalid", "https://b.example"], table({ "a.example": ["192.0.2.1"], "b.example": ["192.0.2.1"] }), 2, [0, 1, 0]],
  ];
  for (const [what, urls, resolver, hosts, hostOf] of cases) {
    test(`${what}: ${hosts} host${hosts === 1 ? "" : "s"}`, async () => {
      const r = await resolveWitnesses(planned(...urls), resolver);
      expect(r.hosts).toBe(hosts);
      expect(r.mirrors.map((m) => m.host)).toEqual(hostOf);
      expect(r.mirrors.map((m) => m.url)).toEqual(urls);
    });
  }

  test("a failure is kept with its reason and no address, whether the resolver says so, finds nothing or throws", async () => {
    const resolver: HostResolver = async (hostname) => {
      if (hostname === "throws.example") throw new Error("resolver crashed");
      if (hostname === "empty.example") return { addresses: [] };
      return { failed: "getaddrinfo ENOTFOUND nowhere.invalid" };
    };
    const r = await resolveWitnesses(planned("https://nowhere.invalid", "https://empty.example", "https://throws.example"), resolver);
    expect(r.hosts).toBe(3);
    expect(r.mirrors.map((m) => [m.addresses, m.failed])).toEqual([
      [[], "getaddrinfo ENOTFOUND nowhere.invalid"],
      [[], "resolves to no address"],
      [[], "resolver crashed"],
    ]);
  });

  test("the resolver is asked each host name with the URL's port, once per mirror node", async () => {
    const asked: [string, number][] = [];
    await resolveWitnesses(planned("https://a.example", "http://b.example", "http://[::1]:8080", "https://c.example:8443/x"), async (h, p) => (asked.push([h, p]), { addresses: [h] }));
    expect(asked).toEqual([["a.example", 443], ["b.example", 80], ["[::1]", 8080], ["c.example", 8443]]);
  });

  test("canonicalAddress: one spelling per address", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "127.0.0.1"],
      ["::ffff:127.0.0.1", "127.0.0.1"],
      ["[::ffff:7f00:1]", "127.0.0.1"],
      ["0:0:0:0:0:ffff:c000:0201", "192.0.2.1"],
      ["[::1]", "::1"],
      ["0:0:0:0:0:0:0:1", "::1"],
      ["2001:DB8::1", "2001:db8::1"],
      ["Mirror.Example", "mirror.example"],
    ];
    expect(cases.map(([a]) => canonicalAddress(a))).toEqual(cases.map(([, c]) => c));
  });
});

describe("verifyReceipt counts witnesses by host", () => {
  const receipt = (built: ReturnType<typeof buildReceipt>) => parseReceipt(JSON.stringify(built.receipt));

  test("a mirror node whose host does not resolve: its own host, never asked, and the verdict is unverifiable", async () => {
    const built = buildReceipt();
    const a = fakeMirror(built.ledger);
    const asked: string[] = [];
    const fetchFn: FetchFn = (url, init) => (asked.push(new URL(url).origin), fetch(url, init));
    const resolveHost: HostResolver = async (hostname) => (hostname === "mirror.invalid" ? { failed: "getaddrinfo ENOTFOUND mirror.invalid" } : { addresses: [hostname] });
    const r = await verifyReceipt(receipt(built), { docHash: DOC_HASH, mirrors: [a.url, "http://mirror.invalid:5551"], builtinMirrors: false, fetch: fetchFn, resolveHost, timeoutMs: 2_000 });
    expect(r.verdict).toBe("unverifiable");
    expect(r.witnesses).toBe(2);
    const mirrors = r.checks.find((c) => c.name === "mirrors")!;
    expect(mirrors.status).toBe("fail");
    expect(mirrors.detail).toStartWith("http://mirror.invalid:5551 did not answer as a mirror node: its host does not resolve (getaddrinfo ENOTFOUND mirror.invalid)");
    expect(mirrors.evidence!.addresses).toEqual({ [a.url]: [new URL(a.url).hostname], "http://mirror.invalid:5551": "getaddrinfo ENOTFOUND mirror.invalid" });
    expect(new Set(asked)).toEqual(new Set([a.url]));
    expect(r.checks.find((c) => c.name === "ledgerMessage")!.status).toBe("skipped");
  });

  test("each request carries the address its host was counted by, so the host answering is the one counted", async () => {
    const built = buildReceipt();
    const [a, b] = [fakeMirror(built.ledger), fakeMirror(built.ledger)];
    // Two names that resolve (here) to the two fake mirrors' addresses.
    const names: Record<string, string> = { "mirror-a.test": a.url, "mirror-b.test": b.url };
    const addressOf = (name: string) => new URL(names[name]!).hostname;
    const seen: [string, readonly string[] | undefined][] = [];
    const fetchFn: FetchFn = (url, init?: FetchInit) => {
      const u = new URL(url);
      seen.push([u.hostname, init?.addresses]);
      return fetch(names[u.hostname] + u.pathname + u.search, init);
    };
    const r = await verifyReceipt(receipt(built), {
      docHash: DOC_HASH,
      mirrors: ["http://mirror-a.test", "http://mirror-b.test"],
      builtinMirrors: false,
      fetch: fetchFn,
      resolveHost: async (hostname) => ({ addresses: [addressOf(hostname)] }),
      timeoutMs: 2_000,
    });
    expect(r.verdict).toBe("verified_org");
    expect(r.witnesses).toBe(2);
    expect(seen.length).toBeGreaterThanOrEqual(8);
    expect(seen.filter(([host, addresses]) => JSON.stringify(addresses) !== JSON.stringify([addressOf(host)]))).toEqual([]);
  });

  test("two names the resolver leads to one address: one host, unverifiable", async () => {
    const built = buildReceipt();
    const a = fakeMirror(built.ledger);
    const address = new URL(a.url).hostname;
    const r = await verifyReceipt(receipt(built), {
      docHash: DOC_HASH,
      mirrors: ["http://one.test", "http://two.test"],
      builtinMirrors: false,
      fetch: (url, init) => fetch(a.url + new URL(url).pathname + new URL(url).search, init),
      resolveHost: async () => ({ addresses: [address] }),
      timeoutMs: 2_000,
    });
    expect(r.verdict).toBe("unverifiable");
    expect(r.witnesses).toBe(1);
    expect(r.checks.find((c) => c.name === "mirrors")!.detail).toContain("http://two.test is on the same host as http://one.test");
  });
});
