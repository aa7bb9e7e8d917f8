import { isIP } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { parseGoDuration } from '../gocompat/duration.ts';

/** A number flag; a bad value adds an error naming the flag. */
export function toNumber(name: string, value: string, errors: string[]): number {
  const n = Number(value);
  if (value === '' || !Number.isFinite(n)) errors.push(`invalid number "${value}" for --${name}`);
  return n;
}

/** A Go duration flag in ms. Negative periods and timeouts make no sense here (Go's tickers panic on them). */
export function toDuration(name: string, value: string, errors: string[]): number {
  const ms = parseGoDuration(value);
  if (ms instanceof Error) {
    errors.push(`--${name}: ${ms.message}`);
    return 0;
  }
  if (ms < 0) {
    errors.push(`--${name}: duration "${value}" must not be negative`);
    return 0;
  }
  return ms;
}

interface Listen {
  readonly address: string;
  readonly port: number;
  readonly prometheusAddress: string;
  readonly prometheusPort: number;
}

/**
 * Checked before anything starts, so a typo is a flag error (exit 2) and not a failed listen. A bind
 * address is an IP literal or localhost; "" binds every interface, as Go's net.Listen does.
 */
export function checkListen(o: Listen, errors: string[]): void {
  const servers = [
    ['address', o.address, 'port', o.port],
    ['prometheus-address', o.prometheusAddress, 'prometheus-port', o.prometheusPort],
  ] as const;
  for (const [addressFlag, address, portFlag, port] of servers) {
    if (address !== '' && address !== 'localhost' && isIP(address) === 0)
      errors.push(`--${addressFlag}: "${address}" is not an IP address`);
    if (Number.isInteger(port) && (port < 0 || port > 65535))
      errors.push(`--${portFlag}: ${port} is not a port number (0-65535)`);
  }
}

/** A comma-separated list of IP addresses and CIDRs; each malformed entry is an error. */
export function toAddressList(name: string, value: string, errors: string[]): string[] {
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const max = isIP(address) === 4 ? 32 : 128;
    const badBits = bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (isIP(address) === 0 || badBits || extra !== undefined)
      errors.push(`--${name}: ${entry} is not an IP address or CIDR`);
  }
  return entries;
}

/** --host-proc: "" is <host-root>/proc, where NPD-style setups mount the host's /proc. */
export function toProcRoot(value: string, hostRoot: string, errors: string[]): string {
  if (value === '') return join(hostRoot, 'proc');
  if (!isAbsolute(value)) errors.push(`--host-proc: "${value}" is not an absolute path`);
  return value;
}
