/**
 * The agent under test:gpu: the built bundle from the kit (kit.ts), standalone (no cluster), with the GPU
 * configuration, its JSON log kept record by record so the report can quote what each path saw.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, REPO, waitFor } from '../support/agent-process.ts';

export interface GpuAgent {
  readonly child: ChildProcess;
  readonly statusUrl: string;
  readonly metricsUrl: string;
  /** Every JSON record the agent logged so far, in order. */
  records(): readonly LogRecord[];
  /** The raw output's tail, for a failure message. */
  tail(): string;
  stop(): Promise<number | null>;
}

export type LogRecord = Readonly<Record<string, unknown>>;

export interface GpuAgentOptions {
  /** The bundle (kit's main.js). */
  readonly bundle: string;
  /** The kernel-log rules and the NVML monitor config. */
  readonly systemLogConfig: string;
  readonly gpuConfig: string;
  /** Dry run: a fake host root (dev/kmsg a FIFO, sys/bus/pci/devices the fake GPUs). */
  readonly hostRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The agent's flags: standalone, both GPU configs, no config reload (nothing edits them mid-run). */
function agentArgs(opts: GpuAgentOptions, port: number, promPort: number): string[] {
  return [
    opts.bundle,
    `--port=${port}`,
    `--prometheus-port=${promPort}`,
    '--enable-k8s-exporter=false',
    '--hostname-override=gpu-test',
    '--config-reload-period=0',
    '--log-format=json',
    `--config.system-log-monitor=${opts.systemLogConfig}`,
    `--config.gpu-monitor=${opts.gpuConfig}`,
    ...(opts.hostRoot === undefined ? [] : [`--host-root=${opts.hostRoot}`, '--host-proc=/proc']),
  ];
}

/** Splits the agent's output into JSON records; a line that is not JSON is kept as {text}. */
function recordCollector(child: ChildProcess): { records: LogRecord[]; tail: () => string } {
  const records: LogRecord[] = [];
  let partial = '';
  let raw = '';
  const take = (d: Buffer) => {
    const text = d.toString();
    raw = (raw + text).slice(-64 * 1024);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        records.push(JSON.parse(line) as LogRecord);
      } catch {
        records.push({ text: line });
      }
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  return { records, tail: () => raw };
}

/** Starts the bundle with its own node and waits for /healthz (30 s at most). */
export async function startGpuAgent(opts: GpuAgentOptions): Promise<GpuAgent> {
  const [port, promPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, agentArgs(opts, port, promPort), {
    cwd: REPO,
    // Standalone whatever the caller's shell holds: no kubeconfig, no in-cluster variables.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { records, tail } = recordCollector(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const agent: GpuAgent = {
    child,
    statusUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
    records: () => records,
    tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  // An agent that refuses its config exits at once: say so then, not after the 30 s wait.
  const died = exited.then((code) => {
    throw new Error(`the agent exited (${code}) before serving /healthz:\n${tail().slice(-4000)}`);
  });
  died.catch(() => {});
  try {
    await Promise.race([
      waitFor(async () => (await fetch(`${agent.statusUrl}/healthz`)).ok, 30_000, tail),
      died,
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return agent;
}

/** The repository path of a shipped rule file. */
export function rulesFile(name: string): string {
  return join(REPO, 'rules', name);
}
