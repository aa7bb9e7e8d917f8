/**
 * The before/after hooks every fault test file shares: the real control plane, optionally a fault
 * proxy or a (closed) readiness gate in front of it, and the agents under test, all stopped again
 * after the file's tests. A file states only its monitors, flags and what stands in front of the API.
 */
import { after, before } from 'node:test';
import { type ControlPlane, startControlPlane } from '../e2e/harness/controlplane.ts';
import { type AgentProcess, type Gate, readinessGate, startAgent, workDir } from '../e2e/support.ts';
import { type FaultProxy, faultProxy, kubeconfigThrough } from './fault-proxy.ts';

/** Which monitor flag the configs go to: --config.system-log-monitor or --config.custom-plugin-monitor. */
export type MonitorKind = 'system-log' | 'custom-plugin';

export interface AgentOptions {
  readonly kind?: MonitorKind;
  /** Further agent flags. */
  readonly flags?: readonly string[];
}

export interface SuiteOptions extends AgentOptions {
  /** What stands between the agents and the apiserver: nothing, a fault proxy, or a gate that starts closed. */
  readonly front?: 'proxy' | 'closed-gate';
  /** Writes the suite agent's monitor configs into the work dir; without it, tests start their own agents. */
  readonly configs?: (dir: string) => readonly string[];
  /** Runs in before(), once the suite agent is up: what must hold before the first test. */
  readonly ready?: (suite: FaultSuite) => Promise<void>;
}

export interface FaultSuite {
  /** A fresh directory for this file's configs, scripts and kubeconfigs. */
  readonly dir: string;
  readonly cp: ControlPlane;
  /** Only with front 'proxy'. */
  readonly proxy: FaultProxy;
  /** Only with front 'closed-gate'. */
  readonly gate: Gate;
  /** The agent started in before() (only with `configs`). */
  readonly agent: AgentProcess;
  /** Starts another agent on the configs, through the front; after() stops it if it still runs. */
  startAgent(configs: readonly string[], opts?: AgentOptions): Promise<AgentProcess>;
}

class Suite implements FaultSuite {
  readonly dir = workDir();
  cp!: ControlPlane;
  proxy!: FaultProxy;
  gate!: Gate;
  agent!: AgentProcess;
  private kubeconfig = '';
  private readonly agents: AgentProcess[] = [];
  private started = false;
  private readonly opts: SuiteOptions;

  constructor(opts: SuiteOptions) {
    this.opts = opts;
  }

  async startAgent(configs: readonly string[], { kind = 'system-log', flags = [] }: AgentOptions = {}) {
    const args = [
      `--kubeconfig=${this.kubeconfig}`,
      `--hostname-override=${this.cp.nodeName}`,
      `--config.${kind}-monitor=${configs.join(',')}`,
      ...flags,
    ];
    const agent = await startAgent(args, { KUBECONFIG: '' });
    this.agents.push(agent);
    return agent;
  }

  async setUp(): Promise<void> {
    const { configs, ready } = this.opts;
    this.cp = await startControlPlane();
    this.kubeconfig = await this.front();
    if (configs) {
      this.agent = await this.startAgent(configs(this.dir), this.opts);
      await ready?.(this);
    }
    this.started = true;
  }

  /** Starts the proxy or gate, if any; the kubeconfig the agents use. */
  private async front(): Promise<string> {
    const { front } = this.opts;
    if (front === undefined) return this.cp.agentKubeconfig;
    if (front === 'proxy') this.proxy = await faultProxy(this.cp);
    else {
      this.gate = await readinessGate(this.cp.port);
      this.gate.open = false;
    }
    const port = front === 'proxy' ? this.proxy.port : this.gate.port;
    return kubeconfigThrough(this.cp.agentKubeconfig, port, this.dir);
  }

  /** Stops what is still running; the control plane keeps its files when anything went wrong. */
  async tearDown(): Promise<void> {
    let failed = !this.started;
    for (const agent of this.agents) {
      if ((await agent.stop()) !== 0) failed = true;
    }
    await this.gate?.close();
    await this.proxy?.close();
    await this.cp?.stop({ failed });
  }
}

/** Registers this file's before and after hooks; the suite's fields are set once before() has run. */
export function faultSuite(opts: SuiteOptions = {}): FaultSuite {
  const suite = new Suite(opts);
  before(() => suite.setUp(), { timeout: 10 * 60_000 });
  after(() => suite.tearDown());
  return suite;
}
