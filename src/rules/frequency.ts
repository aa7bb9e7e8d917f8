/**
 * The sliding-window counter behind frequency rules, replacing NPD's log-counter helper: a rule fires
 * once `threshold` matches fall within `windowMs`, and each revert match cancels the newest one.
 */
export class FrequencyWindow {
  private readonly hits: number[] = [];
  private readonly threshold: number;
  private readonly windowMs: number;

  constructor(threshold: number, windowMs: number) {
    this.threshold = threshold;
    this.windowMs = windowMs;
  }

  hit(at: number): void {
    this.hits.push(at);
    this.expire(at);
  }

  revert(at: number): void {
    this.expire(at);
    this.hits.pop();
  }

  /** Whether the count within the window ending at `now` meets the threshold. */
  reached(now: number): boolean {
    this.expire(now);
    return this.hits.length >= this.threshold;
  }

  reset(): void {
    this.hits.length = 0;
  }

  count(now: number): number {
    this.expire(now);
    return this.hits.length;
  }

  private expire(now: number): void {
    const floor = now - this.windowMs;
    while (this.hits.length > 0 && (this.hits[0] as number) <= floor) this.hits.shift();
  }
}
