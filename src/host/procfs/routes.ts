import { endianness } from 'node:os';

/**
 * Parsers for the kernel's route tables as /proc/net/route (IPv4, fib_route_seq_show) and
 * /proc/net/ipv6_route (ipv6_route_native_seq_show) print them. Both files belong to the reader's
 * network namespace.
 */

export interface DefaultRoute {
  readonly iface: string;
  /** The gateway in text form; empty for an on-link default route. */
  readonly gateway: string;
}

/** include/uapi/linux/route.h */
const RTF_UP = 0x0001;
const RTF_REJECT = 0x0200;

function usable(flags: number): boolean {
  return (flags & RTF_UP) !== 0 && (flags & RTF_REJECT) === 0;
}

/** IPv4 addresses are printed as the raw __be32 in host order ("010200C0" on x86 is 192.0.2.1). */
function ipv4(hex: string, littleEndian: boolean): string {
  const bytes = (hex.match(/../g) ?? []).map((b) => Number.parseInt(b, 16));
  return (littleEndian ? bytes.reverse() : bytes).join('.');
}

export function ipv4DefaultRoutes(text: string, littleEndian = endianness() === 'LE'): DefaultRoute[] {
  const out: DefaultRoute[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const [iface, dest, gw, flags, , , , mask] = f;
    if (!iface || !gw || !flags || dest !== '00000000' || mask !== '00000000') continue;
    if (!usable(Number.parseInt(flags, 16))) continue;
    out.push({ iface, gateway: gw === '00000000' ? '' : ipv4(gw, littleEndian) });
  }
  return out;
}

function ipv6(hex: string): string {
  const groups = (hex.match(/..../g) ?? []).map((g) => Number.parseInt(g, 16).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

const ZERO6 = '0'.repeat(32);

export function ipv6DefaultRoutes(text: string): DefaultRoute[] {
  const out: DefaultRoute[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [dest, plen, , , next, , , , flags, iface] = f;
    if (dest !== ZERO6 || plen !== '00' || !next || !flags || !iface) continue;
    if (!usable(Number.parseInt(flags, 16)) || iface === 'lo') continue;
    out.push({ iface, gateway: next === ZERO6 ? '' : ipv6(next) });
  }
  return out;
}
