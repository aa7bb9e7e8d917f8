import { readFileSync } from 'node:fs';
import type { Clock } from '../core/clock.ts';
import { CLIENT_NODE_VERSION } from '../core/version.ts';

/**
 * Produces the headers that authenticate one request; called per request so rotated credentials apply.
 * `budgetMs` is what is left of the request's deadline: a source that runs something may use no more.
 */
export type AuthHeaders = (budgetMs?: number) => Promise<Record<string, string>>;

/** Projected service-account tokens rotate hourly; client-go re-reads its token file once a minute. */
export const TOKEN_FILE_REREAD_MS = 60_000;

/**
 * A bearer token kept in a file. A failed re-read keeps the last good token, as client-go's cached token
 * source does: kubelet swaps the file atomically, so a read error is transient.
 */
export function fileToken(path: string, clock: Clock): () => string | undefined {
  let cached: string | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  return () => {
    const now = clock.now();
    if (now - readAt < TOKEN_FILE_REREAD_MS && cached !== undefined) return cached;
    try {
      const token = readFileSync(path, 'utf8').trim();
      if (token !== '') cached = token;
      readAt = now;
    } catch {
      // keep the previous token; the next request tries again
    }
    return cached;
  };
}

export interface StaticCredentials {
  readonly token?: () => string | undefined;
  readonly username?: string;
  readonly password?: string;
  readonly impersonate?: string;
}

export function staticAuth(creds: StaticCredentials): AuthHeaders {
  return async () => {
    const headers: Record<string, string> = {};
    const token = creds.token?.();
    if (token) {
      headers.authorization = `Bearer ${token}`;
    } else if (creds.username !== undefined && creds.username !== '') {
      const basic = Buffer.from(`${creds.username}:${creds.password ?? ''}`).toString('base64');
      headers.authorization = `Basic ${basic}`;
    }
    if (creds.impersonate) headers['impersonate-user'] = creds.impersonate;
    return headers;
  };
}

/** Replaces (or adds) the bearer token of another source, for NPD's useServiceAccount=true. */
export function withBearer(inner: AuthHeaders, token: () => string | undefined): AuthHeaders {
  return async (budgetMs) => {
    const headers = await inner(budgetMs);
    const value = token();
    if (value) headers.authorization = `Bearer ${value}`;
    return headers;
  };
}

/** A kubeconfig user with an auth-provider plugin. */
export interface PluginUser {
  readonly name: string;
  readonly authProvider?: unknown;
}

export const CLIENT_NODE = '@kubernetes/client-node';

/** Whether a module can be imported from here, without loading it. */
function installed(specifier: string): boolean {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/**
 * auth-provider users (GKE, OIDC) are delegated to @kubernetes/client-node; exec users have their own
 * bounded runner (exec-credential.ts). client-node is imported only here and only on first use, because
 * loading it costs about 70 MiB of RSS and a second of startup (its config module pulls in the whole
 * generated API), which in-cluster agents never need; the image leaves it out. Without it such a
 * kubeconfig fails at load, saying how to add it.
 */
export function pluginAuth(server: string, user: PluginUser, isInstalled = installed): AuthHeaders {
  if (!isInstalled(CLIENT_NODE)) {
    throw new Error(
      `kubeconfig user "${user.name}" uses auth-provider, which needs ${CLIENT_NODE}; it is not installed ` +
        `(the image leaves it out: in-cluster config and token or certificate users do not need it). ` +
        `Add it to the agent's node_modules (for the image: \`npm install ${CLIENT_NODE}@${CLIENT_NODE_VERSION}\` ` +
        'in a stage with npm, copied into /app/node_modules of an image built FROM it; docs/install.md), ' +
        'or use another kubeconfig user',
    );
  }
  let headersOf: Promise<() => Promise<Record<string, string>>> | undefined;
  const load = async () => {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'npd', server, skipTLSVerify: false }],
      users: [{ name: user.name, authProvider: user.authProvider }],
      contexts: [{ name: 'npd', cluster: 'npd', user: user.name }],
      currentContext: 'npd',
    });
    return async () => {
      const opts: { headers?: Record<string, unknown> } = {};
      await kc.applyToHTTPSOptions(opts);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = String(v);
      return headers;
    };
  };
  return async () => {
    headersOf ??= load();
    return (await headersOf)();
  };
}
