import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { type AuthHeaders, fileToken, pluginAuth, staticAuth } from './auth.ts';
import { execAuth, parseExecConfig } from './exec-credential.ts';
import type { ApiConnection, TlsSettings } from './connection.ts';

type Doc = Record<string, unknown>;

/** One named entry (cluster, user or context) and the file it came from, for relative paths. */
interface Named {
  readonly body: Doc;
  readonly dir: string;
}

interface Merged {
  currentContext: string | undefined;
  readonly clusters: Map<string, Named>;
  readonly users: Map<string, Named>;
  readonly contexts: Map<string, Named>;
}

export interface KubeconfigDeps {
  readonly clock: Clock;
  readonly logger?: Logger;
}

function asDoc(value: unknown): Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Doc) : {};
}

function str(doc: Doc, key: string): string | undefined {
  const v = doc[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function addNamed(into: Map<string, Named>, list: unknown, field: string, dir: string): void {
  if (!Array.isArray(list)) return;
  for (const item of list) {
    const entry = asDoc(item);
    const name = str(entry, 'name');
    // client-go's merge: the first file that defines a name wins.
    if (name === undefined || into.has(name)) continue;
    into.set(name, { body: asDoc(entry[field]), dir });
  }
}

/**
 * Reads and merges kubeconfig files with client-go's rules: the first file to set current-context wins,
 * and so does the first definition of each cluster, user and context. `yaml` is imported lazily so
 * in-cluster agents never load it.
 */
async function mergeFiles(paths: readonly string[]): Promise<Merged> {
  const { parse } = await import('yaml');
  const merged: Merged = {
    currentContext: undefined,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  };
  for (const path of paths) {
    const doc = asDoc(parse(readFileSync(path, 'utf8')));
    const dir = dirname(path);
    merged.currentContext ??= str(doc, 'current-context');
    addNamed(merged.clusters, doc.clusters, 'cluster', dir);
    addNamed(merged.users, doc.users, 'user', dir);
    addNamed(merged.contexts, doc.contexts, 'context', dir);
  }
  return merged;
}

function resolvePath(dir: string, path: string): string {
  return isAbsolute(path) ? path : join(dir, path);
}

/** certificate-authority-data style fields win over their file variants, as in client-go. */
function dataOrFile(entry: Named, dataKey: string, fileKey: string): Buffer | undefined {
  const data = str(entry.body, dataKey);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const file = str(entry.body, fileKey);
  return file === undefined ? undefined : readFileSync(resolvePath(entry.dir, file));
}

function clusterTls(cluster: Named, user: Named | undefined): TlsSettings {
  const insecure = cluster.body['insecure-skip-tls-verify'] === true;
  return {
    ca: insecure ? undefined : dataOrFile(cluster, 'certificate-authority-data', 'certificate-authority'),
    cert: user ? dataOrFile(user, 'client-certificate-data', 'client-certificate') : undefined,
    key: user ? dataOrFile(user, 'client-key-data', 'client-key') : undefined,
    insecureSkipTLSVerify: insecure,
    serverName: str(cluster.body, 'tls-server-name'),
  };
}

function userAuth(server: string, name: string, user: Named | undefined, clock: Clock): AuthHeaders {
  if (!user) return staticAuth({});
  const body = user.body;
  if (body.exec !== undefined) return execAuth(parseExecConfig(body.exec, user.dir), { clock });
  if (body['auth-provider'] !== undefined) {
    return pluginAuth(server, { name, authProvider: body['auth-provider'] });
  }
  const token = str(body, 'token');
  const tokenFile = str(body, 'tokenFile') ?? str(body, 'token-file');
  const fromFile = tokenFile === undefined ? undefined : fileToken(resolvePath(user.dir, tokenFile), clock);
  return staticAuth({
    // client-go: a token file, once readable, takes precedence over an inline token.
    token: () => fromFile?.() ?? token,
    username: str(body, 'username'),
    password: str(body, 'password'),
    impersonate: str(body, 'as'),
  });
}

/**
 * Builds a connection from kubeconfig files (an explicit --kubeconfig, a KUBECONFIG list or NPD's
 * `auth=` override parameter). Throws when the files name no usable context.
 */
export async function loadKubeconfig(paths: readonly string[], deps: KubeconfigDeps): Promise<ApiConnection> {
  const merged = await mergeFiles(paths);
  const ctxName = merged.currentContext;
  if (ctxName === undefined) throw new Error(`kubeconfig ${paths.join(':')}: no current-context`);
  const ctx = merged.contexts.get(ctxName);
  if (!ctx) throw new Error(`kubeconfig: context "${ctxName}" not found`);
  const clusterName = str(ctx.body, 'cluster') ?? '';
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) throw new Error(`kubeconfig: cluster "${clusterName}" of context "${ctxName}" not found`);
  const server = str(cluster.body, 'server')?.replace(/\/+$/, '');
  if (server === undefined) throw new Error(`kubeconfig: cluster "${clusterName}" has no server`);
  if (str(cluster.body, 'proxy-url') !== undefined) {
    deps.logger?.warn({ cluster: clusterName }, 'kubeconfig proxy-url is not supported; connecting directly');
  }
  const userName = str(ctx.body, 'user') ?? '';
  const user = merged.users.get(userName);
  return {
    server,
    source: 'kubeconfig',
    tls: clusterTls(cluster, user),
    authHeaders: userAuth(server, userName, user, deps.clock),
  };
}

/** The existing files of a KUBECONFIG-style list; client-go ignores the missing ones. */
export function existingKubeconfigFiles(list: string, delimiter = ':'): string[] {
  return list.split(delimiter).filter((p) => p !== '' && existsSync(p));
}
