import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { Clock } from '../../../src/core/clock.ts';
import { hostPaths } from '../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import type { MonitorDeps } from '../../../src/monitors/deps.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { counterReader, readerDeps } from '../../support/fake-reader-harness.ts';

export { HOUR, MINUTE, SECOND } from '../../support/fake-reader-harness.ts';

export function logConfig(overrides: Partial<LogMonitorConfig> = {}): LogMonitorConfig {
  return {
    kind: 'system-log',
    file: 'test.json',
    plugin: 'journald',
    pluginConfig: {},
    logPath: '',
    lookbackMs: 0,
    delayMs: 0,
    skipList: [],
    bufferSize: 10,
    source: 'test-monitor',
    metricsReporting: false,
    conditions: [],
    rules: [],
    ...overrides,
  };
}

export function makeDeps(clock: Clock, root: string): MonitorDeps & { registry: Registry } {
  const deps = readerDeps(clock);
  return { ...deps, problemMetrics: new ProblemMetrics(deps.registry), paths: hostPaths(root) };
}

/** A fresh directory removed when the test ends. */
export function tempDir(t: { after(fn: () => void): void }, prefix = 'npd-logsrc-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Polls `check` every 10 ms until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A counter's value for exactly these labels, by default `{ source: 'test-monitor' }` (0 when never incremented). */
export const metric = counterReader('test-monitor');

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
