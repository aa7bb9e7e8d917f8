import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { AGGREGATE_MESSAGE_PREFIX } from '../../../../src/events/record/aggregator.ts';
import { type CorrelationResult, EventCorrelator } from '../../../../src/events/record/correlator.ts';
import { eventKey } from '../../../../src/events/record/keys.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { kubeEvent } from './helpers.ts';

const T0 = Date.UTC(2026, 0, 1);

/** Correlates like the sink loop, echoing every written event back as the server would. */
function correlateAndWrite(c: EventCorrelator, e: KubeEvent): CorrelationResult {
  const r = c.correlate(e);
  if (!r.skip) c.updateState({ ...r.event, resourceVersion: 'rv' });
  return r;
}

describe('EventCorrelator: worked example A (same event once a second)', () => {
  const clock = new FakeClock(T0);
  const c = new EventCorrelator({ clock });
  const results: CorrelationResult[] = [];
  for (let i = 0; i < 1210; i++) {
    clock.set(T0 + i * 1000);
    results.push(correlateAndWrite(c, kubeEvent({}, clock.now())));
  }

  it('#1 is a create: count 1, no patch', () => {
    const first = results[0]!;
    assert.equal(first.skip, false);
    assert.equal(first.patch, undefined);
    assert.equal(first.event.count, 1);
  });

  it('#2..#25 are patches of exactly {count, lastTimestamp, message} on the first object', () => {
    for (let i = 1; i <= 24; i++) {
      const r = results[i]!;
      assert.equal(r.skip, false, `#${i + 1}`);
      assert.deepEqual(r.patch, {
        count: i + 1,
        lastTimestamp: T0 + i * 1000,
        message: 'Killed process 1234 (foo)',
      });
      assert.equal(r.event.name, results[0]!.event.name);
      assert.equal(r.event.firstTimestamp, T0);
    }
  });

  it('#26 onward is skipped while the count keeps rising; a token is back at 300 s', () => {
    assert.equal(results[25]!.skip, true);
    assert.equal(results[25]!.event.count, 26);
    const allowed = results.flatMap((r, i) => (r.skip ? [] : [i]));
    assert.deepEqual(allowed.slice(25), [300, 600, 900, 1200]);
    // The patch after the pause carries every skipped occurrence.
    assert.equal(results[300]!.patch?.count, 301);
    assert.equal(results[600]!.patch?.count, 601);
  });
});

describe('EventCorrelator: worked example B (distinct messages, same reason)', () => {
  const clock = new FakeClock(T0);
  const c = new EventCorrelator({ clock });
  const pid = (n: number) => kubeEvent({ message: `Killed process pid ${n}` }, clock.now());
  const results: CorrelationResult[] = [];
  for (let n = 1; n <= 11; n++) {
    clock.advance(1000);
    results.push(correlateAndWrite(c, pid(n)));
  }

  it('messages 1-9 are separate events with count 1', () => {
    const firstNine = results.slice(0, 9);
    assert.ok(firstNine.every((r) => !r.aggregated && !r.skip && r.event.count === 1 && !r.patch));
    assert.equal(new Set(firstNine.map((r) => r.event.name)).size, 9);
  });

  it('message 10 becomes a fresh aggregate event', () => {
    const r = results[9]!;
    assert.equal(r.aggregated, true);
    assert.equal(r.patch, undefined);
    assert.equal(r.event.message, `${AGGREGATE_MESSAGE_PREFIX}Killed process pid 10`);
    assert.equal(r.event.message, '(combined from similar events): Killed process pid 10');
    assert.equal(r.event.count, 1);
    assert.equal(r.event.firstTimestamp, clock.now() - 1000);
    assert.equal(r.event.reportingComponent, '');
    assert.equal(r.event.reportingInstance, '');
    assert.match(r.event.name, /^node-1\.[0-9a-f]+$/);
  });

  it('message 11 patches the aggregate with count 2 and the new combined message', () => {
    const r = results[10]!;
    assert.equal(r.aggregated, true);
    assert.equal(r.event.name, results[9]!.event.name);
    assert.deepEqual(r.patch, {
      count: 2,
      lastTimestamp: clock.now(),
      message: '(combined from similar events): Killed process pid 11',
    });
  });

  it('a message still in the set patches its own event; a popped one aggregates again', () => {
    clock.advance(1000);
    const repeat = correlateAndWrite(c, pid(5));
    assert.equal(repeat.aggregated, false);
    assert.equal(repeat.event.name, results[4]!.event.name);
    assert.equal(repeat.patch?.count, 2);
    // pid 1 and pid 2 were popped (oldest first) when 10 and 11 aggregated.
    const popped = correlateAndWrite(c, pid(1));
    assert.equal(popped.aggregated, true);
    assert.equal(popped.patch?.count, 3);
  });
});

