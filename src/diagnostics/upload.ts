import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import type * as Https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { builtin } from '../core/builtin.ts';
import type { Clock } from '../core/clock.ts';
import { send, TimeoutError } from '../kube/http.ts';

export const UPLOAD_TIMEOUT_MS = 60_000;

/**
 * Why an upload failed, as one of a fixed set of messages: whoever may create a NodeDiagnostic reads
 * them, so they never carry the URL (a credential), a status code, an answer's body or a host:port that
 * would turn the agent into a port scanner. `detail` is for the agent's own log.
 */
export class UploadError extends Error {
  readonly detail: string;
  constructor(message: string, detail = '') {
    super(message);
    this.name = 'UploadError';
    this.detail = detail;
  }
}

const REFUSED = 'uploadURL refused: it is a loopback, link-local or node address';
const NOT_HTTP = 'uploadURL is not an http or https URL';
const UNREACHABLE = 'upload target unreachable';

/** Where an upload may go: never the node itself, unless an operator listed the address. */
export interface UploadPolicy {
  /** The addresses a host name resolves to, all of them. */
  resolve(host: string): Promise<readonly string[]>;
  /** True when the address is on the node and not allowed. */
  refused(address: string): Promise<boolean>;
}

export interface UploadPolicyOptions {
  /** Addresses or CIDRs (--diagnostics-upload-allow) uploads may go to although they are on the node. */
  readonly allowed: readonly string[];
  /** The node's addresses: the agent's interfaces (the node's under hostNetwork) and the Node's own. */
  readonly nodeAddresses: () => readonly string[] | Promise<readonly string[]>;
  readonly lookup?: (host: string) => Promise<readonly string[]>;
}

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

function addEntry(list: BlockList, entry: string): void {
  const [address = '', bits] = entry.split('/');
  if (bits === undefined) list.addAddress(address, family(address));
  else list.addSubnet(address, Number(bits), family(address));
}

/** Loopback, link-local and unspecified: what reaches the node (or its metadata service) from it. */
const ON_NODE = ['127.0.0.0/8', '0.0.0.0/8', '169.254.0.0/16', '::1/128', '::/128', 'fe80::/10'];

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is checked as the IPv4 address it is. */
const unmapped = (a: string): string => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a) ? a.slice(7) : a);

export function uploadPolicy(opts: UploadPolicyOptions): UploadPolicy {
  const allowed = new BlockList();
  for (const entry of opts.allowed) addEntry(allowed, entry);
  const onNode = new BlockList();
  for (const entry of ON_NODE) addEntry(onNode, entry);
  const lookup =
    opts.lookup ??
    (async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address));
  return {
    resolve: lookup,
    refused: async (raw) => {
      const a = unmapped(raw);
      const node = (await opts.nodeAddresses()).map(unmapped);
      if (!onNode.check(a, family(a)) && !node.includes(a)) return false;
      return !allowed.check(a, family(a));
    },
  };
}

/** Checks every address the URL's host stands for; the connection goes to the first one, no new lookup. */
async function checkedAddress(url: URL, policy: UploadPolicy): Promise<string> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: readonly string[];
  try {
    addresses = isIP(host) ? [host] : await policy.resolve(host);
  } catch (err) {
    throw new UploadError(UNREACHABLE, `lookup failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (addresses.length === 0) throw new UploadError(UNREACHABLE, 'lookup found no address');
  for (const a of addresses) if (await policy.refused(a)) throw new UploadError(REFUSED);
  return addresses[0] as string;
}

function outcome(status: number): UploadError | undefined {
  if (status >= 200 && status <= 299) return undefined;
  const detail = `status ${status}`;
  if (status >= 400 && status <= 499)
    return new UploadError('upload refused by the target (HTTP 4xx)', detail);
  if (status >= 500 && status <= 599)
    return new UploadError('upload failed at the target (HTTP 5xx)', detail);
  return new UploadError('upload target gave an answer that is not a success', detail);
}

/**
 * PUTs the bundle to the presigned URL with a deadline covering connect, send and answer. No
 * credentials of ours go along: a presigned URL carries its own authorization. The host is resolved
 * once and checked against the policy, and the connection is pinned to that address (no second lookup
 * that a short-lived DNS answer could point elsewhere); TLS still verifies the host name.
 */
export async function uploadBundle(
  uploadURL: string,
  body: Buffer,
  clock: Clock,
  policy: UploadPolicy,
  timeoutMs = UPLOAD_TIMEOUT_MS,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(uploadURL);
  } catch {
    throw new UploadError(NOT_HTTP);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UploadError(NOT_HTTP);
  const address = await checkedAddress(url, policy);
  const pinned: LookupFunction = (_host, options, cb) => {
    const fam = isIP(address);
    if (options.all)
      (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: fam }]);
    else cb(null, address, fam);
  };
  const agent =
    url.protocol === 'https:'
      ? new (builtin<typeof Https>('node:https').Agent)({ lookup: pinned })
      : new http.Agent({ lookup: pinned } as http.AgentOptions);
  const headers = { 'content-type': 'application/gzip', 'content-length': String(body.length) };
  let status: number;
  try {
    status = (await send(agent, { method: 'PUT', url, headers, body, timeoutMs }, clock)).status;
  } catch (err) {
    if (err instanceof TimeoutError) throw new UploadError('upload timed out', err.message);
    throw new UploadError(UNREACHABLE, (err as NodeJS.ErrnoException).code ?? 'transport error');
  } finally {
    agent.destroy();
  }
  const failed = outcome(status);
  if (failed) throw failed;
}
