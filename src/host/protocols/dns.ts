import { Resolver } from 'node:dns/promises';

/** A lookup through given name servers; injectable so probes can be tested without a DNS server. */
export type DnsLookup = (query: DnsQuery, signal: AbortSignal) => Promise<string[]>;

export interface DnsQuery {
  /** Addresses, optionally with a port ("10.0.0.2", "[fd00::1]:5353"). */
  readonly servers: readonly string[];
  readonly name: string;
  readonly rrtype: 'A' | 'AAAA';
  /** c-ares' per-try timeout; the caller's signal bounds the whole lookup. */
  readonly timeoutMs: number;
}

/** glibc's resolver uses at most three name servers (MAXNS) and 127.0.0.1 when none is listed. */
const MAXNS = 3;

/** The `nameserver` entries of a resolv.conf, as the glibc stub resolver reads them. */
export function resolvConfServers(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key === 'nameserver' && value && out.length < MAXNS) out.push(value.replace(/%.*$/, ''));
  }
  return out;
}

export const DEFAULT_NAMESERVER = '127.0.0.1';

/** node:dns (c-ares) with the given servers: no /etc/hosts, no nsswitch, one try per server. */
export const resolveWithServers: DnsLookup = async (query, signal) => {
  signal.throwIfAborted();
  const resolver = new Resolver({ timeout: query.timeoutMs, tries: 1 });
  resolver.setServers([...query.servers]);
  const onAbort = () => resolver.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return query.rrtype === 'A' ? await resolver.resolve4(query.name) : await resolver.resolve6(query.name);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
};
