/**
 * The herd after an outage (issue 41 item 4): 1,000 agents' condition managers on one fake clock, each
 * with its own seeded random and its own tick phase within the second, all failing to write from the
 * moment the API server goes away until it comes back 2 minutes later. Counted: the PATCHes in every
 * 1 s window of the first 30 s after the return, and how long until every agent has written. And the
 * same 1,000 started in the same millisecond (issue 41 item 1): their first PATCHes per second.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionManager, type NodeStatusWriter } from '../../../src/conditions/manager.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { cond, flush, T0 } from './harness.ts';

const AGENTS = 1000;
const OUTAGE_MS = 120_000;

/** mulberry32: a small PRNG, the same sequence on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Fleet {
  readonly clock: FakeClock;
  readonly managers: ConditionManager[];
  /** Every PATCH attempt: when, by which agent, and whether the server was there. */
  readonly attempts: { at: number; agent: number; up: boolean }[];
  setUp(up: boolean): void;
}

/**
 * `random(i)` is agent i's random; agents start `spacingMs` apart (1 ms: their 1 s ticks cover the
 * second; 0: all started in the same millisecond, as a DaemonSet whose pods all restart at once).
 */
function fleet(random: (i: number) => () => number, spacingMs = 1): Fleet {
  const clock = new FakeClock(T0);
  const attempts: Fleet['attempts'] = [];
  let up = true;
  const managers: ConditionManager[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const writer: NodeStatusWriter = {
      async patchConditions() {
        attempts.push({ at: clock.now(), agent: i, up });
        if (!up) throw new ApiError('connect ECONNREFUSED');
      },
    };
    const m = new ConditionManager({
      writer,
      clock,
      registry: createRegistry(),
      random: random(i),
      quickAttempts: 1,
    });
    m.update(cond('KernelDeadlock', 'False'));
    m.start();
    managers.push(m);
    clock.advance(spacingMs);
  }
  return { clock, managers, attempts, setUp: (v) => (up = v) };
}

async function run(f: Fleet, ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 1000) {
    f.clock.advance(Math.min(1000, left));
    await flush();
  }
}

/** The correlated failure that meets the outage: every node reports the same problem, then the server goes. */
async function outage(f: Fleet): Promise<number> {
  await run(f, 30_000); // every agent has made its first sync
  f.setUp(false);
  for (const m of f.managers) m.update(cond('KernelDeadlock', 'True', f.clock.now(), 'DockerHung'));
  await run(f, OUTAGE_MS);
  f.setUp(true);
  return f.clock.now();
}

/** The attempts in [from, from + ms), and the most of them in any 1 s window (sliding, not aligned). */
function busiestSecond(f: Fleet, from: number, ms: number): { total: number; peak: number } {
  const times = f.attempts
    .map((a) => a.at)
    .filter((t) => t >= from && t < from + ms)
    .sort((a, b) => a - b);
  let peak = 0;
  for (let lo = 0, hi = 0; hi < times.length; hi++) {
    while ((times[hi] ?? 0) - (times[lo] ?? 0) >= 1000) lo++;
    peak = Math.max(peak, hi - lo + 1);
  }
  return { total: times.length, peak };
}

function recoveredBy(f: Fleet, from: number): number {
  const first = new Map<number, number>();
  for (const a of f.attempts) if (a.up && a.at >= from && !first.has(a.agent)) first.set(a.agent, a.at);
  assert.equal(first.size, AGENTS, 'every agent wrote after the return');
  return Math.max(...first.values()) - from;
}

describe('1,000 condition managers on one fake clock', () => {
  it('spread their retries: at most a few dozen PATCHes in any second of the first 30 s after the return', async () => {
    const f = fleet((i) => seeded(i + 1));
    const back = await outage(f);
    const during = f.attempts.filter((a) => !a.up).length;
    await run(f, 90_000);
    const { total, peak } = busiestSecond(f, back, 30_000);
    const recovery = recoveredBy(f, back);
    console.log(
      `jittered: peak ${peak}/s, ${total} in the first 30 s, recovery ${recovery} ms, ${during} failed`,
    );
    assert.ok(peak <= 60, `peak ${peak} per second`);
    assert.ok(recovery <= 61_000, 'every agent wrote within the longest backoff (60 s) and a tick');
    assert.ok(during / AGENTS <= 6, `${during / AGENTS} failed PATCHes per agent in the 2 min outage`);
    for (const m of f.managers) m.stop();
  });

  it('negative control: with no jitter (random 0, NPD schedule) they come back in the same second', async () => {
    const f = fleet(() => () => 0);
    const back = await outage(f);
    await run(f, 90_000);
    const { peak } = busiestSecond(f, back, 30_000);
    console.log(`unjittered: peak ${peak}/s`);
    // All but the one whose tick fell on the very millisecond of the return (it failed, and waits on).
    assert.ok(peak >= AGENTS - 1, `peak ${peak}`);
    for (const m of f.managers) m.stop();
  });

  it('started in the same millisecond, spread their first PATCH over 5 s (a control: no jitter, one second)', async () => {
    const jittered = fleet((i) => seeded(i + 1), 0);
    await run(jittered, 10_000);
    const spread = busiestSecond(jittered, T0, 10_000);
    const still = fleet(() => () => 0, 0);
    await run(still, 10_000);
    const control = busiestSecond(still, T0, 10_000);
    console.log(`rollout at once: busiest second ${spread.peak} jittered, ${control.peak} without`);
    assert.equal(spread.total, AGENTS);
    assert.ok(spread.peak <= 260, `busiest second ${spread.peak}`);
    assert.equal(control.peak, AGENTS);
    for (const m of [...jittered.managers, ...still.managers]) m.stop();
  });
});
