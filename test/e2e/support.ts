/**
 * Shared pieces of the end-to-end suite: the agent as a real process against the real control plane,
 * driven by marked lines written into the real /dev/kmsg.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO } from '../support/agent-process.ts';

export { type AgentProcess, metricValue, startAgent, waitFor } from '../support/agent-process.ts';

export function marker(prefix = 'e2e'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

export function workDir(): string {
  return mkdtempSync(join(tmpdir(), 'npd-e2e-agent-'));
}

/** A shipped rule file with lookback 0, so the agent never replays lines earlier tests wrote. */
export function shippedRules(dir: string, name: string): string {
  const text = readFileSync(join(REPO, 'rules', name), 'utf8').replace(/^lookback: .*$/m, 'lookback: 0s');
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

export function writeConfig(dir: string, name: string, lines: readonly string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Writes kernel-log lines; one open per line sidesteps /dev/kmsg's per-open rate limit. */
export function kmsg(...lines: string[]): void {
  for (const line of lines) writeFileSync('/dev/kmsg', `<3>${line}\n`);
}

export function agentArgs(kubeconfig: string, node: string, configs: readonly string[]): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${node}`,
    `--config.system-log-monitor=${configs.join(',')}`,
  ];
}

export interface KubeEventJson {
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  reason: string;
  message: string;
  type: string;
  count?: number;
  source?: { component?: string; host?: string };
  involvedObject: { kind: string; name: string; uid?: string; apiVersion?: string; namespace?: string };
}

export interface NodeConditionJson {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
}

/** The Node's conditions as `kubectl get node -o json` shows them. */
export async function nodeConditions(cp: {
  nodeName: string;
  kubectl(args: string[]): Promise<string>;
}): Promise<NodeConditionJson[]> {
  const node = JSON.parse(await cp.kubectl(['get', 'node', cp.nodeName, '-o', 'json'])) as {
    status?: { conditions?: NodeConditionJson[] };
  };
  return node.status?.conditions ?? [];
}

/**
 * A TCP pass-through in front of the apiserver that only accepts connections while `open`: what a
 * load balancer health-checking /readyz does for real agents. Without it, a request that lands while a
 * restarting apiserver serves but has not synced RBAC yet is refused with 403.
 */
export interface Gate {
  readonly port: number;
  open: boolean;
  close(): Promise<void>;
}

export async function readinessGate(upstreamPort: number): Promise<Gate> {
  const { createServer, connect } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const gate = { port: 0, open: true, close: async () => {} } as Gate;
  const server = createServer((client) => {
    if (!gate.open) {
      client.destroy();
      return;
    }
    const upstream = connect(upstreamPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  (gate as { port: number }).port = (server.address() as { port: number }).port;
  gate.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return gate;
}

/** A copy of a kubeconfig (JSON or YAML) whose every cluster points at another local port. */
export function kubeconfigVia(kubeconfig: string, port: number, dir: string): string {
  const config = parseYaml(readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const { cluster } of config.clusters) cluster.server = `https://127.0.0.1:${port}`;
  const file = join(dir, 'kubeconfig-via-gate');
  writeFileSync(file, JSON.stringify(config));
  return file;
}
