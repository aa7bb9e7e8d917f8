// heldBy: an event whose problem a condition holds (the same line's permanent rule, or a probe reading
// the state) leaves the subsystem condition to that condition, both ways, where a monitor reports it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { ConfigError, formatIssue } from '../../../src/config/errors.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import type { Condition, Status } from '../../../src/core/types.ts';
import { probeConfigKind } from '../../../src/monitors/probe/schema.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';

const ROOT = join(import.meta.dirname, '../../..');
const KINDS = [systemLogConfigKind, probeConfigKind];
const MIN = 60_000;
const WINDOW = 10 * MIN;

/** The shipped files; `strip` drops every heldBy line first (the control: as before heldBy). */
function table(strip: boolean, ...names: string[]): SubsystemTable {
  const read = (f: string) => {
    const text = readFileSync(f, 'utf8');
    return strip ? text.replace(/^\s*heldBy: .*\n/gm, '') : text;
  };
  return SubsystemTable.from(
    loadConfigs(
      names.map((n) => ({ file: join(ROOT, 'rules', n) })),
      KINDS,
      read,
    ),
  );
}

const kubelet = { source: 'kubelet-monitor' };
const probes = { source: 'health-checker' };

function runtimeReady(h: SubsystemHealth, now: number): Condition {
  const c = h.evaluate(now).find((x) => x.type === 'ContainerRuntimeReady');
  assert.ok(c, 'ContainerRuntimeReady is published');
  return c;
}

function kubeletStatus(reason: string, at: number, pleg?: 'True' | 'False'): Status {
  const conditions: Condition[] =
    pleg === undefined
      ? []
      : [{ type: 'PLEGUnhealthy', status: pleg, reason: 'PLEGNotHealthy', message: 'm', transition: at }];
  return {
    source: kubelet.source,
    conditions,
    events: [{ severity: 'warn', reason, message: reason, timestamp: at }],
  };
}

function probeStatus(status: 'True' | 'False', at: number): Status {
  const reason = status === 'True' ? 'ContainerdUnhealthy' : 'ContainerRuntimeIsHealthy';
  const c: Condition = { type: 'ContainerRuntimeUnhealthy', status, reason, message: 'm', transition: at };
  return { source: probes.source, conditions: [c], events: [] };
}

