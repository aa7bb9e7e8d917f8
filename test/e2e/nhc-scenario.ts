/**
 * One node of the NHC end-to-end test (repair-nhc.test.ts): a Node with the kubelet's Ready, the real
 * agent writing its conditions from a log file the test appends to, and the remediation CR NHC
 * creates for it.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlane } from './harness/controlplane.ts';
import { REMEDIATION_NAMESPACE, REMEDIATION_RESOURCE } from './nhc-controller.ts';
import { applyObject } from './repair-support.ts';
import { type AgentProcess, agentArgs, nodeConditions, startAgent, waitFor, writeConfig } from './support.ts';

export interface ScenarioContext {
  cp: ControlPlane;
  dir: string;
  nhcLog(): string;
}

// The shipped rules' patterns, copied (a filelog monitor needs its own file): rules/kernel.yaml's
// HardLockup (kernel/watchdog.c watchdog_hardlockup_check(), a latching KernelDeadlock) and
// rules/containerd.yaml's two CRI failures with their recovery line (containerd's CRI plugin failing
// to load, its CRI service exiting, its streaming server starting), with the lines those cite.
function config(dir: string, node: string, log: string): string {
  const cri = (reason: string, pattern: string) => [
    '  - type: permanent',
    '    condition: ContainerdCRIUnavailable',
    `    reason: ${reason}`,
    `    pattern: '${pattern}'`,
    `    recoverPattern: 'msg="Start streaming server".*'`,
  ];
  return writeConfig(dir, `${node}.yaml`, [
    'plugin: filelog',
    `logPath: ${log}`,
    'lookback: 5m',
    'source: e2e-repair-monitor',
    // The test writes the file: its conditions need a file whose every writer is trusted (docs/rules.md).
    'trustedWriter: any',
    'pluginConfig:',
    `  timestamp: '^(\\S+)'`,
    `  message: '^\\S+ \\S+ (?:kernel: \\[[^\\]]*\\]|containerd\\[\\d+\\]:) (.*)'`,
    `  timestampFormat: '2006-01-02T15:04:05Z07:00'`,
    'conditions:',
    '  - {type: KernelDeadlock, reason: KernelHasNoDeadlock, message: kernel has no deadlock}',
    '  - {type: ContainerdCRIUnavailable, reason: ContainerdCRIAvailable, message: containerd CRI plugin is loaded}',
    'rules:',
    '  - type: permanent',
    '    condition: KernelDeadlock',
    '    reason: HardLockup',
    `    pattern: 'Watchdog detected hard LOCKUP on cpu \\d+'`,
    ...cri(
      'ContainerdCRIPluginFailed',
      'failed to load plugin(?: |" .* id=)io\\.containerd\\.(?:grpc\\.v1\\.cri|cri\\.v1\\.(?:runtime|images))\\b.*',
    ),
    ...cri('ContainerdCRIServiceFailed', 'msg="Failed to run CRI service".*'),
  ]);
}

export const LINES = {
  hardLockup: 'kernel: [ 4330.654321] watchdog: Watchdog detected hard LOCKUP on cpu 2',
  criFailed:
    'containerd[812]: time="2026-12-04T10:00:00.000000000Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" error="invalid plugin config: ..."',
  criServiceFailed:
    'containerd[812]: time="2026-12-04T10:00:02.000000000Z" level=fatal msg="Failed to run CRI service" error="failed to recover state: ..."',
  criStarted:
    'containerd[812]: time="2026-12-04T10:00:05.000000000Z" level=info msg="Start streaming server"',
};

/** One node per scenario, so a remediation left by one cannot hide another's. */
export class Scenario {
  readonly log: string;
  readonly args: string[];
  agent?: AgentProcess;
  readonly node: string;
  private readonly cp: ControlPlane;
  private readonly ctx: ScenarioContext;
  constructor(ctx: ScenarioContext, node: string) {
    this.ctx = ctx;
    this.node = node;
    this.cp = ctx.cp;
    this.log = join(ctx.dir, `${node}.log`);
    writeFileSync(this.log, '');
    this.args = [
      ...agentArgs(ctx.cp.agentKubeconfig, node, []).slice(0, 2),
      `--config.system-log-monitor=${config(ctx.dir, node, this.log)}`,
    ];
  }
  async start(): Promise<void> {
    await readyNode(this.cp, this.node);
    await this.startAgent();
  }
  async startAgent(): Promise<void> {
    this.agent = await startAgent(this.args, { KUBECONFIG: '' });
    await waitFor(
      async () => (await this.condition('KernelDeadlock'))?.status === 'False',
      30_000,
      () => this.output(),
    );
  }
  /** The agent's own view (GET /conditions). */
  async published(): Promise<{ type: string; status: string; transition: string }[]> {
    return (await (await fetch(`${this.agent?.statusUrl}/conditions`)).json()) as never;
  }
  async restartAgent(): Promise<void> {
    this.agent = await startAgent(this.args, { KUBECONFIG: '' });
    const held = async () =>
      (await this.published()).some((c) => c.type === 'KernelDeadlock' && c.status === 'True');
    await waitFor(held, 30_000, () => this.output());
  }
  write(line: string): void {
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    appendFileSync(this.log, `${stamp} ${this.node} ${line}\n`);
  }
  async condition(type: string) {
    return (await nodeConditions({ nodeName: this.node, kubectl: (a) => this.cp.kubectl(a) })).find(
      (c) => c.type === type,
    );
  }
  async waitStatus(type: string, status: string): Promise<string> {
    await waitFor(
      async () => (await this.condition(type))?.status === status,
      30_000,
      () => this.output(),
    );
    return (await this.condition(type))?.lastTransitionTime ?? '';
  }
  /** The remediation CR NHC created for this node, or undefined. */
  async remediation(): Promise<{ metadata: { creationTimestamp: string } } | undefined> {
    const r = await this.cp.kubectlResult([
      'get',
      REMEDIATION_RESOURCE,
      '-n',
      REMEDIATION_NAMESPACE,
      this.node,
      '-o',
      'json',
    ]);
    return r.code === 0 ? JSON.parse(r.stdout) : undefined;
  }
  async waitRemediation(timeoutMs: number): Promise<number> {
    await waitFor(
      async () => (await this.remediation()) !== undefined,
      timeoutMs,
      () => this.output(),
    );
    return Date.parse((await this.remediation())?.metadata.creationTimestamp ?? '');
  }
  output(): string {
    return `${this.agent?.output().slice(-2000) ?? ''}\n--- nhc ---\n${this.ctx.nhcLog()}`;
  }
  async stop(): Promise<void> {
    await this.agent?.stop();
  }
  /** Ends the scenario: its node leaves NHC's count, as a remediated node would. */
  async finish(): Promise<void> {
    await this.stop();
    await this.cp.kubectl(['delete', 'node', this.node, '--wait=false']);
  }
}

/** A Node with the kubelet's Ready=True: NHC ignores a node until it has a Ready condition (shared.go). */
export async function readyNode(cp: ControlPlane, name: string): Promise<void> {
  await applyObject(cp, { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
  const patch = JSON.stringify({ status: { conditions: [ready] } });
  await cp.kubectl(['patch', 'node', name, '--subresource=status', '--type=merge', '-p', patch]);
}
