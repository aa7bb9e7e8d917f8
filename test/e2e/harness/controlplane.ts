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

import * as path from 'node:path';
import { auditMark, countAuditEvents, readAuditEvents, waitForAuditEvents } from './audit.ts';
import { ensureControlPlaneBinaries, REPO_ROOT } from './binaries.ts';
import { installClusterRole, markNodeReady, registerNode } from './bootstrap.ts';
import { Cluster } from './cluster.ts';
import { ADMIN_USER, AGENT_USER, kubectl, kubectlResult, TokenStore } from './kubeconfig.ts';
import { prepareLayout } from './layout.ts';
import type { ControlPlane, ControlPlaneOptions } from './types.ts';

// This file is the harness's entry point: tests import everything from here, whichever module holds it.
export {
  auditMark,
  auditPolicyYaml,
  countAuditEvents,
  readAuditEvents,
  waitForAuditEvents,
} from './audit.ts';
export { BUILD_SCRIPT, ensureControlPlaneBinaries, REPO_ROOT } from './binaries.ts';
export { ADMIN_USER, AGENT_USER, KUBECTL, kubectl, kubectlResult } from './kubeconfig.ts';
export { freePort, processGroupAlive } from './processes.ts';
export type {
  AuditEvent,
  AuditFilter,
  AuditMark,
  ControlPlane,
  ControlPlaneBinaries,
  ControlPlaneOptions,
  HttpResult,
  KubectlOptions,
  KubectlResult,
  RequestOptions,
  StaticUser,
} from './types.ts';

export const CLUSTER_ROLE_FILE = path.join(REPO_ROOT, 'deploy/base/clusterrole.yaml');
export const DEFAULT_NODE_NAME = 'npd-e2e-node';

/** What a started control plane's methods need beyond the Cluster itself. */
interface Running {
  cluster: Cluster;
  opts: ControlPlaneOptions;
  keepEnv: boolean;
  nodeName: string;
  clusterRoleName: string;
  nodeUid: string;
  adminToken: string;
  agentToken: string;
  adminKubeconfig: string;
  agentKubeconfig: string;
}

function defaultLog(): (line: string) => void {
  return process.env.NPD_E2E_VERBOSE === '1'
    ? (l: string) => process.stderr.write(`[controlplane] ${l}\n`)
    : () => {};
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? defaultLog();
  const keepEnv = process.env.NPD_E2E_KEEP === '1';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const nodeName = opts.nodeName ?? DEFAULT_NODE_NAME;

  const binaries = opts.binaries ?? (await ensureControlPlaneBinaries(log));
  const layout = await prepareLayout(opts.nodeCluster);
  const tokens = new TokenStore(layout.tokenFile);
  const admin = tokens.add(ADMIN_USER, ['system:masters']);
  const agent = tokens.add(AGENT_USER, []);
  for (const u of opts.users ?? []) tokens.add(u.name, u.groups ?? []);
  tokens.write();

  const cluster = new Cluster({
    layout,
    binaries,
    tokens,
    adminToken: admin.token,
    readyTimeoutMs,
    extraApiserverArgs: opts.extraApiserverArgs ?? [],
    log,
  });
  const { clusterRoleName, nodeUid } = await bringUp(cluster, opts, nodeName, agent.user);
  return controlPlaneObject({
    cluster,
    opts,
    keepEnv,
    nodeName,
    clusterRoleName,
    nodeUid,
    adminToken: admin.token,
    agentToken: agent.token,
    adminKubeconfig: cluster.writeKubeconfigFile(admin.user, admin.token),
    agentKubeconfig: cluster.writeKubeconfigFile(agent.user, agent.token),
  });
}

/** Starts etcd and kube-apiserver and creates the agent's RBAC and the Node; on failure keeps the logs. */
async function bringUp(
  cluster: Cluster,
  opts: ControlPlaneOptions,
  nodeName: string,
  agentUser: string,
): Promise<{ clusterRoleName: string; nodeUid: string }> {
  try {
    await cluster.startEtcd();
    await cluster.startApiserver();
    const clusterRoleName = await installClusterRole(
      cluster,
      opts.clusterRoleFile ?? CLUSTER_ROLE_FILE,
      agentUser,
    );
    if (opts.nodeCluster) return { clusterRoleName, nodeUid: '' };
    const nodeUid = await registerNode(cluster, nodeName, opts.nodeLabels);
    if (opts.nodeReady ?? true) await markNodeReady(cluster, nodeName);
    return { clusterRoleName, nodeUid };
  } catch (e) {
    cluster.failed = true;
    cluster.stopped = true;
    try {
      await cluster.stopAll();
    } catch {
      // reported below with the first error
    }
    cluster.finish(true);
    throw e;
  }
}

