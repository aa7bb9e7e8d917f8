import type { Clock } from '../../core/clock.ts';

export interface Deadline {
  readonly signal: AbortSignal;
  /** True once this deadline (not the parent) fired. */
  expired(): boolean;
  cancel(): void;
}

/**
 * An abort signal that fires after `ms` on the injected clock or when `parent` aborts, so a request
 * can tell "the service hung" (its own deadline) from "the monitor is stopping" (the parent).
 */
export function deadline(clock: Clock, ms: number, parent: AbortSignal): Deadline {
  const controller = new AbortController();
  let fired = false;
  const timer = clock.setTimeout(() => {
    fired = true;
    controller.abort(new Error(`timed out after ${ms}ms`));
  }, ms);
  const onParent = () => controller.abort(parent.reason);
  if (parent.aborted) onParent();
  else parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    expired: () => fired,
    cancel() {
      timer.cancel();
      parent.removeEventListener('abort', onParent);
    },
  };
}
