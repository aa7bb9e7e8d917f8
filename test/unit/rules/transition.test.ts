/**
 * Issue 39 §1: lastTransitionTime changes only with the status, in every engine, because repair
 * controllers (Karpenter, NodeHealthCheck, MachineHealthCheck) time a repair from it. Each case has
 * its control: the same engine moves the transition when the status does change.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionAggregator } from '../../../src/conditions/aggregate.ts';
import type { Condition } from '../../../src/core/types.ts';
import type { LogRuleConfig } from '../../../src/rules/config.ts';
import { type ProbeRule, ProbeRuleEngine } from '../../../src/rules/probe-engine.ts';
import { engine as logEngine, T0 } from './log-engine-helpers.ts';

const MINUTE = 60_000;
const docker: LogRuleConfig = {
  type: 'permanent',
  condition: 'KernelDeadlock',
  reason: 'DockerHung',
  pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.',
};
const aufs: LogRuleConfig = {
  type: 'permanent',
  condition: 'KernelDeadlock',
  reason: 'AUFSUmountHung',
  pattern: 'task umount\\.aufs:\\w+ blocked for more than \\w+ seconds\\.',
};
const DOCKER_LINE = 'INFO: task docker:20744 blocked for more than 120 seconds.';
const AUFS_LINE = 'INFO: task umount.aufs:21568 blocked for more than 120 seconds.';
const kernel = () => logEngine([docker, aufs]);

describe('lastTransitionTime moves only with the status', () => {
  it('log rules: a second rule with another reason a minute later keeps the first line’s time', () => {
    const e = kernel();
    e.process({ timestamp: T0 + 1000, message: DOCKER_LINE });
    const r = e.process({ timestamp: T0 + 1000 + MINUTE, message: AUFS_LINE });
    const c = r?.status.conditions[0];
    assert.equal(c?.reason, 'AUFSUmountHung');
    assert.equal(c?.message, AUFS_LINE);
    assert.equal(c?.transition, T0 + 1000);
    assert.equal(r?.status.events[0]?.timestamp, T0 + 1000 + MINUTE, 'the change is still an event');
  });

  it('log rules (control): the status change itself sets the time', () => {
    const e = kernel();
    const r = e.process({ timestamp: T0 + 5000, message: AUFS_LINE });
    assert.equal(r?.status.conditions[0]?.transition, T0 + 5000);
  });

  it('a restart in the same boot resumes the Node’s older transition over a lookback replay', () => {
    const e = kernel();
    // The lookback reaches only the newer line; the Node shows True since the older one.
    e.process({ timestamp: T0 + 1000 + MINUTE, message: AUFS_LINE });
    e.restore(nodeCondition('True', T0 + 1000, 'DockerHung'));
    const c = e.conditions()[0];
    assert.equal(c?.transition, T0 + 1000);
    assert.equal(c?.reason, 'AUFSUmountHung', 'what the replay read is the current reason');
  });

  it('a restart (control): a Node condition that was False does not date a True one', () => {
    const e = kernel();
    e.process({ timestamp: T0 + 1000 + MINUTE, message: AUFS_LINE });
    e.restore(nodeCondition('False', T0 - MINUTE, 'KernelHasNoDeadlock'));
    assert.equal(e.conditions()[0]?.transition, T0 + 1000 + MINUTE);
  });

  it('probes and custom plugins: a new reason or message keeps the time; recovery moves it', () => {
    const e = probeEngine();
    e.apply([probe('NonOK', 'down', 'NTPIsDown')], T0 + 1);
    const changed = e.apply([probe('NonOK', 'drifting', 'NTPDrift')], T0 + MINUTE);
    assert.equal(changed.status.conditions[0]?.reason, 'NTPDrift');
    assert.equal(changed.status.conditions[0]?.transition, T0 + 1);
    const healed = e.apply([probe('OK', '', 'NTPIsDown')], T0 + 2 * MINUTE);
    assert.equal(healed.status.conditions[0]?.transition, T0 + 2 * MINUTE);
  });

  it('probes: a result before the Node was read does not postpone the restored transition', () => {
    const e = probeEngine();
    e.apply([probe('NonOK', 'down', 'NTPIsDown')], T0 + MINUTE);
    e.restore({ type: 'NTPProblem', status: 'True', transition: T0, reason: 'NTPIsDown', message: 'down' });
    assert.equal(e.conditions()[0]?.transition, T0);
  });

  it('several monitors on one type: another source taking over a True condition keeps the time', () => {
    const agg = new ConditionAggregator();
    agg.update('b-monitor', nodeCondition('True', T0, 'FromB'));
    const taken = agg.update('a-monitor', nodeCondition('True', T0 + MINUTE, 'FromA'));
    assert.equal(taken.reason, 'FromA');
    assert.equal(taken.transition, T0);
    agg.update('a-monitor', nodeCondition('False', T0 + 2 * MINUTE, 'Fine'));
    const cleared = agg.update('b-monitor', nodeCondition('False', T0 + 3 * MINUTE, 'Fine'));
    assert.equal(cleared.status, 'False');
    assert.equal(cleared.transition, T0 + 3 * MINUTE, 'control: the status change moves it');
  });
});

function nodeCondition(status: Condition['status'], transition: number, reason: string): Condition {
  return { type: 'KernelDeadlock', status, transition, reason, message: 'from the Node' };
}

function probeEngine(): ProbeRuleEngine {
  const conditions = [{ type: 'NTPProblem', reason: 'NTPIsUp', message: 'ntp service is up' }];
  return new ProbeRuleEngine({ source: 'ntp-custom-plugin-monitor', conditions }, T0);
}

function probe(status: 'OK' | 'NonOK', message: string, reason: string) {
  const rule: ProbeRule = { type: 'permanent', condition: 'NTPProblem', reason };
  return { rule, status, message };
}
