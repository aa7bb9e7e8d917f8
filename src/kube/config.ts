import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { delimiter, join } from 'node:path';
import { type Clock, systemClock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { fileToken, staticAuth, withBearer } from './auth.ts';
import type { ApiConnection } from './connection.ts';
import { existingKubeconfigFiles, loadKubeconfig } from './kubeconfig.ts';

export const DEFAULT_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** NPD's heapster-style `--apiserver-override` URI, decoded. */
export interface ApiserverOverride {
  /** scheme://host[:port] when the URI has both; otherwise the server comes from elsewhere. */
  readonly server: string | undefined;
  readonly inClusterConfig: boolean;
  readonly insecure: boolean;
  /** Kubeconfig path, used only when inClusterConfig=false. */
  readonly auth: string | undefined;
  readonly useServiceAccount: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

export interface ConnectionOptions {
  /** `--apiserver-override`; when non-empty it alone decides the connection, as in NPD. */
  readonly apiserverOverride?: string;
  /** `--kubeconfig`. */
  readonly kubeconfig?: string;
  /** Defaults to process.env; read for KUBECONFIG and KUBERNETES_SERVICE_HOST/PORT. */
  readonly env?: Env;
  /** Where token, ca.crt and namespace live; defaults to DEFAULT_SERVICE_ACCOUNT_DIR. */
  readonly serviceAccountDir?: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Go's strconv.ParseBool, because NPD parses these query parameters with it. */
export function parseGoBool(value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`strconv.ParseBool: parsing "${value}": invalid syntax`);
}

function boolParam(params: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = params.get(name);
  if (v === null) return fallback;
  try {
    return parseGoBool(v);
  } catch (err) {
    throw new Error(`--apiserver-override: ${name}: ${(err as Error).message}`);
  }
}

const AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:[^@/?#]*@)?([^/?#]*)/;

/**
 * Like Go's url.Parse: a URI without scheme and host (e.g. `?inClusterConfig=false`) is accepted, and the
 * host keeps the port exactly as written (WHATWG URL would drop a default :443).
 */
export function parseApiserverOverride(uri: string): ApiserverOverride {
  const withoutFragment = uri.split('#', 1)[0] ?? '';
  const q = withoutFragment.indexOf('?');
  const base = q < 0 ? withoutFragment : withoutFragment.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : withoutFragment.slice(q + 1));
  let server: string | undefined;
  if (base.includes('://')) {
    const m = AUTHORITY.exec(base);
    if (!m || !URL.canParse(base)) throw new Error(`--apiserver-override: invalid URI "${uri}"`);
    const [, scheme = '', host = ''] = m;
    if (host !== '') server = `${scheme.toLowerCase()}://${host}`;
  }
  const auth = params.get('auth');
  return {
    server,
    inClusterConfig: boolParam(params, 'inClusterConfig', true),
    insecure: boolParam(params, 'insecure', false),
    auth: auth === null || auth === '' ? undefined : auth,
    useServiceAccount: boolParam(params, 'useServiceAccount', false),
  };
}

function readOptional(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * client-go's rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (always
 * https, unlike client-node's port heuristics), the service-account CA and a token file that is re-read
 * so projected tokens keep working. Throws when not in a cluster.
 */
export function inClusterConnection(env: Env, saDir: string, clock: Clock): ApiConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
    );
  }
  const tokenPath = join(saDir, 'token');
  const token = fileToken(tokenPath, clock);
  if (token() === undefined)
    throw new Error(`unable to load in-cluster configuration: cannot read ${tokenPath}`);
  return {
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    source: 'in-cluster',
    // client-go logs a missing CA and carries on with the system roots; so do we.
    tls: {
      ca: readOptional(join(saDir, 'ca.crt')),
      cert: undefined,
      key: undefined,
      insecureSkipTLSVerify: false,
      serverName: undefined,
    },
    authHeaders: staticAuth({ token }),
  };
}

/** NPD's getKubeClientConfig (problemclient/configs.go), branch for branch. */
async function fromOverride(
  o: ApiserverOverride,
  env: Env,
  saDir: string,
  deps: { clock: Clock; logger?: Logger | undefined },
): Promise<ApiConnection> {
  const { clock } = deps;
  let conn: ApiConnection;
  if (o.inClusterConfig) {
    const inCluster = inClusterConnection(env, saDir, clock);
    const tls = o.insecure ? { ...inCluster.tls, ca: undefined, insecureSkipTLSVerify: true } : inCluster.tls;
    conn = { ...inCluster, server: o.server ?? inCluster.server, tls };
  } else if (o.auth !== undefined) {
    // NPD builds this branch with empty overrides: the URI's host and `insecure` are ignored.
    conn = await loadKubeconfig([o.auth], deps);
  } else {
    const tls = {
      ca: undefined,
      cert: undefined,
      key: undefined,
      insecureSkipTLSVerify: o.insecure,
      serverName: undefined,
    };
    conn = { server: o.server ?? '', source: 'apiserver-override', tls, authHeaders: staticAuth({}) };
  }
  if (conn.server === '') throw new Error('--apiserver-override: invalid kubernetes master url specified');
  const base = { ...conn, source: 'apiserver-override' as const };
  if (!o.useServiceAccount) return base;
  return { ...base, authHeaders: withBearer(conn.authHeaders, fileToken(join(saDir, 'token'), clock)) };
}

/** Catches a malformed server at startup instead of failing every request later. */
function checked(conn: ApiConnection): ApiConnection {
  const url = URL.canParse(conn.server) ? new URL(conn.server) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new Error(`API server "${conn.server}" (${conn.source}) is not an http(s) URL`);
  }
  return conn;
}

async function detect(
  opts: ConnectionOptions,
  env: Env,
  deps: { clock: Clock; logger?: Logger | undefined },
) {
  const saDir = opts.serviceAccountDir ?? DEFAULT_SERVICE_ACCOUNT_DIR;
  if (opts.apiserverOverride) {
    return fromOverride(parseApiserverOverride(opts.apiserverOverride), env, saDir, deps);
  }
  if (opts.kubeconfig) return loadKubeconfig([opts.kubeconfig], deps);
  const listed = env.KUBECONFIG ? existingKubeconfigFiles(env.KUBECONFIG, delimiter) : [];
  if (listed.length > 0) return loadKubeconfig(listed, deps);
  if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) return undefined;
  try {
    return inClusterConnection(env, saDir, deps.clock);
  } catch (err) {
    deps.logger?.warn({ err }, 'in-cluster environment without a usable service account; running standalone');
    return undefined;
  }
}

/**
 * Decides how to reach the API server. Precedence: a non-empty --apiserver-override (NPD semantics;
 * errors throw, as NPD panics), then --kubeconfig, then $KUBECONFIG, then the in-cluster service account.
 * Returns undefined when none applies: the agent then runs standalone, without the k8s exporter.
 */
export async function resolveConnection(opts: ConnectionOptions = {}): Promise<ApiConnection | undefined> {
  const deps = { clock: opts.clock ?? systemClock, logger: opts.logger };
  const conn = await detect(opts, opts.env ?? process.env, deps);
  return conn === undefined ? undefined : checked(conn);
}
