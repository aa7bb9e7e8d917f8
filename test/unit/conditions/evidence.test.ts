/**
 * Issue 38 build item 3 where conditions meet: the Node's conditions carry no evidence (NodeCondition has
 * no field for it), /conditions does (the condition manager keeps it), and a subsystem condition made
 * False by a problem shows that problem's evidence. Fake clock and writer; the log monitor is the real one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Evidence } from '../../../src/core/evidence.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import type { LinesHandler } from '../../../src/sources/source.ts';
import { advance, cond, setup, T0 } from './harness.ts';

const KERNEL: Evidence = { source: 'kernel-monitor', plugin: 'kmsg', trust: 'kernel' };

describe('condition manager', () => {
  it('writes no evidence to the Node, and /conditions gets the newest even when the Node sees no change', async () => {
    const t = setup();
    t.manager.start();
    t.manager.update(cond('KernelDeadlock', 'True'));
    await advance(t.clock, 2000);
    t.manager.update({ ...cond('KernelDeadlock', 'True'), evidence: KERNEL });
    await advance(t.clock, 2000);
    assert.deepEqual(t.manager.conditions()[0]?.evidence, KERNEL);
    const sent = t.writer.calls.flatMap((c) => c.conditions);
    assert.ok(sent.length > 0, 'the condition was written');
    for (const c of sent) assert.equal('evidence' in c, false);
    assert.equal(t.writer.calls.length, 1, 'evidence alone is no reason to patch the Node');
    t.manager.stop();
  });
});

describe('subsystem conditions', () => {
  it("a GPU Xid 79 from the kernel makes AcceleratedHardwareReady False with the line's kmsg/kernel evidence", () => {
    const root = join(import.meta.dirname, '../../..');
    const loaded = loadConfigs([{ file: join(root, 'rules', 'gpu.yaml') }], [systemLogConfigKind]);
    const config = loaded[0]?.config as LogMonitorConfig;
    const health = new SubsystemHealth({
      table: SubsystemTable.from(loaded),
      windowMs: 600_000,
      nodeName: 'n1',
    });
    const clock = new FakeClock(T0);
    const registry = createRegistry();
    let push: LinesHandler = () => {};
    const source = {
      start: (h: LinesHandler) => {
        push = h;
      },
      stop: async () => {},
      health: () => ({ up: true, healthy: true }),
    };
    const monitor = new SystemLogMonitor(config, source, {
      clock,
      registry,
      problemMetrics: new ProblemMetrics(registry),
    });
    void monitor.start((s: Status) => health.observe(s, monitor, clock.now()));
    const ready = () => health.evaluate(clock.now()).find((c) => c.type === 'AcceleratedHardwareReady');
    assert.equal(ready()?.status, 'True');
    assert.equal(ready()?.evidence, undefined, 'control: healthy, nothing raised it');
    clock.advance(1000);
    push([
      {
        timestamp: clock.now(),
        message: 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.',
      },
    ]);
    assert.equal(ready()?.status, 'False');
    assert.deepEqual(ready()?.evidence, { ...KERNEL, source: config.source });
  });
});
