/**
 * A real control plane for the end-to-end tests: etcd + kube-apiserver built from Go modules by
 * test/e2e/controlplane/build.sh, started on free loopback ports, with static-token users, RBAC,
 * an audit log and one Node object. No controller-manager, scheduler or kubelet runs.
 *
 *   const cp = await startControlPlane();
 *   try { await cp.kubectl(['get', 'node', cp.nodeName]); } finally { await cp.stop(); }
 *
 * Only 127.0.0.1 is used. Every process runs in its own process group behind a tiny shell guard that
 * SIGKILLs the group when this Node.js process goes away, so a crashed test leaves no strays.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BUILD_SCRIPT = path.join(REPO_ROOT, 'test/e2e/controlplane/build.sh');
export const CLUSTER_ROLE_FILE = path.join(REPO_ROOT, 'deploy/base/clusterrole.yaml');
export const KUBECTL = '/usr/bin/kubectl';
export const DEFAULT_NODE_NAME = 'npd-e2e-node';
/** The user name of the agent identity (a static token user bound only to the ClusterRole file). */
export const AGENT_USER = 'npd-agent';
export const ADMIN_USER = 'npd-e2e-admin';

export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
  /** gitVersion the kube-apiserver was stamped with, e.g. v1.34.4 */
  kubernetesVersion: string;
  /** e.g. v3.6.16 */
  etcdVersion: string;
}

export interface StaticUser {
  name: string;
  groups?: string[];
}

export interface ControlPlaneOptions {
  /** Name of the Node object to create (default npd-e2e-node). */
  nodeName?: string;
  /** Extra labels for the Node. */
  nodeLabels?: Record<string, string>;
  /** Give the Node a Ready condition and an InternalIP, as a kubelet would (default true). */
  nodeReady?: boolean;
  /** Use these binaries instead of running build.sh. */
  binaries?: ControlPlaneBinaries;
  /** ClusterRole manifest bound to the agent user (default deploy/base/clusterrole.yaml). */
  clusterRoleFile?: string;
  /** More static-token users, known from the first start (see writeKubeconfig). */
  users?: StaticUser[];
  /** Extra kube-apiserver flags (`--flag=value`). */
  extraApiserverArgs?: string[];
  /** How long to wait for etcd and /readyz, each (default 120 s). */
  readyTimeoutMs?: number;
  /** Keep the work folder after stop() (default: env NPD_E2E_KEEP=1). */
  keep?: boolean;
  /** Where progress lines go (default: stderr when env NPD_E2E_VERBOSE=1, else nowhere). */
  log?: (line: string) => void;
}

export interface HttpResult {
  status: number;
  text: string;
  /** JSON body when the response is JSON, else undefined. */
  json: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** Defaults to application/json, or application/strategic-merge-patch+json for PATCH. */
  contentType?: string;
  /** Bearer token (default: the admin's). */
  token?: string;
  timeoutMs?: number;
}

