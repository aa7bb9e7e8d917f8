// Issue 38 finding 11: a filelog monitor (RFC 3339 stamps, `source: app`, a rule of the kernel
// subsystem) and --subsystem-conditions --subsystem-window=30s. One appended line stamped 2035 turned
// KernelReady False, still False 40 s later ("unhealthy since 2035..."). Whoever can append to a
// followed file must not hold the condition until then: the line counts from when it was read.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemReporter } from '../../../src/conditions/subsystem-reporter.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import type { LoadedConfig } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Condition } from '../../../src/core/types.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { createFilelogSource } from '../../../src/sources/filelog/source.ts';
import { HOUR, logConfig, makeDeps, tempDir } from '../sources/harness.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const WINDOW = 30_000;

function setup(t: TestContext) {
  const root = tempDir(t);
  const logPath = '/var/log/app/app.log';
  const path = join(root, logPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '');
  const clock = new FakeClock(T0);
  const deps = makeDeps(clock, root);
  const rule = {
    type: 'temporary' as const,
    reason: 'AppSawKernelBug',
    pattern: 'kernel BUG at .*',
    subsystem: 'kernel' as const,
    impact: 'warning' as const,
  };
  const config: LogMonitorConfig = logConfig({
    plugin: 'filelog',
    logPath,
    lookbackMs: HOUR,
    source: 'app',
    // Finding 11 is about a file whose lines may raise a warning: one that trusts its writers.
    trustedWriter: 'any',
    pluginConfig: {
      timestamp: '^(\\S+) ',
      message: '^\\S+ (.*)$',
      timestampFormat: '2006-01-02T15:04:05.999999999Z07:00',
    },
    rules: [rule],
  });
  const loaded: LoadedConfig = { kind: 'system-log', file: 'app.json', config };
  const health = new SubsystemHealth({
    table: SubsystemTable.from([loaded]),
    windowMs: WINDOW,
    holdMs: 0,
    nodeName: 'n1',
  });
  const published: Condition[] = [];
  const reporter = new SubsystemReporter({ health, clock, publish: (cs) => published.push(...cs) });
  const source = createFilelogSource(config, deps, {
    uptimeFs: { readFileSync: () => '1000000.00 1.00\n' },
    watch: null,
    pollIntervalMs: 250,
  });
  const monitor = new SystemLogMonitor(config, source, deps);
  const key = { name: 'app monitor' };
  void monitor.start((s) => reporter.observe(s, key));
  reporter.start();
  t.after(async () => {
    reporter.stop();
    await monitor.stop();
  });
  const kernelReady = () => published.filter((c) => c.type === 'KernelReady').at(-1);
  const append = (stamp: string) => appendFileSync(path, `${stamp} kernel BUG at mm/slub.c:1234!\n`);
  return { clock, kernelReady, append };
}

describe('subsystem conditions: a followed file line stamped in the future', () => {
  it('holds KernelReady False for one window from when it was read, not until 2035', (t) => {
    const h = setup(t);
    h.clock.advance(1000);
    assert.equal(h.kernelReady()?.status, 'True');
    h.append('2035-01-01T00:00:00Z');
    h.clock.advance(1000);
    const bad = h.kernelReady();
    assert.equal(bad?.status, 'False');
    assert.doesNotMatch(bad?.message ?? '', /2035/);
    h.clock.advance(40_000);
    assert.equal(h.kernelReady()?.status, 'True', 'the window (30 s) has passed since the line was read');
  });

  it('negative control: a line stamped now holds it False within the window, True after it', (t) => {
    const h = setup(t);
    h.clock.advance(1000);
    h.append(new Date(h.clock.now()).toISOString());
    h.clock.advance(20_000);
    assert.equal(h.kernelReady()?.status, 'False', 'a real problem line still turns KernelReady False');
    h.clock.advance(20_000);
    assert.equal(h.kernelReady()?.status, 'True');
  });
});
