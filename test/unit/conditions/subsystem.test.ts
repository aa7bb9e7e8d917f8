import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemReporter } from '../../../src/conditions/subsystem-reporter.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { ConfigError, formatIssue } from '../../../src/config/errors.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Condition, Status } from '../../../src/core/types.ts';
import { customPluginConfigKind } from '../../../src/monitors/custom-plugin/schema.ts';
import { probeConfigKind } from '../../../src/monitors/probe/schema.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';

const ROOT = join(import.meta.dirname, '../../..');
const KINDS = [systemLogConfigKind, customPluginConfigKind, probeConfigKind];
const WINDOW = 10 * 60_000;

/** The shipped rule files, loaded the way the agent loads them. */
function shipped(...names: string[]): SubsystemTable {
  return SubsystemTable.from(
    loadConfigs(
      names.map((n) => ({ file: join(ROOT, 'rules', n) })),
      KINDS,
    ),
  );
}

function health(table = shipped('gpu.yaml', 'kernel.yaml', 'kernel-counter.yaml')): SubsystemHealth {
  return new SubsystemHealth({ table, windowMs: WINDOW, nodeName: 'n1' });
}

const XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

function event(source: string, reason: string, timestamp: number, message = reason): Status {
  return { source, conditions: [], events: [{ severity: 'warn', reason, message, timestamp }] };
}

function gpuCondition(status: 'True' | 'False', reason: string, transition: number): Status {
  const c: Condition = { type: 'GPUUnhealthy', status, reason, message: 'm', transition };
  return { source: 'gpu-monitor', events: [], conditions: [c] };
}

/** One stand-in monitor per source: these tests have one file per source. */
const MONITORS = new Map(['gpu-monitor', 'kernel-monitor'].map((s) => [s, { source: s }]));

function see(h: SubsystemHealth, status: Status, now: number): void {
  h.observe(status, MONITORS.get(status.source) ?? {}, now);
}

function get(list: readonly Condition[], type: string): Condition {
  const c = list.find((x) => x.type === type);
  assert.ok(c, `${type} missing from ${list.map((x) => x.type).join(',')}`);
  return c;
}

describe('SubsystemTable from the shipped rules', () => {
  it('reads per-rule impacts over the file default', () => {
    const t = shipped('gpu.yaml', 'kernel.yaml', 'kernel-counter.yaml');
    // Xid 79's event is held by GPUUnhealthy: the condition, reason NvidiaXID79Error, decides.
    assert.deepEqual(t.event('gpu-monitor', 'NVRMXid79'), {
      subsystem: 'accelerated-hardware',
      impact: 'fatal',
      heldBy: 'GPUUnhealthy',
    });
    assert.deepEqual(t.event('gpu-monitor', 'NVRMXid13'), {
      subsystem: 'accelerated-hardware',
      impact: 'info',
    });
    assert.deepEqual(t.event('gpu-monitor', 'NVRMXid61'), {
      subsystem: 'accelerated-hardware',
      impact: 'warning',
      heldBy: 'GPUUnhealthy',
    });
    assert.deepEqual(t.condition('gpu-monitor', 'GPUUnhealthy', 'NvidiaXID79Error'), {
      subsystem: 'accelerated-hardware',
      impact: 'fatal',
    });
    assert.deepEqual(t.event('kernel-monitor', 'OOMKilling'), { subsystem: 'kernel', impact: 'info' });
    // kernel.yaml and kernel-counter.yaml share the source kernel-monitor: both files count.
    assert.equal(
      t.condition('kernel-monitor', 'FrequentUnregisterNetDevice', 'UnregisterNetDevice')?.subsystem,
      'networking',
    );
    assert.equal(t.condition('kernel-monitor', 'XfsShutdown', 'XfsHasShutdown')?.impact, 'fatal');
  });

  it('ignores condition-change events and unknown reasons', () => {
    const t = shipped('gpu.yaml');
    assert.equal(
      t.event('gpu-monitor', 'GPUFallenOffBus'),
      undefined,
      'only a permanent rule has this reason',
    );
    assert.equal(t.event('gpu-monitor', 'GPUIsHealthy'), undefined);
    assert.equal(t.event('other', 'NVRMXid79'), undefined);
  });

  it('covers only the subsystems some configured rule watches', () => {
    assert.deepEqual([...shipped('gpu.yaml').covered], ['accelerated-hardware']);
    assert.deepEqual([...shipped('probes-network.yaml').covered], ['networking']);
    assert.deepEqual([...shipped('probes.yaml').covered].sort(), ['kernel', 'networking', 'storage']);
    assert.ok(!shipped('kernel.yaml').covered.has('accelerated-hardware'));
  });

  it("classifies nothing in NPD's own files, which have no subsystem fields", () => {
    const npd = join(ROOT, 'test/fixtures/npd-config');
    const table = SubsystemTable.from(loadConfigs([{ file: join(npd, 'kernel-monitor.json') }], KINDS));
    assert.equal(table.covered.size, 0);
    assert.equal(table.event('kernel-monitor', 'OOMKilling'), undefined);
  });

  it('matches templated reasons', () => {
    const table = SubsystemTable.from([
      {
        kind: 'system-log-monitor',
        file: 'x.yaml',
        config: {
          source: 's',
          subsystem: 'storage',
          conditions: [],
          rules: [{ type: 'temporary', reason: 'DiskFailed$1', impact: 'fatal' }],
        },
      },
    ]);
    assert.equal(table.event('s', 'DiskFailedSda')?.impact, 'fatal');
    assert.equal(table.event('s', 'DiskGoneSda'), undefined);
  });
});

