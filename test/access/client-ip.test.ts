/**
 * Who a request's client is, for rate limiting (src/http/access.ts): the direct peer unless it is
 * a trusted proxy, then the nearest untrusted X-Forwarded-For hop; and the anonymous bucket an
 * address falls in.
 */
import { describe, expect, test } from "bun:test";
import { clientBucket, clientIp, forwardedAddress } from "../../src/http/access.ts";
import { parseCidrList } from "../../src/lib/cidr.ts";

describe("client IP", () => {
  const req = (xff?: string) => new Request("http://localhost/v1/verifications", { headers: xff === undefined ? {} : { "x-forwarded-for": xff } });
  const proxies = parseCidrList("10.0.0.0/8,::1/128");

  test("X-Forwarded-For is ignored unless the direct peer is a trusted proxy", () => {
    expect(clientIp(req("203.0.113.9"), "198.51.100.7", proxies)).toBe("198.51.100.7");
    expect(clientIp(req("203.0.113.9"), "198.51.100.7", [])).toBe("198.51.100.7");
    expect(clientIp(req(), "10.1.2.3", proxies)).toBe("10.1.2.3");
  });

  test("from a trusted proxy, the nearest untrusted hop is the client; spoofed entries further left are not believed", () => {
    expect(clientIp(req("203.0.113.9"), "10.1.2.3", proxies)).toBe("203.0.113.9");
    expect(clientIp(req("1.1.1.1, 203.0.113.9"), "10.1.2.3", proxies)).toBe("203.0.113.9");
    expect(clientIp(req("1.1.1.1, 203.0.113.9, 10.9.9.9"), "10.1.2.3", proxies)).toBe("203.0.113.9");
    expect(clientIp(req("2001:db8::1"), "::1", proxies)).toBe("2001:db8::1");
  });

  test("a hop that names no address stops the walk and is the client's own identity, never the proxy's budget", () => {
    expect(clientIp(req("203.0.113.9, not-an-ip"), "10.1.2.3", proxies)).toBe("unidentified:not-an-ip");
    expect(clientIp(req("unknown"), "10.1.2.3", proxies)).toBe("unidentified:unknown");
    expect(clientIp(req("1.1.1.1, unknown, 10.9.9.9"), "10.1.2.3", proxies)).toBe("unidentified:unknown");
    // Nothing forwarded: the proxy is the client.
    expect(clientIp(req(""), "10.1.2.3", proxies)).toBe("10.1.2.3");
  });

  test("hops written with a port are the address without it", () => {
    expect(clientIp(req("203.0.113.9:51234"), "10.1.2.3", proxies)).toBe("203.0.113.9");
    expect(clientIp(req("[2001:db8::7]:443"), "10.1.2.3", proxies)).toBe("2001:db8::7");
    expect(clientIp(req("[2001:db8::7]"), "10.1.2.3", proxies)).toBe("2001:db8::7");
    expect(clientIp(req("1.1.1.1, 203.0.113.9:80, 10.9.9.9:8080"), "10.1.2.3", proxies)).toBe("203.0.113.9");
    expect(forwardedAddress("[2001:db8::7]x")).toBeNull();
    expect(forwardedAddress("203.0.113.9:999999")).toBeNull();
  });

  test("anonymous buckets: IPv4 by address, IPv6 by /64", () => {
    expect(clientBucket("203.0.113.9")).toBe("ip:203.0.113.9");
    expect(clientBucket("2001:db8:1:2:aaaa::1")).toBe("ip:2001:db8:1:2::/64");
    expect(clientBucket("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("ip:2001:db8:1:2::/64");
    expect(clientBucket("2001:db8:1:3::1")).toBe("ip:2001:db8:1:3::/64");
    expect(clientBucket("::ffff:192.0.2.1")).toBe("ip:192.0.2.1");
    expect(clientBucket("unidentified:unknown")).toBe("ip:unidentified:unknown");
  });
});
