import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ProbeResult,
  type ProbeRule,
  ProbeRuleEngine,
  type ProbeStatus,
} from '../../../src/rules/probe-engine.ts';

const T0 = Date.UTC(2026, 0, 1);
const NTP = { type: 'NTPProblem', reason: 'NTPIsUp', message: 'ntp service is up' };
const PERM: ProbeRule = { type: 'permanent', condition: 'NTPProblem', reason: 'NTPIsDown' };
const TEMP: ProbeRule = { type: 'temporary', reason: 'NTPIsDown' };

function engine(messageChangeUpdates = false): ProbeRuleEngine {
  return new ProbeRuleEngine(
    { source: 'ntp-custom-plugin-monitor', conditions: [NTP], messageChangeUpdates },
    T0,
  );
}

const result = (status: ProbeStatus, message: string, rule: ProbeRule = PERM): ProbeResult => ({
  rule,
  status,
  message,
});
const eventMessage = (status: string, reason: string, message: string) =>
  `Node condition NTPProblem is now: ${status}, reason: ${reason}, message: ${JSON.stringify(message)}`;

describe('ProbeRuleEngine (NPD custom-plugin-monitor, npd.md §2.2)', () => {
  it('starts False with the defaults and re-sends the full list after every batch', () => {
    const e = engine();
    assert.deepEqual(e.initialStatus().conditions, [{ ...NTP, status: 'False', transition: T0 }]);
    const r = e.apply([result('OK', 'fine')], T0 + 1);
    assert.deepEqual(r.status.events, []);
    assert.deepEqual(r.counted, []);
    assert.deepEqual(r.status.conditions, [{ ...NTP, status: 'False', transition: T0 }]);
    assert.equal(r.status.source, 'ntp-custom-plugin-monitor');
    assert.deepEqual(r.gauges, [{ type: 'NTPProblem', reason: 'NTPIsUp', active: false }]);
    assert.deepEqual(e.apply([], T0 + 2).status.conditions.length, 1);
  });

  it('2. False → True: rule reason, stdout as message, transition now, Warning event, counted', () => {
    const e = engine();
    const r = e.apply([result('NonOK', 'ntp down')], T0 + 10);
    assert.deepEqual(r.status.conditions, [
      { type: 'NTPProblem', status: 'True', transition: T0 + 10, reason: 'NTPIsDown', message: 'ntp down' },
    ]);
    assert.deepEqual(r.status.events, [
      {
        severity: 'warn',
        timestamp: T0 + 10,
        reason: 'NTPIsDown',
        message: eventMessage('True', 'NTPIsDown', 'ntp down'),
      },
    ]);
    assert.deepEqual(r.counted, ['NTPIsDown']);
    assert.deepEqual(r.gauges, [{ type: 'NTPProblem', reason: 'NTPIsDown', active: true }]);
  });

  it('1. True → False: default reason and message, Normal event, not counted', () => {
    const e = engine();
    e.apply([result('NonOK', 'ntp down')], T0 + 10);
    const r = e.apply([result('OK', 'whatever stdout')], T0 + 20);
    assert.deepEqual(r.status.conditions, [{ ...NTP, status: 'False', transition: T0 + 20 }]);
    assert.deepEqual(r.status.events, [
      {
        severity: 'info',
        timestamp: T0 + 20,
        reason: 'NTPIsUp',
        message: eventMessage('False', 'NTPIsUp', 'ntp service is up'),
      },
    ]);
    assert.deepEqual(r.counted, []);
  });

  it('1. True → Unknown: default reason, stdout kept as the message, Normal event', () => {
    const e = engine();
    e.apply([result('NonOK', 'ntp down')], T0 + 10);
    const r = e.apply([result('Unknown', 'plugin timed out')], T0 + 20);
    assert.deepEqual(r.status.conditions, [
      {
        type: 'NTPProblem',
        status: 'Unknown',
        transition: T0 + 20,
        reason: 'NTPIsUp',
        message: 'plugin timed out',
      },
    ]);
    assert.equal(r.status.events[0]?.severity, 'info');
    assert.equal(r.status.events[0]?.message, eventMessage('Unknown', 'NTPIsUp', 'plugin timed out'));
    assert.deepEqual(r.counted, []);
  });

  it('2. Unknown → True', () => {
    const e = engine();
    e.apply([result('Unknown', 'x')], T0 + 1);
    const r = e.apply([result('NonOK', 'down')], T0 + 2);
    assert.equal(r.status.conditions[0]?.status, 'True');
    assert.equal(r.status.conditions[0]?.reason, 'NTPIsDown');
    assert.deepEqual(r.counted, ['NTPIsDown']);
  });

  it('3. False ↔ Unknown: default reason; message is stdout for Unknown and the default for False', () => {
    const e = engine();
    const toUnknown = e.apply([result('Unknown', 'no binary')], T0 + 1);
    assert.deepEqual(toUnknown.status.conditions[0], {
      type: 'NTPProblem',
      status: 'Unknown',
      transition: T0 + 1,
      reason: 'NTPIsUp',
      message: 'no binary',
    });
    assert.equal(toUnknown.status.events.length, 1);
    const toFalse = e.apply([result('OK', 'fine')], T0 + 2);
    assert.deepEqual(toFalse.status.conditions[0], { ...NTP, status: 'False', transition: T0 + 2 });
    assert.equal(toFalse.status.events.length, 1);
  });

  it('4. True → True with another reason updates and emits an event, and keeps the transition', () => {
    const e = engine();
    e.apply([result('NonOK', 'down')], T0 + 1);
    const r = e.apply([result('NonOK', 'drifting', { ...PERM, reason: 'NTPDrift' })], T0 + 2);
    assert.deepEqual(r.status.conditions[0], {
      type: 'NTPProblem',
      status: 'True',
      transition: T0 + 1,
      reason: 'NTPDrift',
      message: 'drifting',
    });
    assert.equal(r.status.events.length, 1);
    assert.deepEqual(r.counted, ['NTPDrift']);
  });

  it('4. True → True with another message updates only with enable_message_change_based_condition_update', () => {
    const off = engine(false);
    off.apply([result('NonOK', 'down 1')], T0 + 1);
    const same = off.apply([result('NonOK', 'down 2')], T0 + 2);
    assert.deepEqual(same.status.events, []);
    assert.deepEqual(same.counted, []);
    assert.deepEqual(same.status.conditions[0], {
      type: 'NTPProblem',
      status: 'True',
      transition: T0 + 1,
      reason: 'NTPIsDown',
      message: 'down 1',
    });

    const on = engine(true);
    on.apply([result('NonOK', 'down 1')], T0 + 1);
    const changed = on.apply([result('NonOK', 'down 2')], T0 + 2);
    assert.equal(changed.status.events.length, 1);
    assert.deepEqual(changed.status.conditions[0], {
      type: 'NTPProblem',
      status: 'True',
      transition: T0 + 1,
      reason: 'NTPIsDown',
      message: 'down 2',
    });
    assert.equal(on.apply([result('NonOK', 'down 2')], T0 + 3).status.events.length, 0);
  });

  it('5. otherwise nothing changes: False→False, Unknown→Unknown (even with new stdout)', () => {
    const e = engine(true);
    assert.deepEqual(e.apply([result('OK', 'a')], T0 + 1).status.events, []);
    e.apply([result('Unknown', 'first')], T0 + 2);
    const r = e.apply([result('Unknown', 'second')], T0 + 3);
    assert.deepEqual(r.status.events, []);
    assert.deepEqual(r.status.conditions[0], {
      type: 'NTPProblem',
      status: 'Unknown',
      transition: T0 + 2,
      reason: 'NTPIsUp',
      message: 'first',
    });
  });

  it('temporary rule: NonOK is a Warning event with stdout, counted; OK is nothing', () => {
    const e = engine();
    const r = e.apply([result('NonOK', 'ntp down', TEMP)], T0 + 5);
    assert.deepEqual(r.status.events, [
      { severity: 'warn', timestamp: T0 + 5, reason: 'NTPIsDown', message: 'ntp down' },
    ]);
    assert.deepEqual(r.counted, ['NTPIsDown']);
    assert.equal(r.status.conditions[0]?.status, 'False');
    assert.deepEqual(e.apply([result('OK', 'fine', TEMP)], T0 + 6).status.events, []);
  });

  it('temporary rule: Unknown is NOT an event and not counted (deliberate difference from NPD)', () => {
    const r = engine().apply([result('Unknown', 'plugin not found', TEMP)], T0 + 5);
    assert.deepEqual(r.status.events, []);
    assert.deepEqual(r.counted, []);
  });

  it('applies a batch in order: the temporary and permanent rules of one plugin', () => {
    const e = engine();
    const r = e.apply([result('NonOK', 'down', TEMP), result('NonOK', 'down')], T0 + 5);
    assert.deepEqual(
      r.status.events.map((ev) => [ev.severity, ev.reason]),
      [
        ['warn', 'NTPIsDown'],
        ['warn', 'NTPIsDown'],
      ],
    );
    assert.deepEqual(r.counted, ['NTPIsDown', 'NTPIsDown']);
  });

  it('ignores a permanent rule whose condition is not declared', () => {
    const r = engine().apply([result('NonOK', 'x', { ...PERM, condition: 'Other' })], T0);
    assert.deepEqual(r.status.events, []);
    assert.deepEqual(
      r.status.conditions.map((c) => c.type),
      ['NTPProblem'],
    );
  });

  it('restore() seeds the state that the next transition starts from', () => {
    const e = engine();
    e.restore({ type: 'NTPProblem', status: 'True', transition: 7, reason: 'NTPIsDown', message: 'old' });
    assert.deepEqual(e.apply([result('NonOK', 'old')], T0).status.events, []);
    assert.equal(e.apply([result('OK', '')], T0 + 1).status.events.length, 1);
  });
});
