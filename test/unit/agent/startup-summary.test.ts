import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { logStartupSummary } from '../../../src/agent/startup-summary.ts';
import type { Condition } from '../../../src/core/types.ts';

const cond = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: '',
  transition: 0,
});

function summary(conditions: Condition[], waiting?: string[]) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  logStartupSummary(logger, {
    version: '1.2.3',
    mode: 'kubernetes',
    node: 'n1',
    monitors: ['kernel-monitor'],
    conditions,
    kmsg: ['kernel-monitor: from the start of the ring'],
    ...(waiting ? { waiting } : {}),
    listen: [
      { name: 'status', address: '127.0.0.1', port: 20256 },
      { name: 'metrics', address: '', port: 20257 },
      { name: 'off', address: '127.0.0.1', port: 0 },
    ],
  });
  assert.equal(lines.length, 1, 'one line');
  return lines[0] as Record<string, unknown>;
}

describe('start-up summary', () => {
  it('names the True conditions in the message and counts the rest', () => {
    const s = summary([
      cond('KernelDeadlock', 'True', 'DockerHung'),
      cond('ReadonlyFilesystem', 'False', 'Ok'),
    ]);
    assert.equal(s.msg, 'agent started: 2 conditions, 1 True: KernelDeadlock(DockerHung)');
    assert.deepEqual(s.problems, ['KernelDeadlock(DockerHung)']);
    assert.deepEqual(s.listen, ['status=127.0.0.1:20256', 'metrics=0.0.0.0:20257']);
    assert.equal(s.version, '1.2.3');
    assert.deepEqual(
      s.kmsg,
      ['kernel-monitor: from the start of the ring'],
      'where the kernel log is read from',
    );
  });

  it('says none are True when none are, with a singular for one condition', () => {
    assert.equal(summary([cond('A', 'False', 'Ok')]).msg, 'agent started: 1 condition, none True');
    assert.equal(summary([]).msg, 'agent started: 0 conditions, none True');
    assert.equal(summary([cond('A', 'True', 'Bad')]).msg, 'agent started: 1 condition, 1 True: A(Bad)');
  });

  it('names the monitors with nothing to watch here, once, and nothing when none waits', () => {
    const why = 'gpu-nvml-monitor: no NVML library (libnvidia-ml.so.1): cannot open';
    const s = summary([cond('A', 'False', 'Ok')], [why]);
    assert.equal(s.msg, `agent started: 1 condition, none True; nothing to watch: ${why}`);
    assert.deepEqual(s.waiting, [why]);
    const none = summary([cond('A', 'False', 'Ok')], []);
    assert.equal(none.msg, 'agent started: 1 condition, none True');
    assert.equal(none.waiting, undefined);
  });
});
