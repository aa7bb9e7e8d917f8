import { backoffMs } from '../../core/backoff.ts';

// With poll(2) a reader that found records drains on the timer until QUIET_DRAINS empty drains (a wait
// per drain cost 47 millicores at 1,500 lines/s); without it, BUSY_BATCH records in a drain mean a flood.
export const BUSY_POLL_MS = 10;
export const QUIET_DRAINS = 10;
const BUSY_BATCH = 32;
// poll(2) saying readable with nothing to read is not a kmsg device (/dev/null, a regular file at the
// path): each such wake doubles the wait before the next poll, up to this, so it cannot spin.
export const EMPTY_WAKE_MAX_MS = 1000;

export interface Pace {
  /** Empty drains in a row; starts quiet, so a reader that finds the ring empty waits at once. */
  readonly emptyDrains: number;
  /** Wakes from poll(2) in a row whose drain found nothing. */
  readonly emptyWakes: number;
}

export const QUIET: Pace = { emptyDrains: QUIET_DRAINS, emptyWakes: 0 };

export interface Drained {
  /** The drain stopped at its record cap with more to read. */
  readonly capped: boolean;
  readonly read: number;
  readonly batch: number;
  /** The drain followed a wake from poll(2). */
  readonly woke: boolean;
}

/** What to do after a drain: drain again after `ms`, or wait in poll(2). Pure: no clock, no device. */
export type Next = { readonly timerMs: number } | { readonly wait: true };

export function nextDrain(
  pace: Pace,
  d: Drained,
  canWait: boolean,
  idleMs: number,
): { next: Next; pace: Pace; emptyWake: boolean } {
  const emptyDrains = d.read > 0 ? 0 : pace.emptyDrains + 1;
  const emptyWake = d.woke && d.read === 0;
  const emptyWakes = emptyWake ? pace.emptyWakes + 1 : d.read > 0 ? 0 : pace.emptyWakes;
  const busy = canWait ? emptyDrains < QUIET_DRAINS : d.batch >= BUSY_BATCH;
  // A capped drain continues at once; a busy ring is polled often, as it holds ~25 ms of a 40k/s flood.
  const next: Next = d.capped
    ? { timerMs: 0 }
    : emptyWake
      ? { timerMs: backoffMs(emptyWakes, 2 * BUSY_POLL_MS, EMPTY_WAKE_MAX_MS) }
      : busy
        ? { timerMs: Math.min(idleMs, BUSY_POLL_MS) }
        : { wait: true };
  return { next, pace: { emptyDrains, emptyWakes }, emptyWake };
}
