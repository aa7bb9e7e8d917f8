import { FakeClock } from '../../../src/core/clock.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Condition, ConditionStatus } from '../../../src/core/types.ts';
import type { JsonObject } from '../../../src/kube/client.ts';
import { TaintController, type TaintControllerOptions } from '../../../src/taints/controller.ts';
import type { TaintRule } from '../../../src/taints/spec.ts';
import { FakeNodeApi, flush, sample } from '../../support/fake-node.ts';

export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
export const KEY = 'node.npd.io/kernel-deadlock';
export const OURS = 'node.npd.io/kernel-deadlock:NoSchedule';
export const RULE: TaintRule = { conditionType: 'KernelDeadlock', key: KEY, effect: 'NoSchedule' };
/** What the API server's TaintNodesByCondition admission puts on every new Node. */
export const NOT_READY: JsonObject = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

export function cond(status: ConditionStatus, type = 'KernelDeadlock'): Condition {
  return { type, status, transition: T0, reason: 'R', message: 'm' };
}

export interface SetupOptions {
  readonly taints?: JsonObject[];
  readonly annotations?: Record<string, string>;
  readonly rules?: readonly TaintRule[];
  readonly extra?: Partial<TaintControllerOptions>;
}

export function setup(opts: SetupOptions = {}) {
  const clock = new FakeClock(T0);
  const api = new FakeNodeApi(opts.taints ?? [NOT_READY], opts.annotations ?? {});
  const registry = createRegistry();
  const controller = new TaintController({
    rules: opts.rules ?? [RULE],
    client: api,
    nodeName: 'n1',
    clock,
    registry,
    random: () => 0,
    ...opts.extra,
  });
  controller.start();
  /** Moves the fake clock and lets the controller's promises settle. */
  const advance = async (ms = 0) => {
    await flush();
    clock.advance(ms);
    await flush();
  };
  const metric = (name: string, labels: Record<string, string> = {}) => sample(registry, name, labels);
  const added = () => metric('npd_taint_changes_total', { action: 'add' });
  const removed = () => metric('npd_taint_changes_total', { action: 'remove' });
  const failed = () => metric('npd_taint_failures_total');
  return { clock, api, registry, controller, advance, added, removed, failed };
}
