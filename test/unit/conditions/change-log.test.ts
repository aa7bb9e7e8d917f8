import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionChangeLog } from '../../../src/conditions/change-log.ts';
import type { Condition } from '../../../src/core/types.ts';

const cond = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  transition: 0,
});

describe('ConditionChangeLog', () => {
  it('calls back on the first sighting and on each change of status or reason, not on repeats', () => {
    const changed: string[] = [];
    const log = new ConditionChangeLog((c) => changed.push(`${c.type}=${c.status}/${c.reason}`));
    log.record(cond('A', 'False', 'Ok'));
    log.record(cond('A', 'False', 'Ok', 'same status and reason, new message'));
    log.record(cond('B', 'False', 'Ok'));
    log.record(cond('A', 'True', 'Ok'));
    log.record(cond('A', 'True', 'Broken'));
    log.record(cond('A', 'True', 'Broken'));
    assert.deepEqual(changed, ['A=False/Ok', 'B=False/Ok', 'A=True/Ok', 'A=True/Broken']);
    assert.deepEqual(
      [...log.conditions()].map((c) => `${c.type}=${c.reason}`),
      ['A=Broken', 'B=Ok'],
    );
  });
});
