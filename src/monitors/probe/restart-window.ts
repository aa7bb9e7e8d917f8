/**
 * Restarts within a sliding window, from successive samples of a unit's NRestarts and activation
 * time. NRestarts counts only automatic restarts and resets on a manual start; a changed activation
 * time catches those manual restarts (and the health-checker's `systemctl kill`). The first sample is
 * the baseline: restarts before the agent started have no known time.
 */
export class RestartWindow {
  private readonly windowMs: number;
  private last: { restarts: number | undefined; activatedUs: bigint } | undefined;
  private events: { at: number; count: number }[] = [];

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  /** Records a sample taken at `now` and returns the restarts seen within the window. */
  observe(now: number, restarts: number | undefined, activatedUs: bigint): number {
    const prev = this.last;
    this.last = { restarts, activatedUs };
    if (prev) {
      const reactivated = activatedUs !== prev.activatedUs && activatedUs !== 0n ? 1 : 0;
      let delta = reactivated;
      if (restarts !== undefined && prev.restarts !== undefined) {
        delta =
          restarts >= prev.restarts
            ? Math.max(restarts - prev.restarts, reactivated)
            : restarts + reactivated;
      }
      if (delta > 0) this.events.push({ at: now, count: delta });
    }
    this.events = this.events.filter((e) => e.at > now - this.windowMs);
    return this.events.reduce((sum, e) => sum + e.count, 0);
  }
}