describe('subsystem and impact fields', () => {
  it('reject unknown values with the file and the field, in every monitor kind', () => {
    const files: Record<string, string> = {
      'log.yaml':
        'plugin: kmsg\nsource: s\nsubsystem: gpu\nrules:\n  - {type: temporary, reason: R, pattern: x, impact: severe}\n',
      'plugin.yaml':
        'plugin: custom\nsource: c\nimpact: bad\nrules:\n  - {type: temporary, reason: R, path: /bin/true, subsystem: disk}\n',
      'probe.yaml': 'plugin: probe\nsubsystem: net\nprobes:\n  - {kind: fd, impact: high}\n',
    };
    let issues: string[] = [];
    try {
      loadConfigs(
        Object.keys(files).map((file) => ({ file })),
        KINDS,
        (f) => files[f] as string,
      );
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      issues = err.issues.map(formatIssue);
    }
    for (const want of [
      'log.yaml: subsystem',
      'log.yaml: rules[0].impact',
      'plugin.yaml: impact',
      'plugin.yaml: rules[0].subsystem',
      'probe.yaml: subsystem',
      'probe.yaml: probes[0].impact',
    ])
      assert.ok(
        issues.some((i) => i.startsWith(`${want}:`)),
        `${want} in ${issues.join(' | ')}`,
      );
  });
});