export interface KubectlOptions {
  kubeconfig: string;
  /** HOME for kubectl (its discovery cache); default: a kube-home folder beside the kubeconfig. */
  home?: string;
  input?: string;
  timeoutMs?: number;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface AuditMark {
  /** Byte offset in the audit log: entries written after the mark start at or after it. */
  offset: number;
}

export interface AuditFilter {
  verb?: string | string[];
  /** objectRef.resource, e.g. 'events', 'nodes'. */
  resource?: string;
  /** objectRef.subresource, e.g. 'status'; null matches only requests without a subresource. */
  subresource?: string | null;
  /** objectRef.apiGroup: '' (core) or 'events.k8s.io'; undefined matches any. */
  apiGroup?: string;
  name?: string;
  namespace?: string;
  /** user.username, e.g. AGENT_USER. */
  user?: string;
  /** Default 'ResponseComplete', so each request counts once. */
  stage?: string;
  /** responseStatus.code; e.g. 201, or a predicate. */
  code?: number | ((code: number) => boolean);
}

export interface AuditEvent {
  verb: string;
  stage: string;
  requestURI: string;
  user?: { username?: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    apiGroup?: string;
    namespace?: string;
    name?: string;
  };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  [key: string]: unknown;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  etcdUrl: string;
  binaries: ControlPlaneBinaries;
  /** Kubeconfig of a system:masters user. */
  adminKubeconfig: string;
  adminToken: string;
  /** Kubeconfig of AGENT_USER, bound by a ClusterRoleBinding only to the ClusterRole file's role. */
  agentKubeconfig: string;
  agentToken: string;
  /** metadata.name of the ClusterRole read from the ClusterRole file. */
  clusterRoleName: string;
  nodeName: string;
  nodeUid: string;
  workDir: string;
  /** kube-apiserver's certificate (with its self-signed CA), as the kubeconfigs' certificate-authority. */
  caFile: string;
  auditLogPath: string;
  apiserverLog: string;
  etcdLog: string;
  /** Process ids (each also its process group id) while running. */
  pids(): { etcd?: number; apiserver?: number };

  /**
   * A kubeconfig for a static-token user, optionally bound to a ClusterRole. A user not known when the
   * apiserver started is added to the token file, which kube-apiserver reads only at start: then
   * the apiserver is restarted (same port) before this resolves.
   */
  writeKubeconfig(user: string, opts?: { groups?: string[]; clusterRole?: string }): Promise<string>;
  /** Raw REST call against the apiserver (admin token unless opts.token). Never throws on status. */
  request(method: string, apiPath: string, opts?: RequestOptions): Promise<HttpResult>;
  /** Runs kubectl (default: admin kubeconfig); throws with stderr on a non-zero exit. */
  kubectl(args: string[], opts?: Partial<KubectlOptions>): Promise<string>;
  /** Same, but returns the exit code and both streams and never throws on a non-zero exit. */
  kubectlResult(args: string[], opts?: Partial<KubectlOptions>): Promise<KubectlResult>;

  /** Marks the current end of the audit log. */
  auditMark(): AuditMark;
  auditEvents(filter?: AuditFilter, since?: AuditMark): AuditEvent[];
  countAudit(filter?: AuditFilter, since?: AuditMark): number;
  /**
   * Polls the audit log until at least `count` entries match (entries land just after the response,
   * so right after a request the count may lag for a few ms); returns the last count seen.
   */
  waitForAudit(
    filter: AuditFilter,
    since: AuditMark | undefined,
    count: number,
    timeoutMs?: number,
  ): Promise<number>;

