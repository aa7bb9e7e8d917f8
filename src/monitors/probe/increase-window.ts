/**
 * How much a monotonic kernel counter rose within a sliding window, from successive samples. The
 * first sample is the baseline (what happened before the agent started has no known time); a
 * counter that goes backwards (driver reload, device re-created) starts a new baseline.
 */
export class IncreaseWindow {
  private readonly windowMs: number;
  private samples: { at: number; value: bigint }[] = [];

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  /** Records `value` sampled at `now` and returns its rise since the oldest sample in the window. */
  observe(now: number, value: bigint): bigint {
    const last = this.samples.at(-1);
    if (last && value < last.value) this.samples = [];
    this.samples.push({ at: now, value });
    // Keep the newest sample at or before the window start: the rise is measured from there.
    while (this.samples.length > 1 && (this.samples[1]?.at ?? now) <= now - this.windowMs)
      this.samples.shift();
    const first = this.samples[0];
    return first ? value - first.value : 0n;
  }
}

/** One window per key (interface, interface+counter), created on first sight. */
export class IncreaseWindows {
  private readonly windowMs: number;
  private readonly byKey = new Map<string, IncreaseWindow>();

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  observe(key: string, now: number, value: bigint): bigint {
    let w = this.byKey.get(key);
    if (!w) {
      w = new IncreaseWindow(this.windowMs);
      this.byKey.set(key, w);
    }
    return w.observe(now, value);
  }
}
