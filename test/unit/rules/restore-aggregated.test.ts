/**
 * After a restart every owner of an aggregated condition type is handed the Node's condition. An owner
 * adopts a problem only when one of its rules can give that reason: the kernel-log GPU rules must not
 * hold, until reboot, a pending row remap that only the NVML monitor sees and that a GPU reset ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from '../../../src/core/types.ts';
import type { ConditionConfig, LogRuleConfig } from '../../../src/rules/config.ts';
import { engine, T0 } from './log-engine-helpers.ts';

const GPU: ConditionConfig = {
  type: 'GPUUnhealthy',
  reason: 'GPUIsHealthy',
  message: 'no GPU error',
  aggregate: true,
};
const XID79: LogRuleConfig = {
  type: 'permanent',
  condition: 'GPUUnhealthy',
  reason: 'NvidiaXID79Error',
  pattern: 'NVRM: Xid \\(PCI:[0-9a-f:.]+\\): 79\\b.*',
};
const TEMPLATED: LogRuleConfig = {
  type: 'permanent',
  condition: 'GPUUnhealthy',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a rule's reason template (Go syntax), not JavaScript.
  reason: 'NvidiaXID${1}Error',
  pattern: 'NVRM: Xid \\(PCI:[0-9a-f:.]+\\): (4[0-9])\\b.*',
};

const onNode = (reason: string, status: Condition['status'] = 'True'): Condition => ({
  type: 'GPUUnhealthy',
  status,
  transition: T0 - 3_600_000,
  reason,
  message: `${reason}: GPU 0 (0000:00:00.0)`,
});

function restored(rules: LogRuleConfig[], c: Condition, conditions = [GPU]) {
  const e = engine(rules, conditions);
  e.restore(c);
  return e.conditions()[0];
}

describe('restoring an aggregated condition type', () => {
  it('adopts a reason one of its rules gives, with the Node time', () => {
    const c = restored([XID79], onNode('NvidiaXID79Error'));
    assert.equal(c?.status, 'True');
    assert.equal(c?.transition, T0 - 3_600_000);
  });

  it('adopts what a templated reason expands to, and not what it cannot', () => {
    assert.equal(restored([TEMPLATED], onNode('NvidiaXID48Error'))?.status, 'True');
    assert.equal(restored([TEMPLATED], onNode('NvidiaRowRemapPending'))?.status, 'False');
  });

  it("leaves another owner's problem alone: stays False from start", () => {
    const c = restored([XID79], onNode('NvidiaRowRemapPending'));
    assert.equal(c?.status, 'False');
    assert.equal(c?.transition, T0);
    assert.equal(restored([XID79], onNode('NVMLUnavailable', 'Unknown'))?.status, 'False');
  });

  it('still resumes a False with its time', () => {
    const c = restored([XID79], onNode('GPUIsHealthy', 'False'));
    assert.equal(c?.transition, T0 - 3_600_000);
  });

  it("a reload's forced restore of its own state keeps a reason the new rules no longer give", () => {
    const e = engine([XID79], [GPU]);
    e.restore(onNode('NvidiaXID79Renamed'), { force: true });
    assert.equal(e.conditions()[0]?.status, 'True');
  });

  it('a templated reason matches every expansion, also ones its pattern cannot capture (by design)', () => {
    assert.equal(restored([TEMPLATED], onNode('NvidiaXID79Error'))?.status, 'True');
  });

  it('control: a type only this config owns adopts any reason (one an older version gave)', () => {
    const c = restored([XID79], onNode('NVRMXid79'), [{ ...GPU, aggregate: false }]);
    assert.equal(c?.status, 'True');
    assert.equal(c?.reason, 'NVRMXid79');
  });
});
