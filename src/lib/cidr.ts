/**
 * IPv4 and IPv6 CIDR blocks, for trusted proxies and the metrics allow-list.
 * IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, what a dual-stack socket reports for an
 * IPv4 peer) are matched as the IPv4 address they carry, so an operator writes `10.0.0.0/8` once.
 */
export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly prefix: number;
  readonly text: string;
}

export function parseIp(text: string): { family: 4 | 6; value: bigint } | null {
  const t = text.trim();
  const v4 = parseIpv4(t);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIpv6(t);
  if (v6 === null) return null;
  // ::ffff:a.b.c.d → a.b.c.d
  if (v6 >> 32n === 0xffffn) return { family: 4, value: v6 & 0xffffffffn };
  return { family: 6, value: v6 };
}

function parseIpv4(t: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(t);
  if (m === null) return null;
  let v = 0n;
  for (let i = 1; i <= 4; i++) {
    const part = m[i]!;
    if (part.length > 1 && part.startsWith("0")) return null; // no octal-looking octets
    const n = Number(part);
    if (n > 255) return null;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIpv6(t: string): bigint | null {
  if (!/^[0-9A-Fa-f:.]+$/.test(t) || t.length > 45) return null;
  let head = t;
  let tailV4: bigint | null = null;
  const lastColon = t.lastIndexOf(":");
  if (t.includes(".")) {
    tailV4 = parseIpv4(t.slice(lastColon + 1));
    if (tailV4 === null) return null;
    head = t.slice(0, lastColon + 1) + "0:0"; // placeholder groups, replaced below
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (s: string): string[] | null => {
    if (s === "") return [];
    const g = s.split(":");
    return g.every((x) => /^[0-9A-Fa-f]{1,4}$/.test(x)) ? g : null;
  };
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (left === null || right === null) return null;
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...left, ...Array<string>(missing).fill("0"), ...right];
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(parseInt(g, 16));
  if (tailV4 !== null) v = (v & ~0xffffffffn) | tailV4;
  return v;
}

export function parseCidr(text: string): Cidr {
  const t = text.trim();
  const slash = t.indexOf("/");
  const addr = slash === -1 ? t : t.slice(0, slash);
  const ip = parseIp(addr);
  if (ip === null) throw new Error(`"${t}" is not an IP address or CIDR block`);
  // A mapped IPv6 address names an IPv4 host; its prefix counts from the IPv4 part.
  const mapped = ip.family === 4 && addr.includes(":");
  const bits = ip.family === 4 ? 32 : 128;
  let prefix = bits;
  if (slash !== -1) {
    const p = t.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) throw new Error(`"${t}" has a bad prefix length`);
    prefix = Number(p) - (mapped ? 96 : 0);
    if (prefix < 0 || prefix > bits) throw new Error(`"${t}" has a prefix length outside 0..${mapped ? 128 : bits}`);
  }
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return { family: ip.family, base: ip.value & mask, prefix, text: t };
}

export function parseCidrList(text: string): Cidr[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(parseCidr);
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const ip = parseIp(address);
  if (ip === null || ip.family !== cidr.family) return false;
  const bits = cidr.family === 4 ? 32 : 128;
  const mask = cidr.prefix === 0 ? 0n : ((1n << BigInt(cidr.prefix)) - 1n) << BigInt(bits - cidr.prefix);
  return (ip.value & mask) === cidr.base;
}

export function anyContains(list: readonly Cidr[], address: string): boolean {
  return list.some((c) => cidrContains(c, address));
}

/**
 * The /64 an IPv6 address is in, written `2001:db8:1:2::/64`: the unit a subscriber is given
 * (RFC 6177), so the unit one client can be told apart by. `value` is the 128-bit address.
 */
export function ipv6Slash64(value: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 64n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return `${groups.join(":")}::/64`;
}
