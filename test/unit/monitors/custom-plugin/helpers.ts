import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import { FakeClock, systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import {
  createPluginExecutor,
  type PluginCommand,
  type PluginExecutor,
  type PluginOutcome,
} from '../../../../src/monitors/custom-plugin/exec.ts';
import { CustomPluginMonitor } from '../../../../src/monitors/custom-plugin/monitor.ts';
import {
  type PluginMonitorConfig,
  validatePluginMonitor,
} from '../../../../src/monitors/custom-plugin/schema.ts';
import type { ProbeStatus } from '../../../../src/rules/probe-engine.ts';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/plugins');
export const T0 = Date.UTC(2026, 0, 1);

export function fixture(name: string): string {
  return join(FIXTURES, name);
}

/** Validates a config literal, failing loudly on issues so tests never run with a half-built config. */
export function pluginConfig(raw: Record<string, unknown>, cwd = '/'): PluginMonitorConfig {
  const { config, issues } = validatePluginMonitor(
    { plugin: 'custom', source: 'test-plugins', ...raw },
    'test.json',
    cwd,
  );
  if (!config) throw new Error(`invalid test config: ${JSON.stringify(issues)}`);
  return config;
}

/** The real executor, with real timers. */
export function realExecutor(killGraceMs = 500): PluginExecutor {
  return createPluginExecutor({
    spawn,
    kill: (pid, sig) => process.kill(pid, sig),
    clock: systemClock,
    killGraceMs,
  });
}

export function command(
  path: string,
  args: readonly string[] = [],
  overrides: Partial<PluginCommand> = {},
): PluginCommand {
  return { path, command: path, args, timeoutMs: 5000, maxOutputLength: 80, ...overrides };
}

export function outcome(
  status: ProbeStatus,
  message: string,
  extra: Partial<PluginOutcome> = {},
): PluginOutcome {
  return {
    status,
    message,
    state: status === 'OK' ? 'exit status 0' : status === 'NonOK' ? 'exit status 1' : 'exit status 2',
    stdoutTruncated: false,
    stderrTruncated: false,
    stderr: '',
    abandoned: false,
    durationMs: 1,
    ...extra,
  };
}

interface Call {
  readonly path: string;
  readonly at: number;
}

/**
 * A scripted executor on a FakeClock: each path answers from its script (the last answer repeats) after
 * `durationMs` of fake time. It records starts and the highest number of runs in flight.
 */
export class FakeExecutor {
  readonly calls: Call[] = [];
  maxInFlight = 0;
  private inFlight = 0;
  private readonly clock: FakeClock;
  private readonly scripts = new Map<string, PluginOutcome[]>();
  private readonly durations = new Map<string, number>();

  constructor(clock: FakeClock) {
    this.clock = clock;
  }

  script(path: string, answers: PluginOutcome[], durationMs = 0): this {
    this.scripts.set(path, answers);
    this.durations.set(path, durationMs);
    return this;
  }

  readonly run: PluginExecutor = (cmd, signal) => {
    this.calls.push({ path: cmd.path, at: this.clock.now() });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const answers = this.scripts.get(cmd.path) ?? [];
    const answer = (answers.length > 1 ? answers.shift() : answers[0]) ?? outcome('OK', '');
    return new Promise((resolve) => {
      let settled = false;
      const finish = (o: PluginOutcome) => {
        if (settled) return;
        settled = true;
        this.inFlight--;
        resolve(o);
      };
      const duration = this.durations.get(cmd.path) ?? 0;
      // An instant plugin answers without a timer, so it does not wait for the next clock step.
      if (duration === 0) return void queueMicrotask(() => finish(answer));
      const timer = this.clock.setTimeout(() => finish(answer), duration);
      signal?.addEventListener('abort', () => {
        timer.cancel();
        finish(outcome('Unknown', 'cancelled', { failure: 'aborted' }));
      });
    });
  };

  startsOf(path: string): number[] {
    return this.calls.filter((c) => c.path === path).map((c) => c.at - T0);
  }
}

/** Lets promise continuations run; FakeClock timers fire synchronously, their awaiters do not. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Advances fake time in steps, settling in between, so chains of runs see the right times. */
export async function advance(clock: FakeClock, ms: number, stepMs = 100): Promise<void> {
  await settle();
  for (let done = 0; done < ms; done += stepMs) {
    clock.advance(Math.min(stepMs, ms - done));
    await settle();
  }
}

export interface MonitorHarness {
  readonly clock: FakeClock;
  readonly registry: Registry;
  readonly executor: FakeExecutor;
  readonly statuses: Status[];
  readonly monitor: CustomPluginMonitor;
}

export function monitorHarness(
  config: PluginMonitorConfig,
  setup: (e: FakeExecutor) => void,
  random: () => number = () => 0,
): MonitorHarness {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  const executor = new FakeExecutor(clock);
  setup(executor);
  const monitor = new CustomPluginMonitor(config, {
    clock,
    logger: silentLogger(),
    registry,
    problemMetrics: new ProblemMetrics(registry),
    executor: executor.run,
    random,
  });
  return { clock, registry, executor, statuses: [], monitor };
}

/** The value of one series, or undefined when it does not exist. */
export async function metric(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const m = registry.getSingleMetric(name);
  if (!m) return undefined;
  const data = await m.get();
  const hit = data.values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return hit?.value;
}

/** Throws unless the file holds a positive pid: a pid of 0 would make a kill hit our own process group. */
export function readPid(file: string): number {
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${file} holds no pid yet`);
  return pid;
}

/** Whether the file already holds a complete pid (the shell creates it before writing the number). */
export function hasPid(file: string): boolean {
  try {
    return readPid(file) > 0;
  } catch {
    return false;
  }
}

/** Dead means gone, or a zombie that only its (new) parent can still reap. */
export function isDead(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

export function killQuietly(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
