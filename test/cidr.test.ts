import { expect, test } from "bun:test";
import { anyContains, cidrContains, parseCidr, parseCidrList } from "../src/lib/cidr.ts";

test("IPv4 blocks", () => {
  const c = parseCidr("10.1.0.0/16");
  expect(cidrContains(c, "10.1.200.3")).toBe(true);
  expect(cidrContains(c, "10.2.0.1")).toBe(false);
  expect(cidrContains(parseCidr("0.0.0.0/0"), "203.0.113.9")).toBe(true);
  expect(cidrContains(parseCidr("127.0.0.1"), "127.0.0.1")).toBe(true);
  expect(cidrContains(parseCidr("127.0.0.1"), "127.0.0.2")).toBe(false);
});

test("IPv6 blocks, and IPv4-mapped peers match IPv4 blocks", () => {
  expect(cidrContains(parseCidr("::1/128"), "::1")).toBe(true);
  expect(cidrContains(parseCidr("fd00::/8"), "fd12:3456::1")).toBe(true);
  expect(cidrContains(parseCidr("fd00::/8"), "fe80::1")).toBe(false);
  expect(cidrContains(parseCidr("2001:db8::/32"), "2001:0db8:0000:0000:0000:0000:0000:0001")).toBe(true);
  expect(cidrContains(parseCidr("127.0.0.0/8"), "::ffff:127.0.0.1")).toBe(true);
  expect(cidrContains(parseCidr("::ffff:10.0.0.0/104"), "10.9.9.9")).toBe(true);
  expect(cidrContains(parseCidr("127.0.0.0/8"), "::1")).toBe(false);
});

test("garbage is refused", () => {
  for (const bad of ["", "1.2.3", "1.2.3.4/33", "01.2.3.4", "::1::2", "fe80::/129", "host", "1.2.3.4/x", "12345::"]) {
    expect(() => parseCidr(bad)).toThrow();
  }
  expect(anyContains(parseCidrList(" 10.0.0.0/8 , ::1/128 "), "::1")).toBe(true);
  expect(cidrContains(parseCidr("10.0.0.0/8"), "not an ip")).toBe(false);
});
