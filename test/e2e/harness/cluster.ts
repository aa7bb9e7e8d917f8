/**
 * The running etcd + kube-apiserver pair of one control plane: starting, readiness, restarts and
 * stopping, plus the admin REST calls the bring-up and ControlPlane methods need. State lives in one
 * object because a restart (new token user) and stop() both act on the same processes.
 */
import * as fs from 'node:fs';
import { httpsRequest } from './http.ts';
import { type TokenStore, writeKubeconfigFile } from './kubeconfig.ts';
import { apiserverArgv, etcdArgv, type Layout } from './layout.ts';
import { ManagedProcess, readTail, sleep } from './processes.ts';
import type { ControlPlaneBinaries, HttpResult, RequestOptions } from './types.ts';

export interface ClusterSettings {
  layout: Layout;
  binaries: ControlPlaneBinaries;
  tokens: TokenStore;
  adminToken: string;
  readyTimeoutMs: number;
  extraApiserverArgs: string[];
  log: (line: string) => void;
}

export class Cluster {
  readonly layout: Layout;
  readonly binaries: ControlPlaneBinaries;
  readonly tokens: TokenStore;
  readonly log: (line: string) => void;
  etcd: ManagedProcess | undefined;
  apiserver: ManagedProcess | undefined;
  failed = false;
  stopped = false;
  private readonly adminToken: string;
  private readonly readyTimeoutMs: number;
  private readonly apiserverArgs: string[];
  private readonly etcdArgs: string[];

  constructor(s: ClusterSettings) {
    this.layout = s.layout;
    this.binaries = s.binaries;
    this.tokens = s.tokens;
    this.log = s.log;
    this.adminToken = s.adminToken;
    this.readyTimeoutMs = s.readyTimeoutMs;
    this.apiserverArgs = apiserverArgv(s.layout, s.binaries, s.extraApiserverArgs);
    this.etcdArgs = etcdArgv(s.layout, s.binaries);
  }

  /** An arrow, so that ControlPlane can hand it out as a plain function. */
  readonly request = (method: string, apiPath: string, ropts: RequestOptions = {}): Promise<HttpResult> =>
    httpsRequest(`${this.layout.url}${apiPath}`, method, { ...ropts, token: ropts.token ?? this.adminToken });

  /** request(), but throws unless the status is one of `ok`. */
  async mustRequest(method: string, apiPath: string, body: unknown, ok: number[]): Promise<HttpResult> {
    const r = await this.request(method, apiPath, { body });
    if (!ok.includes(r.status)) throw new Error(`${method} ${apiPath}: HTTP ${r.status}: ${r.text}`);
    return r;
  }

  async startEtcd(): Promise<void> {
    const t0 = Date.now();
    this.etcd = new ManagedProcess('etcd', this.etcdArgs, this.layout.etcdLog);
    await this.waitEtcd();
    this.log(`etcd ${this.binaries.etcdVersion} healthy at ${this.layout.etcdUrl} in ${Date.now() - t0} ms`);
  }

  private async waitEtcd(): Promise<void> {
    const { etcdUrl, etcdLog } = this.layout;
    const deadline = Date.now() + this.readyTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const etcd = this.etcd;
      if (etcd?.exited) throw new Error(`etcd exited (${etcd.describeExit()}):\n${readTail(etcdLog, 30)}`);
      try {
        const res = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
        last = await res.text();
        if (res.ok && last.includes('"health":"true"')) return;
      } catch (e) {
        last = String(e);
      }
      await sleep(100);
    }
    throw new Error(`etcd not healthy after ${this.readyTimeoutMs} ms (${last}):\n${readTail(etcdLog, 30)}`);
  }

  private async waitReady(): Promise<void> {
    const { apiserverLog } = this.layout;
    const deadline = Date.now() + this.readyTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const apiserver = this.apiserver;
      if (apiserver?.exited) {
        throw new Error(
          `kube-apiserver exited (${apiserver.describeExit()}):\n${readTail(apiserverLog, 40)}`,
        );
      }
      try {
        const r = await this.request('GET', '/readyz', { timeoutMs: 5000 });
        if (r.status === 200) return;
        last = `HTTP ${r.status} ${r.text.slice(0, 500)}`;
      } catch (e) {
        last = String(e);
      }
      await sleep(200);
    }
    throw new Error(
      `kube-apiserver not ready after ${this.readyTimeoutMs} ms (${last}):\n${readTail(apiserverLog, 40)}`,
    );
  }

  /** Starts kube-apiserver (again) and waits for /readyz; rewrites the token file first if needed. */
  async startApiserver(): Promise<void> {
    if (this.stopped) throw new Error('control plane stopped');
    if (this.apiserver && !this.apiserver.exited) throw new Error('kube-apiserver is already running');
    if (this.tokens.dirty) this.tokens.write();
    const t0 = Date.now();
    this.apiserver = new ManagedProcess('kube-apiserver', this.apiserverArgs, this.layout.apiserverLog);
    await this.waitReady();
    this.log(
      `kube-apiserver ${this.binaries.kubernetesVersion} ready at ${this.layout.url} in ${Date.now() - t0} ms`,
    );
  }

  async stopApiserver(): Promise<void> {
    if (!this.apiserver) return;
    const p = this.apiserver;
    await p.stop();
    this.log('kube-apiserver stopped');
  }

  /** Stops kube-apiserver, then etcd, even if the first fails; rethrows the first error. */
  async stopAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const p of [this.apiserver, this.etcd]) {
      if (!p) continue;
      try {
        await p.stop();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];
  }

  /** Removes the work folder, or keeps it (and says where) for a post-mortem. */
  finish(keepDir: boolean): void {
    const { workDir } = this.layout;
    if (keepDir) {
      process.stderr.write(
        `[controlplane] kept ${workDir} (kube-apiserver.log, etcd.log, audit.log, kubeconfig-*.yaml)\n`,
      );
    } else {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  }

  pids(): { etcd?: number; apiserver?: number } {
    const { etcd, apiserver } = this;
    return {
      ...(etcd && !etcd.exited ? { etcd: etcd.pid } : {}),
      ...(apiserver && !apiserver.exited ? { apiserver: apiserver.pid } : {}),
    };
  }

  async bindClusterRole(user: string, clusterRole: string): Promise<void> {
    const name = `npd-e2e:${clusterRole}:${user}`.replace(/[^a-z0-9.:-]/gi, '-').toLowerCase();
    await this.mustRequest(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
      [201, 409],
    );
  }

  writeKubeconfigFile(user: string, token: string): string {
    const { workDir, url, caFile } = this.layout;
    return writeKubeconfigFile(workDir, url, caFile, user, token);
  }
}
