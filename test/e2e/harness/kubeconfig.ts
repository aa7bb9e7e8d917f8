/**
 * How test clients authenticate to the apiserver: static-token users (kube-apiserver's token file),
 * kubeconfig files for them, and kubectl run against such a kubeconfig.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from './processes.ts';
import type { KubectlOptions, KubectlResult } from './types.ts';

export const KUBECTL = '/usr/bin/kubectl';
/** The user name of the agent identity (a static token user bound only to the ClusterRole file). */
export const AGENT_USER = 'npd-agent';
export const ADMIN_USER = 'npd-e2e-admin';

export interface TokenEntry {
  token: string;
  user: string;
  groups: string[];
}

/**
 * The users of kube-apiserver's --token-auth-file. kube-apiserver reads that file only at start, so
 * a user added later makes the store dirty until the file is written again before a restart.
 */
export class TokenStore {
  readonly file: string;
  /** A user was added since the file was last written. */
  dirty = false;
  private readonly tokens = new Map<string, TokenEntry>();

  constructor(file: string) {
    this.file = file;
  }

  get(user: string): TokenEntry | undefined {
    return this.tokens.get(user);
  }

  add(user: string, groups: string[]): TokenEntry {
    const e = { token: randomBytes(24).toString('hex'), user, groups };
    this.tokens.set(user, e);
    this.dirty = true;
    return e;
  }

  write(): void {
    const lines = [...this.tokens.values()].map((e) =>
      [e.token, csvField(e.user), csvField(randomUUID()), csvField(e.groups.join(','))].join(','),
    );
    fs.writeFileSync(this.file, `${lines.join('\n')}\n`, { mode: 0o600 });
    this.dirty = false;
  }
}

function csvField(s: string): string {
  if (/[",\n]/.test(s)) return `"${s.replaceAll('"', '""')}"`;
  return s;
}

function kubeconfigYaml(opts: { server: string; caFile: string; user: string; token: string }): string {
  // JSON is YAML: no quoting surprises.
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'npd-e2e', cluster: { server: opts.server, 'certificate-authority': opts.caFile } }],
      users: [{ name: opts.user, user: { token: opts.token } }],
      contexts: [{ name: 'npd-e2e', context: { cluster: 'npd-e2e', user: opts.user } }],
      'current-context': 'npd-e2e',
      preferences: {},
    },
    null,
    2,
  );
}

/** Writes <dir>/kubeconfig-<user>.yaml (user name made file-safe) and returns its path. */
export function writeKubeconfigFile(
  dir: string,
  server: string,
  caFile: string,
  user: string,
  token: string,
): string {
  const file = path.join(dir, `kubeconfig-${user.replace(/[^A-Za-z0-9_.-]/g, '_')}.yaml`);
  fs.writeFileSync(file, kubeconfigYaml({ server, caFile, user, token }), { mode: 0o600 });
  return file;
}

/** Runs /usr/bin/kubectl with HOME set to a private folder; returns exit code, stdout and stderr. */
export async function kubectlResult(args: string[], opts: KubectlOptions): Promise<KubectlResult> {
  const home = opts.home ?? path.join(path.dirname(opts.kubeconfig), 'kube-home');
  fs.mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.KUBECONFIG;
  return run(KUBECTL, ['--kubeconfig', opts.kubeconfig, ...args], {
    env,
    timeoutMs: opts.timeoutMs ?? 60_000,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
}

/** Like kubectlResult, but returns stdout and throws on a non-zero exit. */
export async function kubectl(args: string[], opts: KubectlOptions): Promise<string> {
  const r = await kubectlResult(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  return r.stdout;
}