// The ControlPlane is a plain object (as before the split), its properties in the same order.
function controlPlaneObject(r: Running): ControlPlane {
  const { cluster } = r;
  const { auditLogPath } = cluster.layout;
  return {
    ...controlPlaneFacts(r),
    pids: () => cluster.pids(),
    writeKubeconfig: (user, wopts = {}) => writeKubeconfig(cluster, user, wopts),
    request: cluster.request,
    kubectl: (args, kopts = {}) => kubectl(args, { kubeconfig: r.adminKubeconfig, ...kopts }),
    kubectlResult: (args, kopts = {}) => kubectlResult(args, { kubeconfig: r.adminKubeconfig, ...kopts }),
    auditMark: () => auditMark(auditLogPath),
    auditEvents: (filter, since) => readAuditEvents(auditLogPath, filter, since),
    countAudit: (filter, since) => countAuditEvents(auditLogPath, filter, since),
    waitForAudit: (filter, since, count, timeoutMs) =>
      waitForAuditEvents(auditLogPath, filter, since, count, timeoutMs),
    stopApiserver: () => cluster.stopApiserver(),
    startApiserver: () => cluster.startApiserver(),
    markFailed() {
      cluster.failed = true;
    },
    stop: (sopts = {}) => stopControlPlane(r, sopts),
  };
}

type ControlPlaneFacts = Omit<
  ControlPlane,
  | 'pids'
  | 'writeKubeconfig'
  | 'request'
  | 'kubectl'
  | 'kubectlResult'
  | 'auditMark'
  | 'auditEvents'
  | 'countAudit'
  | 'waitForAudit'
  | 'stopApiserver'
  | 'startApiserver'
  | 'markFailed'
  | 'stop'
>;

function controlPlaneFacts(r: Running): ControlPlaneFacts {
  const { layout, binaries } = r.cluster;
  return {
    url: layout.url,
    port: layout.port,
    etcdUrl: layout.etcdUrl,
    binaries,
    adminKubeconfig: r.adminKubeconfig,
    adminToken: r.adminToken,
    agentKubeconfig: r.agentKubeconfig,
    agentToken: r.agentToken,
    clusterRoleName: r.clusterRoleName,
    nodeName: r.nodeName,
    nodeUid: r.nodeUid,
    workDir: layout.workDir,
    caFile: layout.caFile,
    auditLogPath: layout.auditLogPath,
    apiserverLog: layout.apiserverLog,
    etcdLog: layout.etcdLog,
  };
}

async function writeKubeconfig(
  cluster: Cluster,
  user: string,
  wopts: { groups?: string[]; clusterRole?: string },
): Promise<string> {
  let entry = cluster.tokens.get(user);
  if (!entry) {
    entry = cluster.tokens.add(user, wopts.groups ?? []);
    cluster.log(`new token user ${user}: restarting kube-apiserver to reload the token file`);
    await cluster.stopApiserver();
    await cluster.startApiserver();
  } else if (wopts.groups && wopts.groups.join(',') !== entry.groups.join(',')) {
    throw new Error(`user ${user} already exists with groups [${entry.groups.join(',')}]`);
  }
  if (wopts.clusterRole) await cluster.bindClusterRole(user, wopts.clusterRole);
  return cluster.writeKubeconfigFile(user, entry.token);
}

async function stopControlPlane(r: Running, sopts: { failed?: boolean }): Promise<void> {
  const { cluster } = r;
  if (cluster.stopped) return;
  cluster.stopped = true;
  if (sopts.failed) cluster.failed = true;
  try {
    await cluster.stopAll();
  } catch (e) {
    cluster.finish(true);
    throw e;
  }
  cluster.finish(cluster.failed || r.keepEnv || r.opts.keep === true);
}