describe('heldBy: the condition that holds a problem decides its subsystem', () => {
  it('shipped kubelet.yaml: a PLEG event does not hold ContainerRuntimeReady after PLEGUnhealthy clears', () => {
    for (const strip of [false, true]) {
      const h = new SubsystemHealth({ table: table(strip, 'kubelet.yaml'), windowMs: WINDOW, nodeName: 'n' });
      h.observe(kubeletStatus('PLEGNotHealthy', 0, 'True'), kubelet, 0);
      assert.equal(runtimeReady(h, 1000).status, 'False');
      // clearAfter 2m: the condition turns False; nothing else is wrong.
      h.observe(
        {
          source: kubelet.source,
          events: [],
          conditions: [
            {
              type: 'PLEGUnhealthy',
              status: 'False',
              reason: 'PLEGIsHealthy',
              message: 'm',
              transition: 2 * MIN,
            },
          ],
        },
        kubelet,
        2 * MIN,
      );
      const at3 = runtimeReady(h, 3 * MIN).status;
      // Control (heldBy stripped): the event alone holds it False for the whole window.
      assert.equal(
        at3,
        strip ? 'False' : 'True',
        strip ? 'control: the window holds' : 'held by PLEGUnhealthy',
      );
    }
  });

  it('shipped kubelet.yaml + probes-node.yaml: the containerd probe decides a CRI-unreachable line, both ways', () => {
    const h = new SubsystemHealth({
      table: table(false, 'kubelet.yaml', 'probes-node.yaml'),
      windowMs: WINDOW,
      nodeName: 'n',
    });
    h.observe(probeStatus('False', 0), probes, 0);
    h.observe(kubeletStatus('ContainerRuntimeUnreachable', 1000), kubelet, 1000);
    assert.equal(runtimeReady(h, 2000).status, 'True', 'the probe answers: the runtime is reachable');
    h.observe(probeStatus('True', 20 * MIN), probes, 20 * MIN);
    const down = runtimeReady(h, 20 * MIN);
    assert.equal(down.status, 'False');
    assert.equal(down.reason, 'ContainerdUnhealthy', 'the probe, not the line, is the reason');
    // Long past the window, the probe still holds it.
    assert.equal(runtimeReady(h, 40 * MIN).status, 'False');
  });

  it('an Unknown holder (the probe timed out) cannot decide: the line counts', () => {
    const h = new SubsystemHealth({
      table: table(false, 'kubelet.yaml', 'probes-node.yaml'),
      windowMs: WINDOW,
      nodeName: 'n',
    });
    const unknown: Condition = {
      type: 'ContainerRuntimeUnhealthy',
      status: 'Unknown',
      reason: 'ContainerdUnhealthy',
      message: 'timeout',
      transition: 0,
    };
    h.observe({ source: probes.source, conditions: [unknown], events: [] }, probes, 0);
    h.observe(kubeletStatus('ContainerRuntimeNotReady', 1000), kubelet, 1000);
    assert.equal(runtimeReady(h, 2000).status, 'False');
    // Control: once the probe answers False again, it decides.
    h.observe(probeStatus('False', 3000), probes, 3000);
    assert.equal(runtimeReady(h, 4000).status, 'True');
  });

  it('without the probe, the window applies to the same line (true one-off)', () => {
    const h = new SubsystemHealth({ table: table(false, 'kubelet.yaml'), windowMs: WINDOW, nodeName: 'n' });
    h.observe(kubeletStatus('ContainerRuntimeNotReady', 0), kubelet, 0);
    assert.equal(runtimeReady(h, 1000).status, 'False');
    assert.equal(runtimeReady(h, WINDOW + 1000).status, 'True');
  });

  it('the table hands heldBy out with the classification', () => {
    const t = table(false, 'kubelet.yaml', 'kernel.yaml');
    assert.equal(
      t.event('kubelet-monitor', 'ContainerRuntimeUnreachable')?.heldBy,
      'ContainerRuntimeUnhealthy',
    );
    assert.equal(t.event('kernel-monitor', 'FileMaxReached')?.heldBy, 'FileHandlesLow');
    const systemd = table(false, 'systemd.yaml');
    assert.equal(systemd.event('systemd-monitor', 'KubeletStartLimitHit')?.heldBy, 'KubeletUnhealthy');
    assert.equal(
      systemd.event('systemd-monitor', 'ContainerdStartLimitHit')?.heldBy,
      'ContainerRuntimeUnhealthy',
    );
    assert.equal(t.event('kernel-monitor', 'OOMKilling')?.heldBy, undefined);
  });

  it('heldBy on a permanent rule is refused with file and field; on a temporary rule it loads', () => {
    const files: Record<string, string> = {
      'bad.yaml':
        'plugin: kmsg\nsource: s\nconditions:\n  - {type: C, reason: R, message: m}\nrules:\n  - {type: permanent, condition: C, reason: X, pattern: x, heldBy: C}\n',
      'good.yaml':
        'plugin: kmsg\nsource: g\nrules:\n  - {type: temporary, reason: X, pattern: x, heldBy: C}\n',
    };
    const load = (names: string[]) =>
      loadConfigs(
        names.map((file) => ({ file })),
        KINDS,
        (f) => files[f] as string,
      );
    assert.equal(load(['good.yaml']).length, 1);
    assert.throws(
      () => load(['bad.yaml']),
      (err) =>
        err instanceof ConfigError &&
        err.issues.map(formatIssue).some((i) => i.startsWith('bad.yaml: rules[0].heldBy:')),
    );
  });
});