describe('SubsystemHealth', () => {
  const t0 = Date.UTC(2026, 0, 1);

  it('turns a fatal event False with its reason, impact, start and where to look; the window clears it', () => {
    const h = health();
    assert.equal(get(h.evaluate(t0), 'AcceleratedHardwareReady').status, 'True');
    see(h, event('gpu-monitor', 'NVRMXid79', t0 + 1000, XID79), t0 + 1000);
    const bad = get(h.evaluate(t0 + 2000), 'AcceleratedHardwareReady');
    assert.equal(bad.status, 'False');
    assert.equal(bad.reason, 'NVRMXid79');
    assert.equal(bad.transition, t0 + 2000);
    assert.match(bad.message, /^fatal: NVRM: Xid .*fallen off the bus/);
    assert.match(bad.message, /unhealthy since 2026-01-01T00:00:02Z/);
    assert.match(bad.message, /kubectl events --for node\/n1/);
    assert.equal(get(h.evaluate(t0 + 2000), 'KernelReady').status, 'True', 'other subsystems unaffected');
    assert.equal(h.nextExpiry(), t0 + 1000 + WINDOW);
    assert.equal(get(h.evaluate(t0 + 1000 + WINDOW - 1), 'AcceleratedHardwareReady').status, 'False');
    const ok = get(h.evaluate(t0 + 1000 + WINDOW), 'AcceleratedHardwareReady');
    assert.equal(ok.status, 'True');
    assert.equal(ok.reason, 'AcceleratedHardwareIsHealthy');
    assert.equal(ok.transition, t0 + 1000 + WINDOW);
  });

  it('never turns False for info problems', () => {
    const h = health();
    see(h, event('gpu-monitor', 'NVRMXid13', t0), t0);
    see(h, event('kernel-monitor', 'OOMKilling', t0), t0);
    const out = h.evaluate(t0 + 1);
    assert.equal(get(out, 'AcceleratedHardwareReady').status, 'True');
    assert.equal(get(out, 'KernelReady').status, 'True');
  });

  it('lets the worst impact win and keeps the transition when the reason changes', () => {
    const h = health();
    see(h, event('gpu-monitor', 'NVRMXid61', t0), t0);
    const warn = get(h.evaluate(t0 + 1), 'AcceleratedHardwareReady');
    assert.equal(warn.reason, 'NVRMXid61');
    assert.match(warn.message, /^warning: /);
    see(h, event('gpu-monitor', 'NVRMXid79', t0 + 5000, XID79), t0 + 5000);
    see(h, event('gpu-monitor', 'NVRMXid62', t0 + 6000), t0 + 6000);
    const fatal = get(h.evaluate(t0 + 7000), 'AcceleratedHardwareReady');
    assert.equal(fatal.reason, 'NVRMXid79');
    assert.equal(fatal.transition, warn.transition);
  });

  it('stays False while a problem condition is True and recovers when it clears', () => {
    const h = health();
    see(h, gpuCondition('True', 'GPUFallenOffBus', t0), t0);
    const bad = get(h.evaluate(t0 + 1), 'AcceleratedHardwareReady');
    assert.equal(bad.status, 'False');
    assert.equal(bad.reason, 'GPUFallenOffBus');
    assert.match(bad.message, /\(GPUUnhealthy=True\)/);
    assert.equal(get(h.evaluate(t0 + 10 * WINDOW), 'AcceleratedHardwareReady').status, 'False');
    see(h, gpuCondition('False', 'GPUIsHealthy', t0 + 10 * WINDOW), t0 + 10 * WINDOW);
    assert.equal(get(h.evaluate(t0 + 10 * WINDOW + 1), 'AcceleratedHardwareReady').status, 'True');
  });

  it('resumes a False condition from the Node for one window, with its transition, then recovers', () => {
    const h = health();
    const before: Condition = {
      type: 'AcceleratedHardwareReady',
      status: 'False',
      reason: 'NVRMXid79',
      message: 'fatal: GPU has fallen off the bus',
      transition: t0 - 60_000,
    };
    h.restore([before], t0);
    const first = get(h.evaluate(t0 + 1000), 'AcceleratedHardwareReady');
    assert.deepEqual(first, before, 'resumed as it was: no flap, same transition');
    // A warning seen after the restart does not displace the resumed fatal problem.
    see(h, event('gpu-monitor', 'NVRMXid61', t0 + 2000), t0 + 2000);
    assert.equal(get(h.evaluate(t0 + 3000), 'AcceleratedHardwareReady').reason, 'NVRMXid79');
    const later = get(h.evaluate(t0 + 2000 + WINDOW), 'AcceleratedHardwareReady');
    assert.equal(later.status, 'True');
  });

  it('keeps the transition of a resumed True condition', () => {
    const h = health();
    const before: Condition = {
      type: 'KernelReady',
      status: 'True',
      reason: 'KernelIsHealthy',
      message: 'x',
      transition: t0 - 3_600_000,
    };
    h.restore([before], t0);
    assert.equal(get(h.evaluate(t0), 'KernelReady').transition, t0 - 3_600_000);
  });

  it('publishes AcceleratedHardwareReady only when a GPU rule file is configured', () => {
    const types = health(shipped('kernel.yaml')).types();
    assert.ok(types.includes('KernelReady'));
    assert.ok(!types.includes('AcceleratedHardwareReady'));
  });
});

describe('SubsystemReporter', () => {
  it('evaluates on the tick after a status and again when the window elapses', () => {
    const clock = new FakeClock();
    const h = new SubsystemHealth({ table: shipped('gpu.yaml'), windowMs: 60_000, nodeName: 'n1' });
    const published: Condition[][] = [];
    const r = new SubsystemReporter({ health: h, clock, publish: (c) => published.push([...c]) });
    r.start();
    clock.advance(1000);
    assert.equal(published.length, 1);
    r.observe(event('gpu-monitor', 'NVRMXid79', clock.now(), XID79), MONITORS.get('gpu-monitor') ?? {});
    assert.equal(published.length, 1, 'nothing is published between ticks');
    clock.advance(1000);
    assert.equal(published.at(-1)?.[0]?.status, 'False');
    clock.advance(10_000);
    assert.equal(published.length, 2, 'no change, no evaluation');
    clock.advance(50_000);
    assert.equal(published.at(-1)?.[0]?.status, 'True');
    r.stop();
    const n = published.length;
    clock.advance(120_000);
    assert.equal(published.length, n);
  });
});
