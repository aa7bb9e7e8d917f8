import type { Counter, Registry } from 'prom-client';
import { backoffMs } from '../core/backoff.ts';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { SinkError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { counter } from '../core/metrics.ts';
import type { Condition, ConditionStatus } from '../core/types.ts';
import type { KubeClient } from '../kube/client.ts';
import { retryAfterOf } from '../kube/errors.ts';
import { planTaints, type TaintPlan } from './plan.ts';
import type { TaintRule } from './spec.ts';

export const JSON_PATCH = 'application/json-patch+json';
/** Repairs drift (a taint removed by hand while the condition is still True) without a watch. */
export const TAINT_RESYNC_PERIOD_MS = 60_000;
export const TAINT_QUICK_ATTEMPTS = 5;
export const TAINT_BACKOFF_BASE_MS = 1_000;

/** The two calls the controller makes; a KubeClient, or a fake in tests. */
export type TaintClient = Pick<KubeClient, 'getNode' | 'request'>;

export interface TaintControllerOptions {
  readonly rules: readonly TaintRule[];
  readonly client: TaintClient;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger?: Logger;
  readonly resyncPeriodMs?: number;
  /** Read-plan-patch attempts per reconcile when the Node changed under us (409/422). */
  readonly quickAttempts?: number;
  readonly backoffBaseMs?: number;
  /** Default: the resync period. */
  readonly backoffMaxMs?: number;
  readonly random?: () => number;
  /**
   * No reconcile before this settles: the exporter's startup read of the Node, which restores the
   * conditions of before a restart. Without it the monitors' initial False would strip a taint that a
   * still-True condition put there, only to add it back a moment later.
   */
  readonly hold?: Promise<unknown>;
}

/** 409 from a resourceVersion precondition, 422 from a failed `test` op: the Node changed meanwhile. */
function isConflict(err: unknown): boolean {
  const code = err instanceof SinkError ? err.statusCode : undefined;
  return code === 409 || code === 422;
}

/**
 * Keeps the opt-in taints (--taint-on-condition) in line with the conditions the monitors report.
 * observe() never blocks: it records the status and, on a change, asks for a reconcile. One reconcile
 * runs at a time (changes during it coalesce into one more run); it reads the Node, plans, and sends
 * a guarded JSON patch only when something differs. Failures are counted and retried with backoff;
 * success schedules the next resync. Taints stay on stop: a restarting agent is not a healthy node.
 */
export class TaintController {
  private readonly rules: readonly TaintRule[];
  private readonly types: ReadonlySet<string>;
  private readonly client: TaintClient;
  private readonly nodeName: string;
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;
  private readonly resyncMs: number;
  private readonly quickAttempts: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly random: () => number;
  private readonly statuses = new Map<string, ConditionStatus>();
  private readonly changes: Counter<'action'>;
  private readonly failures: Counter;
  private timer: TimerHandle | undefined;
  private running = false;
  private held: boolean;
  private inFlight = false;
  private dirty = false;
  private failedInARow = 0;
  private notBefore = Number.NEGATIVE_INFINITY;

  constructor(opts: TaintControllerOptions) {
    this.rules = opts.rules;
    this.types = new Set(opts.rules.map((r) => r.conditionType));
    this.client = opts.client;
    this.nodeName = opts.nodeName;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.resyncMs = opts.resyncPeriodMs ?? TAINT_RESYNC_PERIOD_MS;
    this.quickAttempts = Math.max(1, opts.quickAttempts ?? TAINT_QUICK_ATTEMPTS);
    this.backoffBaseMs = opts.backoffBaseMs ?? TAINT_BACKOFF_BASE_MS;
    this.backoffMaxMs = opts.backoffMaxMs ?? this.resyncMs;
    this.random = opts.random ?? Math.random;
    this.held = opts.hold !== undefined;
    const release = () => {
      this.held = false;
      if (this.dirty) this.kick();
    };
    opts.hold?.then(release, release);
    this.changes = counter(opts.registry, {
      name: 'npd_taint_changes_total',
      help: 'Taints the agent added to or removed from its Node (--taint-on-condition).',
      labelNames: ['action'],
    });
    this.changes.inc({ action: 'add' }, 0);
    this.changes.inc({ action: 'remove' }, 0);
    this.failures = counter(opts.registry, {
      name: 'npd_taint_failures_total',
      help: 'Taint reconciles that failed (API errors, or conflicts beyond the quick retries).',
    });
  }

  /** Takes every condition update; ignores types no rule names and repeats of the same status. */
  observe(condition: Condition): void {
    if (!this.types.has(condition.type)) return;
    const previous = this.statuses.get(condition.type);
    this.statuses.set(condition.type, condition.status);
    if (previous !== condition.status) this.kick();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.dirty) this.kick();
  }

  /** An in-flight request still finishes; nothing is scheduled after it. */
  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private kick(): void {
    this.dirty = true;
    // During a backoff the pending timer runs the reconcile; a flapping condition must not bypass it.
    if (!this.running || this.held || this.inFlight || this.clock.now() < this.notBefore) return;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer?.cancel();
    this.timer = this.clock.setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    if (!this.running || this.inFlight || this.statuses.size === 0) return;
    this.inFlight = true;
    this.dirty = false;
    let next = this.resyncMs;
    try {
      await this.reconcile();
      this.failedInARow = 0;
      this.notBefore = Number.NEGATIVE_INFINITY;
      if (this.dirty) next = 0;
    } catch (err) {
      next = this.onFailure(err);
    } finally {
      this.inFlight = false;
    }
    if (this.running) this.schedule(next);
  }

  private onFailure(err: unknown): number {
    this.failures.inc();
    this.failedInARow++;
    const base = backoffMs(this.failedInARow, this.backoffBaseMs, this.backoffMaxMs);
    const jittered = base * (1 + 0.2 * this.random());
    const wait = Math.max(jittered, retryAfterOf(err) ?? 0);
    this.notBefore = this.clock.now() + wait;
    this.logger?.warn(
      { err, node: this.nodeName, retryInMs: Math.round(wait) },
      'failed to update node taints',
    );
    return wait;
  }

  /**
   * The first read may come from the API server's cache (resourceVersion=0, cheap for the resync);
   * after a conflict the re-read is a quorum read, so the retry plans against the Node as it is.
   */
  private async reconcile(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const node = await this.client.getNode(this.nodeName, attempt === 1 ? { resourceVersion: '0' } : {});
      const plan = planTaints(this.rules, this.statuses, node, this.clock.now());
      if (!plan.patch) return;
      try {
        await this.client.request({
          method: 'PATCH',
          path: `/api/v1/nodes/${encodeURIComponent(this.nodeName)}`,
          resource: 'nodes',
          body: plan.patch,
          contentType: JSON_PATCH,
        });
      } catch (err) {
        if (attempt < this.quickAttempts && isConflict(err) && this.running) continue;
        throw err;
      }
      this.record(plan);
      return;
    }
  }

  private record(plan: TaintPlan): void {
    this.changes.inc({ action: 'add' }, plan.added.length);
    this.changes.inc({ action: 'remove' }, plan.removed.length);
    const log = (r: TaintRule, msg: string) =>
      this.logger?.info(
        { node: this.nodeName, taint: `${r.key}:${r.effect}`, condition: r.conditionType },
        msg,
      );
    for (const r of plan.added) log(r, 'taint added');
    for (const r of plan.removed) log(r, 'taint removed');
  }
}
