import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HeapTrimmer } from '../../../src/agent/heap-trim.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { MallocTrimResult } from '../../../src/host/clib/malloc-trim.ts';
import { libcMallocTrim } from '../../../src/host/clib/malloc-trim.ts';

async function counts(registry: ReturnType<typeof createRegistry>): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('npd_malloc_trim_calls_total');
  assert.ok(metric, 'the counter is registered');
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.result), v.value]));
}

const settle = () => new Promise((r) => setImmediate(r));

function setup(result: MallocTrimResult) {
  const clock = new FakeClock();
  const registry = createRegistry();
  let loads = 0;
  const infos: unknown[] = [];
  const logger = silentLogger();
  logger.info = ((obj: unknown) => void infos.push(obj)) as typeof logger.info;
  const trimmer = new HeapTrimmer({
    clock,
    registry,
    logger,
    load: async () => {
      loads++;
      return result;
    },
  });
  return { clock, registry, trimmer, infos, loads: () => loads };
}

describe('HeapTrimmer', () => {
  test('trims twice after start-up, pages out with the first only, loads the binding once, counts each result', async () => {
    let calls = 0;
    const pagedOutAt: number[] = [];
    const s = setup({ trim: () => ++calls === 1, pageOut: () => pagedOutAt.push(calls) && 0 });
    s.trimmer.schedule();
    s.clock.advance(999);
    await settle();
    assert.equal(calls, 0, 'not before the first delay');
    s.clock.advance(1);
    await settle();
    s.clock.advance(60_000);
    await settle();
    assert.equal(calls, 2);
    assert.deepEqual(pagedOutAt, [0], 'paged out once, before the first trim');
    assert.equal(s.loads(), 1);
    assert.deepEqual(await counts(s.registry), { released: 1, nothing: 1, unavailable: 0 });
    s.clock.advance(600_000);
    await settle();
    assert.equal(calls, 2, 'no periodic trim');
  });

  test('a reload replaces the pending trims; stop cancels them', async () => {
    let calls = 0;
    const s = setup({
      trim: () => {
        calls++;
        return true;
      },
    });
    s.trimmer.schedule();
    s.clock.advance(500);
    s.trimmer.schedule();
    s.clock.advance(60_000);
    await settle();
    assert.equal(calls, 2);
    s.trimmer.schedule();
    s.trimmer.stop();
    s.clock.advance(60_000);
    await settle();
    assert.equal(calls, 2);
  });

  test('without malloc_trim: says why once, counts every skipped trim', async () => {
    const s = setup({ unavailable: 'musl' });
    s.trimmer.schedule();
    s.clock.advance(60_000);
    await settle();
    await settle();
    assert.deepEqual(await counts(s.registry), { released: 0, nothing: 0, unavailable: 2 });
    assert.equal(s.infos.length, 1);
    assert.deepEqual(s.infos[0], { reason: 'musl' });
  });
});

describe('libcMallocTrim', () => {
  test('on this glibc host it loads and returns a boolean', async () => {
    const result = await libcMallocTrim();
    assert.ok('trim' in result, JSON.stringify(result));
    assert.equal(typeof result.trim(), 'boolean');
  });
});
