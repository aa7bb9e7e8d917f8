import type { Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { counter, zeroed } from '../core/metrics.ts';
import type { MallocTrimResult } from '../host/clib/malloc-trim.ts';

/**
 * After start-up and after a reload (the moments V8 frees its compile and parse memory), once soon and
 * once after the first probe round, ask the allocator to return freed pages. No periodic timer: an
 * idle agent allocates little after that, so a later trim returns almost nothing. Only the first trim
 * also pages out the file mappings: pages out while a flood runs fault back from disk, a stall longer
 * than the ~25 ms of records the kmsg ring holds at 40k lines/s (measured: 2,930 records lost when the
 * second one fell mid-flood).
 */
const DELAYS_MS = [1_000, 40_000];

export interface HeapTrimDeps {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly load: () => Promise<MallocTrimResult>;
}

export class HeapTrimmer {
  private readonly deps: HeapTrimDeps;
  private readonly calls;
  private loaded: Promise<MallocTrimResult> | undefined;
  private timers: TimerHandle[] = [];

  constructor(deps: HeapTrimDeps) {
    this.deps = deps;
    this.calls = counter(deps.registry, {
      name: 'npd_malloc_trim_calls_total',
      help: 'malloc_trim calls after start-up and reloads, by result (released, nothing, unavailable).',
      labelNames: ['result'],
    });
    zeroed(this.calls, { result: 'released' }, { result: 'nothing' }, { result: 'unavailable' });
  }

  /** Replaces any trims still pending: a reload right after start-up needs one schedule, not two. */
  schedule(): void {
    this.stop();
    this.timers = DELAYS_MS.map((ms, i) => this.deps.clock.setTimeout(() => void this.run(i === 0), ms));
  }

  stop(): void {
    for (const t of this.timers) t.cancel();
    this.timers = [];
  }

  private async run(pageOut: boolean): Promise<void> {
    const first = !this.loaded;
    this.loaded ??= this.deps.load();
    const result = await this.loaded;
    if ('unavailable' in result) {
      if (first)
        this.deps.logger.info({ reason: result.unavailable }, 'memory is not trimmed after start-up');
      this.calls.inc({ result: 'unavailable' });
      return;
    }
    if (pageOut) result.pageOut?.();
    this.calls.inc({ result: result.trim() ? 'released' : 'nothing' });
  }
}