  /** Stops kube-apiserver only (SIGTERM, then SIGKILL); etcd keeps the data. */
  stopApiserver(): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits for /readyz. */
  startApiserver(): Promise<void>;
  /** Keep the work folder on stop() (logs, audit log, kubeconfigs). */
  markFailed(): void;
  /** Stops everything and removes the work folder unless failed, opts.keep or NPD_E2E_KEEP=1. */
  stop(opts?: { failed?: boolean }): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Building / finding the binaries

/** Runs build.sh (a no-op after the first build) and returns the binaries it reports. */
export async function ensureControlPlaneBinaries(
  log?: (line: string) => void,
): Promise<ControlPlaneBinaries> {
  const { code, stdout, stderr } = await run('bash', [BUILD_SCRIPT], {
    timeoutMs: 60 * 60_000,
    env: process.env,
    onStderr: log,
  });
  if (code !== 0) {
    throw new Error(`${BUILD_SCRIPT} failed (exit ${code}):\n${tail(stderr, 40)}`);
  }
  const vars = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) vars.set(m[1], m[2]);
  }
  const need = (k: string): string => {
    const v = vars.get(k);
    if (!v) throw new Error(`${BUILD_SCRIPT} printed no ${k}=…:\n${stdout}`);
    return v;
  };
  return {
    kubeApiserver: need('KUBE_APISERVER'),
    etcd: need('ETCD'),
    kubernetesVersion: need('KUBERNETES_VERSION'),
    etcdVersion: need('ETCD_VERSION'),
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

interface RunOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  input?: string;
  onStderr?: ((line: string) => void) | undefined;
}

function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      {
        env: opts.env,
        timeout: opts.timeoutMs ?? 60_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${tail(stderr, 20)}`));
          return;
        }
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
    if (opts.onStderr) {
      const onStderr = opts.onStderr;
      child.stderr?.on('data', (d: Buffer | string) => {
        for (const l of String(d).split('\n')) if (l.trim()) onStderr(l);
      });
    }
    child.stdin?.end(opts.input ?? '');
  });
}

function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}

function readTail(file: string, lines: number): string {
  try {
    return tail(fs.readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log)';
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('no port'));
      });
    });
  });
}

async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * Whether a process of the group is still running. Zombies do not count: orphans are reaped by this
 * machine's init only about once a second, and a zombie holds no port, file or memory.
 */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

// Every live process group, killed synchronously if this process exits without stop().
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
}

/**
 * Starts `argv` in a new process group (its pid is the group id). A shell guard holds our stdin
 * pipe: when this Node.js process dies, however, the pipe closes and the guard SIGKILLs the group.
 */
const GUARD = 'exec 3<&0; ( read -r _ <&3; kill -9 -$$ ) & exec "$@" </dev/null 3<&-';

class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  readonly pid: number;
  exited = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private readonly exitPromise: Promise<void>;

  constructor(name: string, argv: string[], logFile: string) {
    this.name = name;
    this.logFile = logFile;
    const fd = fs.openSync(logFile, 'a');
    try {
      fs.writeSync(fd, `\n==== ${new Date().toISOString()} starting ${argv.join(' ')}\n`);
      this.child = spawn('/bin/sh', ['-c', GUARD, 'guard', ...argv], {
        detached: true,
        stdio: ['pipe', fd, fd],
        env: { ...process.env, HOME: path.dirname(logFile) },
      });
    } finally {
      fs.closeSync(fd);
    }
    if (this.child.pid === undefined) throw new Error(`could not start ${name}`);
    this.pid = this.child.pid;
    liveGroups.add(this.pid);
    installExitHook();
    this.exitPromise = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      });
    });
    this.child.once('error', () => {
      this.exited = true;
    });
    // Neither the process nor our end of its guard pipe keeps the event loop alive.
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.child.stdin?.on('error', () => {});
  }

  describeExit(): string {
    return this.exitSignal ? `signal ${this.exitSignal}` : `exit code ${this.exitCode}`;
  }

  /** SIGTERM to the group, SIGKILL after graceMs; resolves when no process of the group is left. */
  async stop(graceMs = 10_000): Promise<void> {
    signalGroup(this.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && (!this.exited || processGroupAlive(this.pid))) await sleep(50);
    if (!this.exited || processGroupAlive(this.pid)) {
      signalGroup(this.pid, 'SIGKILL');
      const hard = Date.now() + 10_000;
      while (Date.now() < hard && (!this.exited || processGroupAlive(this.pid))) await sleep(50);
    }
    await Promise.race([this.exitPromise, sleep(1000)]);
    this.child.stdin?.destroy();
    if (processGroupAlive(this.pid))
      throw new Error(`${this.name} (process group ${this.pid}) would not die`);
    liveGroups.delete(this.pid);
  }
}

const insecureAgent = new https.Agent({ keepAlive: false, rejectUnauthorized: false });

function httpsRequest(url: string, method: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] =
        opts.contentType ??
        (method === 'PATCH' ? 'application/strategic-merge-patch+json' : 'application/json');
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const req = https.request(
      url,
      { method, headers, agent: insecureAgent, timeout: opts.timeoutMs ?? 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if ((res.headers['content-type'] ?? '').includes('json')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
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

function csvField(s: string): string {
  if (/[",\n]/.test(s)) return `"${s.replaceAll('"', '""')}"`;
  return s;
}

// ---------------------------------------------------------------------------------------------
// kubectl

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

// ---------------------------------------------------------------------------------------------
// Audit log

/** The current end of an audit log (0 when it does not exist yet). */
export function auditMark(auditLogPath: string): AuditMark {
  try {
    return { offset: fs.statSync(auditLogPath).size };
  } catch {
    return { offset: 0 };
  }
}

function matches(ev: AuditEvent, f: AuditFilter): boolean {
  if (ev.stage !== (f.stage ?? 'ResponseComplete')) return false;
  if (f.verb !== undefined) {
    const verbs = Array.isArray(f.verb) ? f.verb : [f.verb];
    if (!verbs.includes(ev.verb)) return false;
  }
  const ref = ev.objectRef ?? {};
  if (f.resource !== undefined && ref.resource !== f.resource) return false;
  if (f.subresource === null && ref.subresource) return false;
  if (typeof f.subresource === 'string' && ref.subresource !== f.subresource) return false;
  if (f.apiGroup !== undefined && (ref.apiGroup ?? '') !== f.apiGroup) return false;
  if (f.name !== undefined && ref.name !== f.name) return false;
  if (f.namespace !== undefined && ref.namespace !== f.namespace) return false;
  if (f.user !== undefined && ev.user?.username !== f.user) return false;
  if (f.code !== undefined) {
    const code = ev.responseStatus?.code ?? 0;
    if (typeof f.code === 'number' ? code !== f.code : !f.code(code)) return false;
  }
  return true;
}

/** Complete JSON lines of the audit log written after `since`, filtered. */
export function readAuditEvents(
  auditLogPath: string,
  filter: AuditFilter = {},
  since?: AuditMark,
): AuditEvent[] {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(auditLogPath);
  } catch {
    return [];
  }
  const start = Math.min(since?.offset ?? 0, buf.length);
  const end = buf.lastIndexOf(0x0a) + 1; // ignore a line still being written
  if (end <= start) return [];
  const out: AuditEvent[] = [];
  for (const line of buf.subarray(start, end).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    let ev: AuditEvent;
    try {
      ev = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    if (matches(ev, filter)) out.push(ev);
  }
  return out;
}

/** Counts audit-log entries (one per request: stage ResponseComplete by default) after `since`. */
export function countAuditEvents(auditLogPath: string, filter: AuditFilter = {}, since?: AuditMark): number {
  return readAuditEvents(auditLogPath, filter, since).length;
}

/** Polls until at least `count` entries match or `timeoutMs` passes; returns the last count. */
export async function waitForAuditEvents(
  auditLogPath: string,
  filter: AuditFilter,
  since: AuditMark | undefined,
  count: number,
  timeoutMs = 5000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = countAuditEvents(auditLogPath, filter, since);
    if (n >= count || Date.now() >= deadline) return n;
    await sleep(25);
  }
}