describe('EventCorrelator: aggregation window', () => {
  function fillNine(c: EventCorrelator, clock: FakeClock): void {
    for (let n = 1; n <= 9; n++) c.correlate(kubeEvent({ message: `m${n}` }, clock.now()));
  }

  it('slides with every event: exactly 600 s after the last one still aggregates', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    fillNine(c, clock);
    clock.advance(600_000);
    assert.equal(c.correlate(kubeEvent({ message: 'm10' }, clock.now())).aggregated, true);
  });

  it('more than 600 s of silence starts a new group', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    fillNine(c, clock);
    clock.advance(600_001);
    assert.equal(c.correlate(kubeEvent({ message: 'm10' }, clock.now())).aggregated, false);
  });

  it('different reasons are different groups', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    fillNine(c, clock);
    const other = c.correlate(kubeEvent({ reason: 'Other', message: 'm10' }, clock.now()));
    assert.equal(other.aggregated, false);
  });
});

describe('EventCorrelator: spam filter', () => {
  it('shares one bucket across reasons but not across types', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    for (let i = 0; i < 25; i++) {
      assert.equal(c.correlate(kubeEvent({ reason: `R${i}` }, clock.now())).skip, false);
    }
    assert.equal(c.correlate(kubeEvent({ reason: 'Fresh' }, clock.now())).skip, true);
    assert.equal(c.correlate(kubeEvent({ type: 'Normal', reason: 'Fresh' }, clock.now())).skip, false);
  });

  it('refills one token per 300 s, starting full', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    for (let i = 0; i < 25; i++) c.correlate(kubeEvent({ reason: `R${i}` }, clock.now()));
    clock.advance(299_999);
    assert.equal(c.correlate(kubeEvent({ reason: 'X' }, clock.now())).skip, true);
    clock.advance(1);
    assert.equal(c.correlate(kubeEvent({ reason: 'X' }, clock.now())).skip, false);
    assert.equal(c.correlate(kubeEvent({ reason: 'X' }, clock.now())).skip, true);
  });

  it('a bucket evicted from the LRU starts full again', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock, cacheSize: 1, burst: 1 });
    assert.equal(c.correlate(kubeEvent({}, clock.now())).skip, false);
    assert.equal(c.correlate(kubeEvent({}, clock.now())).skip, true);
    c.correlate(kubeEvent({ type: 'Normal' }, clock.now()));
    assert.equal(c.correlate(kubeEvent({}, clock.now())).skip, false);
  });

  it('zero options fall back to the defaults instead of disabling anything', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock, burst: 0, qps: 0, maxEvents: 0, maxIntervalMs: 0, cacheSize: 0 });
    const skips = Array.from({ length: 26 }, (_, i) => c.correlate(kubeEvent({ reason: `R${i}` })).skip);
    assert.deepEqual(skips.indexOf(true), 25);
  });
});

describe('EventCorrelator: event logger', () => {
  it('patches the object the server returned (its name and resourceVersion)', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    const first = c.correlate(kubeEvent({}, clock.now()));
    c.updateState({ ...first.event, name: 'server-name', resourceVersion: '42', count: 7 });
    clock.advance(1000);
    const second = c.correlate(kubeEvent({}, clock.now()));
    assert.equal(second.event.name, 'server-name');
    assert.equal(second.event.resourceVersion, '42');
    assert.equal(second.event.count, 8);
    assert.equal(eventKey(second.event), eventKey(first.event));
  });

  it('counts even without a successful write (cache updated before any API call)', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    c.correlate(kubeEvent({}, clock.now()));
    const second = c.correlate(kubeEvent({}, clock.now()));
    assert.equal(second.event.count, 2);
    assert.ok(second.patch);
  });

  it('does not mutate the input event', () => {
    const clock = new FakeClock(T0);
    const c = new EventCorrelator({ clock });
    c.correlate(kubeEvent({}, clock.now()));
    const input = kubeEvent({ name: 'new-name' }, clock.now());
    c.correlate(input);
    assert.equal(input.name, 'new-name');
    assert.equal(input.count, 1);
  });
});
