import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { monitorTypes } from '../../../src/agent/registry.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { LogLine, Status } from '../../../src/core/types.ts';
import { hostPaths } from '../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { SourceHub } from '../../../src/sources/hub.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';
import { kernelCorpus } from '../../bench/kernel-corpus.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

function shipped(...names: string[]): LogMonitorConfig[] {
  const files = names.map((n) => ({ file: join(ROOT, 'rules', `${n}.yaml`) }));
  return loadConfigs(files, [systemLogConfigKind], (f) => readFileSync(f, 'utf8')).map(
    (l) => l.config as LogMonitorConfig,
  );
}

/** A source the test drives by hand, counting how often it is opened and closed. */
class FakeSource implements LogSource {
  starts = 0;
  stops = 0;
  private push: LinesHandler | undefined;

  start(onLines: LinesHandler): void {
    this.starts++;
    this.push = onLines;
  }
  async stop(): Promise<void> {
    this.stops++;
    this.push = undefined;
  }
  health() {
    return { up: this.push !== undefined, healthy: true, detail: 'fake' };
  }
  emit(lines: readonly LogLine[]): void {
    this.push?.(lines);
  }
}

/** Monitors for the configs, each on its own fake source or all on one shared through a hub. */
function monitors(configs: readonly LogMonitorConfig[], hub: SourceHub | undefined) {
  const clock = new FakeClock(0);
  const registry = createRegistry();
  const deps = { clock, registry, problemMetrics: new ProblemMetrics(registry) };
  const sources: FakeSource[] = [];
  const make = () => {
    const s = new FakeSource();
    sources.push(s);
    return s;
  };
  const list = configs.map((c) => new SystemLogMonitor(c, hub ? hub.share('kmsg', make) : make(), deps));
  return { list, sources };
}

/** Every event and condition change the monitors emit, in order, as comparable strings. */
async function run(configs: readonly LogMonitorConfig[], hub: SourceHub | undefined, lines: LogLine[]) {
  const { list, sources } = monitors(configs, hub);
  const seen: string[] = [];
  const record = (s: Status) => {
    for (const e of s.events) seen.push(`${s.source} ${e.reason} ${e.message}`);
  };
  for (const m of list) await m.start(record);
  for (let i = 0; i < lines.length; i += 100) {
    for (const s of new Set(sources)) s.emit(lines.slice(i, i + 100));
  }
  return { seen, list, sources };
}

describe('SourceHub', () => {
  const configs = shipped('kernel', 'readonly', 'hardware', 'gpu', 'kernel-counter');
  const others = [
    'NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.',
    'igb 0000:01:00.0 eth0: Link is Down',
    'mce: [Hardware Error]: Machine check events logged',
    'nvme nvme0: I/O 12 QID 3 timeout, aborting',
    'unregister_netdevice: waiting for lo to become free. Usage count = 1',
  ];
  const lines = kernelCorpus(20_000, 0.05).map((message, timestamp) => ({
    timestamp,
    message: timestamp % 97 === 0 ? (others[timestamp % others.length] as string) : message,
  }));

  it('opens one reader for all monitors and gives the same events as a reader each', async () => {
    const alone = await run(configs, undefined, lines);
    const shared = await run(configs, new SourceHub(), lines);
    assert.equal(alone.sources.length, configs.length);
    assert.equal(shared.sources.length, 1, 'one reader behind five monitors');
    assert.equal(shared.sources[0]?.starts, 1);
    assert.ok(alone.seen.length > 500, `the corpus produces events (${alone.seen.length})`);
    const emitting = new Set(alone.seen.map((s) => s.split(' ')[0]));
    assert.deepEqual([...emitting].sort(), [
      'gpu-monitor',
      'hardware-monitor',
      'kernel-monitor',
      'readonly-monitor',
    ]);
    assert.deepEqual(shared.seen, alone.seen);
  });

  it('closes the reader only when the last monitor stops, and reopens for a new one', async () => {
    const hub = new SourceHub();
    const { list, sources } = await run(configs.slice(0, 2), hub, []);
    const [kernel, readonly] = list as [SystemLogMonitor, SystemLogMonitor];
    await kernel.stop();
    assert.equal(sources[0]?.stops, 0);
    assert.equal(readonly.health().up, true);
    await readonly.stop();
    assert.equal(sources[0]?.stops, 1);
    await kernel.start(() => {});
    assert.equal(sources.length, 2, 'a fresh reader after the old one closed');
  });

  it('rescans for new literals when a monitor reloads its rules', async () => {
    const hub = new SourceHub();
    const [kernel, readonly] = configs as [LogMonitorConfig, LogMonitorConfig];
    const { list, sources, seen } = await run([kernel, readonly], hub, []);
    const marker = 'brand new literal 7f3a';
    const next = {
      ...readonly,
      rules: [{ type: 'temporary' as const, reason: 'Fresh', pattern: `${marker}.*` }],
    };
    assert.equal((list[1] as SystemLogMonitor).reconfigure(next), true);
    sources[0]?.emit([{ timestamp: 1, message: `x ${marker} y` }]);
    assert.deepEqual(
      seen.filter((s) => s.includes('Fresh')),
      [`readonly-monitor Fresh x ${marker} y`],
    );
  });

  it('still delivers to every monitor when one of them throws, and hands the error to the reader', async () => {
    const hub = new SourceHub();
    const source = new FakeSource();
    const got: string[] = [];
    const a = hub.share('k', () => source);
    const b = hub.share('k', () => source);
    a.start(() => {
      throw new Error('broken monitor');
    });
    b.start((lines) => got.push(...lines.map((l) => l.message)));
    assert.throws(() => source.emit([{ timestamp: 1, message: 'x' }]), /broken monitor/);
    assert.deepEqual(got, ['x']);
  });

  it('a start while the previous stop is still pending keeps the new subscription', async () => {
    const hub = new SourceHub();
    const sources: FakeSource[] = [];
    const handle = hub.share('k', () => {
      const s = new FakeSource();
      sources.push(s);
      return s;
    });
    handle.start(() => {});
    const stopping = handle.stop();
    handle.start(() => {});
    await stopping;
    assert.equal(handle.health().up, true, 'still subscribed');
    await handle.stop();
    assert.equal(sources.at(-1)?.stops, 1, 'the last stop closes the reader');
  });

  it('a bad source config fails when the monitor is created, shared or not', () => {
    const registry = createRegistry();
    const deps = {
      clock: new FakeClock(0),
      logger: silentLogger(),
      registry,
      problemMetrics: new ProblemMetrics(registry),
      paths: hostPaths('/nonexistent'),
      sources: new SourceHub(),
    };
    const broken = { ...(configs[0] as LogMonitorConfig), plugin: 'filelog' as const, logPath: '' };
    const type = monitorTypes().find((t) => t.configKind.kind === systemLogConfigKind.kind);
    assert.throws(() => type?.create(broken, deps), /needs logPath/);
  });
});
