// The server-side request forgery guard: webhook URLs are chosen by API users, so the worker must
// never be steered at our own network. Refused: loopback, private (RFC 1918, unique local,
// site-local), link-local (which holds the cloud metadata service at 169.254.169.254), carrier-grade
// NAT, unspecified, multicast, reserved and documentation ranges, and every IPv6 form that carries an
// IPv4 address inside it (IPv4-compatible, mapped, translated, 6to4, NAT64), judged by that IPv4
// address; Teredo and local-use NAT64, whose IPv4 address is obfuscated or site-specific, are refused
// outright. The check runs on the address actually connected to, at every attempt, so a name that
// resolves to a public address at creation and to 127.0.0.1 later (DNS rebinding) is still refused.
import net from 'node:net';

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['64:ff9b:1::', 48], // local-use NAT64: the IPv4 address sits around the u-octet, site by site
  ['2001::', 32], // Teredo: the client's IPv4 address is stored inverted
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, a trailing dotted quad folded in). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(2).map(Number) as [number, number, number, number];
    text = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  if (!text.includes('::')) return parse(text);
  const [head, tail] = text.split('::') as [string, string];
  const [before, after] = [parse(head), parse(tail)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const dottedQuad = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/**
 * The IPv4 address an IPv6 address carries: IPv4-compatible (::a.b.c.d, which holds :: and ::1 as
 * 0.0.0.0 and 0.0.0.1), IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::/48, the IPv4 address in bits 16 to 48).
 */
function embeddedIpv4(address: string): string | undefined {
  const g = groupsOf(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return dottedQuad(g[6]!, g[7]!);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return dottedQuad(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return dottedQuad(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dottedQuad(g[1]!, g[2]!);
  return undefined;
}

/** True when a webhook may not be sent to this IP address in a guarded mode. */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner !== undefined) return blocked.check(inner, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}

/** What a refused delivery is told, in any mode the guard applies to. */
export const PRIVATE_DESTINATION =
  'a private, loopback or link-local address, where webhooks are not sent in live mode, nor in test mode with WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=deny';

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Names that always mean this machine or its private network, refused before any lookup. */
export function isForbiddenHostname(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (net.isIP(host)) return isForbiddenAddress(host);
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local') || !host.includes('.');
}
