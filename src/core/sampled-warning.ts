const WARN_INTERVAL_MS = 60_000;

/**
 * A warning logged at most once per interval, carrying how many occurrences were seen since the last
 * one (this one included), so a file full of unparsable lines or a storm of dropped events costs one
 * log line a minute instead of one per occurrence; the counters say exactly how many.
 */
export class SampledWarning {
  private readonly log: (fields: Record<string, unknown>) => void;
  private readonly now: () => number;
  private lastAt: number | undefined;
  private suppressed = 0;

  constructor(now: () => number, log: (fields: Record<string, unknown>) => void) {
    this.now = now;
    this.log = log;
  }

  /** Records one occurrence; `example` is only evaluated when a warning is actually logged. */
  note(example: () => Record<string, unknown>): void {
    this.suppressed += 1;
    const now = this.now();
    if (this.lastAt !== undefined && now - this.lastAt < WARN_INTERVAL_MS) return;
    this.log({
      ...example(),
      count: this.suppressed,
      sinceMs: this.lastAt === undefined ? 0 : now - this.lastAt,
    });
    this.lastAt = now;
    this.suppressed = 0;
  }
}