/**
 * Audit policy: nothing for the apiserver's own loopback client; Metadata for Events (core and
 * events.k8s.io), Nodes (incl. nodes/status) and everything the agent user does; nothing else.
 * RequestReceived is omitted, so there is one entry per request (two for watches: ResponseStarted too).
 */
export function auditPolicyYaml(agentUser = AGENT_USER): string {
  return JSON.stringify(
    {
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [
        // The apiserver's own informers (list/watch of nodes) are noise for the tests.
        { level: 'None', users: ['system:apiserver'] },
        {
          level: 'Metadata',
          resources: [
            { group: '', resources: ['events', 'nodes', 'nodes/status'] },
            { group: 'events.k8s.io', resources: ['events'] },
          ],
        },
        { level: 'Metadata', users: [agentUser] },
        { level: 'None' },
      ],
    },
    null,
    2,
  );
}

// ---------------------------------------------------------------------------------------------
// The control plane

interface TokenEntry {
  token: string;
  user: string;
  groups: string[];
}

function objName(json: unknown): string | undefined {
  const md = (json as { metadata?: { name?: unknown } } | undefined)?.metadata;
  return typeof md?.name === 'string' ? md.name : undefined;
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log =
    opts.log ??
    (process.env.NPD_E2E_VERBOSE === '1'
      ? (l: string) => process.stderr.write(`[controlplane] ${l}\n`)
      : () => {});
  const keepEnv = process.env.NPD_E2E_KEEP === '1';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const nodeName = opts.nodeName ?? DEFAULT_NODE_NAME;

  const binaries = opts.binaries ?? (await ensureControlPlaneBinaries(log));
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npd-e2e-cp-'));
  const certDir = path.join(workDir, 'certs');
  fs.mkdirSync(certDir);
  const [etcdPort, etcdPeerPort, port] = (await freePorts(3)) as [number, number, number];
  const url = `https://127.0.0.1:${port}`;
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const caFile = path.join(certDir, 'apiserver.crt');
  const auditLogPath = path.join(workDir, 'audit.log');
  const apiserverLog = path.join(workDir, 'kube-apiserver.log');
  const etcdLog = path.join(workDir, 'etcd.log');
  const tokenFile = path.join(workDir, 'tokens.csv');
  const auditPolicyFile = path.join(workDir, 'audit-policy.yaml');
  fs.writeFileSync(auditPolicyFile, auditPolicyYaml());

  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const saPub = path.join(workDir, 'sa.pub');
  const saKey = path.join(workDir, 'sa.key');
  fs.writeFileSync(saPub, publicKey);
  fs.writeFileSync(saKey, privateKey, { mode: 0o600 });

  const newToken = () => randomBytes(24).toString('hex');
  const tokens = new Map<string, TokenEntry>();
  const addUser = (user: string, groups: string[]): TokenEntry => {
    const e = { token: newToken(), user, groups };
    tokens.set(user, e);
    return e;
  };
  const writeTokenFile = () => {
    const lines = [...tokens.values()].map((e) =>
      [e.token, csvField(e.user), csvField(randomUUID()), csvField(e.groups.join(','))].join(','),
    );
    fs.writeFileSync(tokenFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  };
  const admin = addUser(ADMIN_USER, ['system:masters']);
  const agent = addUser(AGENT_USER, []);
  for (const u of opts.users ?? []) addUser(u.name, u.groups ?? []);
  writeTokenFile();
  let tokenFileDirty = false;

  const apiserverArgs = [
    binaries.kubeApiserver,
    `--etcd-servers=${etcdUrl}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--cert-dir=${certDir}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--authorization-mode=RBAC',
    `--service-account-issuer=${url}/`,
    `--service-account-key-file=${saPub}`,
    `--service-account-signing-key-file=${saKey}`,
    `--token-auth-file=${tokenFile}`,
    `--audit-policy-file=${auditPolicyFile}`,
    `--audit-log-path=${auditLogPath}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxbackup=0',
    '--audit-log-maxsize=1024', // MB; 0 would mean lumberjack's 100 MB, and a rotation breaks AuditMarks
    // A loopback advertise address is not a valid Endpoints IP: don't reconcile the kubernetes Service.
    '--endpoint-reconciler-type=none',
    ...(opts.extraApiserverArgs ?? []),
  ];
  const etcdArgs = [
    binaries.etcd,
    '--name=npd-e2e',
    `--data-dir=${path.join(workDir, 'etcd-data')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-cluster=npd-e2e=http://127.0.0.1:${etcdPeerPort}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];

  let etcd: ManagedProcess | undefined;
  let apiserver: ManagedProcess | undefined;
  let failed = false;
  let stopped = false;

  const request = (method: string, apiPath: string, ropts: RequestOptions = {}) =>
    httpsRequest(`${url}${apiPath}`, method, { ...ropts, token: ropts.token ?? admin.token });

  const mustRequest = async (
    method: string,
    apiPath: string,
    body: unknown,
    ok: number[],
  ): Promise<HttpResult> => {
    const r = await request(method, apiPath, { body });
    if (!ok.includes(r.status)) throw new Error(`${method} ${apiPath}: HTTP ${r.status}: ${r.text}`);
    return r;
  };

  const waitEtcd = async () => {
    const deadline = Date.now() + readyTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
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
    throw new Error(`etcd not healthy after ${readyTimeoutMs} ms (${last}):\n${readTail(etcdLog, 30)}`);
  };

  const waitReady = async () => {
    const deadline = Date.now() + readyTimeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (apiserver?.exited) {
        throw new Error(
          `kube-apiserver exited (${apiserver.describeExit()}):\n${readTail(apiserverLog, 40)}`,
        );
      }
      try {
        const r = await request('GET', '/readyz', { timeoutMs: 5000 });
        if (r.status === 200) return;
        last = `HTTP ${r.status} ${r.text.slice(0, 500)}`;
      } catch (e) {
        last = String(e);
      }
      await sleep(200);
    }
    throw new Error(
      `kube-apiserver not ready after ${readyTimeoutMs} ms (${last}):\n${readTail(apiserverLog, 40)}`,
    );
  };

  const startApiserver = async () => {
    if (stopped) throw new Error('control plane stopped');
    if (apiserver && !apiserver.exited) throw new Error('kube-apiserver is already running');
    if (tokenFileDirty) {
      writeTokenFile();
      tokenFileDirty = false;
    }
    const t0 = Date.now();
    apiserver = new ManagedProcess('kube-apiserver', apiserverArgs, apiserverLog);
    await waitReady();
    log(`kube-apiserver ${binaries.kubernetesVersion} ready at ${url} in ${Date.now() - t0} ms`);
  };

  const stopApiserver = async () => {
    if (!apiserver) return;
    const p = apiserver;
    await p.stop();
    log('kube-apiserver stopped');
  };

  const writeKubeconfigFile = (user: string, token: string): string => {
    const file = path.join(workDir, `kubeconfig-${user.replace(/[^A-Za-z0-9_.-]/g, '_')}.yaml`);
    fs.writeFileSync(file, kubeconfigYaml({ server: url, caFile, user, token }), { mode: 0o600 });
    return file;
  };

  const bindClusterRole = async (user: string, clusterRole: string) => {
    const name = `npd-e2e:${clusterRole}:${user}`.replace(/[^a-z0-9.:-]/gi, '-').toLowerCase();
    await mustRequest(
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
  };

  const stopAll = async () => {
    const errors: unknown[] = [];
    for (const p of [apiserver, etcd]) {
      if (!p) continue;
      try {
        await p.stop();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];
  };

  const finish = (keepDir: boolean) => {
    if (keepDir) {
      process.stderr.write(
        `[controlplane] kept ${workDir} (kube-apiserver.log, etcd.log, audit.log, kubeconfig-*.yaml)\n`,
      );
    } else {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  };

  // --- bring-up
  let clusterRoleName = '';
  let nodeUid = '';
  try {
    const t0 = Date.now();
    etcd = new ManagedProcess('etcd', etcdArgs, etcdLog);
    await waitEtcd();
    log(`etcd ${binaries.etcdVersion} healthy at ${etcdUrl} in ${Date.now() - t0} ms`);
    await startApiserver();

    // The agent's ClusterRole, from the repo's manifest, and a binding of the agent user to it alone.
    const roleFile = opts.clusterRoleFile ?? CLUSTER_ROLE_FILE;
    const role = parseYaml(fs.readFileSync(roleFile, 'utf8')) as unknown;
    const kind = (role as { kind?: unknown } | null)?.kind;
    clusterRoleName = objName(role) ?? '';
    if (kind !== 'ClusterRole' || !clusterRoleName) throw new Error(`${roleFile}: not a named ClusterRole`);
    await mustRequest('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role, [201]);
    await bindClusterRole(agent.user, clusterRoleName);

    // The Node, as a kubelet would register it.
    const created = await mustRequest(
      'POST',
      '/api/v1/nodes',
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: nodeName,
          labels: {
            'kubernetes.io/hostname': nodeName,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            ...opts.nodeLabels,
          },
        },
      },
      [201],
    );
    nodeUid = String((created.json as { metadata?: { uid?: unknown } }).metadata?.uid ?? '');
    if (!nodeUid) throw new Error(`POST /api/v1/nodes returned no uid: ${created.text}`);
    if (opts.nodeReady ?? true) {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await mustRequest(
        'PATCH',
        `/api/v1/nodes/${encodeURIComponent(nodeName)}/status`,
        {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'npd e2e harness: no kubelet runs here',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
            addresses: [
              { type: 'InternalIP', address: '127.0.0.1' },
              { type: 'Hostname', address: nodeName },
            ],
          },
        },
        [200],
      );
    }
  } catch (e) {
    failed = true;
    stopped = true;
    try {
      await stopAll();
    } catch {
      // reported below with the first error
    }
    finish(true);
    throw e;
  }

  const adminKubeconfig = writeKubeconfigFile(admin.user, admin.token);
  const agentKubeconfig = writeKubeconfigFile(agent.user, agent.token);

  const cp: ControlPlane = {
    url,
    port,
    etcdUrl,
    binaries,
    adminKubeconfig,
    adminToken: admin.token,
    agentKubeconfig,
    agentToken: agent.token,
    clusterRoleName,
    nodeName,
    nodeUid,
    workDir,
    caFile,
    auditLogPath,
    apiserverLog,
    etcdLog,
    pids: () => ({
      ...(etcd && !etcd.exited ? { etcd: etcd.pid } : {}),
      ...(apiserver && !apiserver.exited ? { apiserver: apiserver.pid } : {}),
    }),
    async writeKubeconfig(user, wopts = {}) {
      let entry = tokens.get(user);
      if (!entry) {
        entry = addUser(user, wopts.groups ?? []);
        tokenFileDirty = true;
        log(`new token user ${user}: restarting kube-apiserver to reload the token file`);
        await stopApiserver();
        await startApiserver();
      } else if (wopts.groups && wopts.groups.join(',') !== entry.groups.join(',')) {
        throw new Error(`user ${user} already exists with groups [${entry.groups.join(',')}]`);
      }
      if (wopts.clusterRole) await bindClusterRole(user, wopts.clusterRole);
      return writeKubeconfigFile(user, entry.token);
    },
    request,
    kubectl: (args, kopts = {}) => kubectl(args, { kubeconfig: adminKubeconfig, ...kopts }),
    kubectlResult: (args, kopts = {}) => kubectlResult(args, { kubeconfig: adminKubeconfig, ...kopts }),
    auditMark: () => auditMark(auditLogPath),
    auditEvents: (filter, since) => readAuditEvents(auditLogPath, filter, since),
    countAudit: (filter, since) => countAuditEvents(auditLogPath, filter, since),
    waitForAudit: (filter, since, count, timeoutMs) =>
      waitForAuditEvents(auditLogPath, filter, since, count, timeoutMs),
    stopApiserver,
    startApiserver,
    markFailed() {
      failed = true;
    },
    async stop(sopts = {}) {
      if (stopped) return;
      stopped = true;
      if (sopts.failed) failed = true;
      try {
        await stopAll();
      } catch (e) {
        finish(true);
        throw e;
      }
      finish(failed || keepEnv || opts.keep === true);
    },
  };
  return cp;
}
