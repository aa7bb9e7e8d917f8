import assert from 'node:assert/strict';
import type { Registry } from 'prom-client';
import {
  ConditionManager,
  type ConditionManagerOptions,
  type NodeConditionJson,
  type NodeStatusWriter,
} from '../../../src/conditions/manager.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Condition } from '../../../src/core/types.ts';

/** Shared by the condition manager tests: a recording writer and a fake-clock driver. */
export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

export class FakeWriter implements NodeStatusWriter {
  readonly calls: { at: number; conditions: NodeConditionJson[] }[] = [];
  failWith: Error | undefined;
  private readonly clock: FakeClock;

  constructor(clock: FakeClock) {
    this.clock = clock;
  }

  async patchConditions(conditions: readonly NodeConditionJson[]): Promise<void> {
    this.calls.push({ at: this.clock.now(), conditions: [...conditions] });
    if (this.failWith) throw this.failWith;
  }
}

export function cond(
  type: string,
  status: Condition['status'],
  transition = T0,
  reason = 'R',
  message = 'm',
): Condition {
  return { type, status, transition, reason, message };
}

export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves the fake clock in steps, letting the manager's promises settle after each one. */
export async function advance(clock: FakeClock, ms: number, step = 1000): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    clock.advance(Math.min(step, left));
    await flush();
  }
}

export function setup(extra: Partial<ConditionManagerOptions> = {}) {
  const clock = new FakeClock(T0);
  const writer = new FakeWriter(clock);
  const registry = createRegistry();
  const manager = new ConditionManager({
    writer,
    clock,
    registry,
    quickAttempts: 1,
    random: () => 0,
    ...extra,
  });
  return { clock, writer, registry, manager };
}

export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}) {
  const metric = registry.getSingleMetric(name);
  assert.ok(metric, `metric ${name} exists`);
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value;
}
