import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareStormWrites, type StormEvent } from '../../support/event-storm.ts';
import { NODE } from './record/helpers.ts';

const subject = { node: NODE, source: 'kernel-monitor', host: 'node-1' };
const oncePerSecond = (seconds: number, message: (i: number) => string): StormEvent[] =>
  Array.from({ length: seconds }, (_, i) => ({
    atMs: i * 1000,
    type: 'Warning',
    reason: 'OOMKilling',
    message: message(i),
  }));

describe('API writes for one storm: core/v1 correlation vs events/v1 series', () => {
  it('the same event once a second for 20 minutes', () => {
    const result = compareStormWrites(
      oncePerSecond(1200, () => 'Killed process 1'),
      subject,
    );
    // core/v1: POST, 24 PATCHes until the bucket is empty, then one PATCH per token (300, 600, 900 s).
    assert.deepEqual(result.coreV1, {
      creates: 1,
      patches: 27,
      total: 28,
      spamFiltered: 1172,
      aggregated: 0,
    });
    // events/v1: POST, PATCH of the 2-series, and the final count when the series has been idle 6 minutes.
    assert.deepEqual(result.eventsV1, { creates: 1, patches: 2, total: 3 });
  });

  it('distinct messages: core/v1 aggregates after 9, events/v1 folds them (the note is not in the key)', () => {
    const result = compareStormWrites(
      oncePerSecond(1200, (i) => `Killed process ${i}`),
      subject,
    );
    assert.deepEqual(result.coreV1, {
      creates: 10,
      patches: 18,
      total: 28,
      spamFiltered: 1172,
      aggregated: 1191,
    });
    assert.deepEqual(result.eventsV1, { creates: 1, patches: 2, total: 3 });
  });

  it('a slow, long storm: once a minute for two hours', () => {
    const storm = Array.from(
      { length: 120 },
      (_, i): StormEvent => ({
        atMs: i * 60_000,
        type: 'Warning',
        reason: 'R',
        message: 'm',
      }),
    );
    const upstream = compareStormWrites(storm, subject);
    assert.equal(upstream.coreV1.total, 48);
    // POST, 2-series PATCH, refreshes at 30/60/90/120 min, final PATCH at 126 min.
    assert.deepEqual(upstream.eventsV1, { creates: 1, patches: 6, total: 7 });
    const heartbeat = compareStormWrites(storm, subject, true);
    assert.ok(heartbeat.eventsV1.total > upstream.eventsV1.total);
    assert.ok(heartbeat.eventsV1.total < upstream.coreV1.total);
  });

  it('is pure: the same storm gives the same counts', () => {
    const storm = oncePerSecond(100, (i) => `m${i % 12}`);
    assert.deepEqual(compareStormWrites(storm, subject), compareStormWrites([...storm].reverse(), subject));
  });
});
