import type { LogLine, MonitorHealth } from '../core/types.ts';
import { type SharedScan, sharedScan } from '../rules/shared-scan.ts';
import type { LinesHandler, LogSource } from './source.ts';

interface Subscriber {
  onLines: LinesHandler;
  literals: readonly string[];
}

/** One reader and one literal scan for every monitor that reads the same thing the same way. */
class SharedSource {
  readonly source: LogSource;
  readonly subscribers = new Set<Subscriber>();
  private scan: SharedScan | undefined;

  constructor(source: LogSource) {
    this.source = source;
  }

  retune(): void {
    this.scan = sharedScan([...this.subscribers].map((s) => s.literals));
  }

  deliver(lines: readonly LogLine[]): void {
    const scan = this.scan;
    const scanned = scan && { scan, found: lines.map((l) => scan.find(l.message)) };
    // One monitor's failure must not cost the others the batch; the reader still sees (and counts) it.
    let failure: unknown;
    for (const s of this.subscribers) {
      try {
        s.onLines(lines, scanned);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }
}

/**
 * Shares log sources between monitors. NPD opens /dev/kmsg once per kmsg monitor and decodes and
 * scans every record in each. Here monitors whose source reads the same way (plugin, path, plugin
 * config, lookback, delay) share one reader, and one pass of the literal prefilter serves all their
 * rules: of the five shipped kmsg monitors, four share a reader (kernel-counter's 20 m lookback keeps
 * its own).
 */
export class SourceHub {
  private readonly shared = new Map<string, SharedSource>();

  /** A LogSource for one monitor; the reader behind it opens with the first and closes with the last. */
  share(key: string, make: () => LogSource): LogSource {
    const sub: Subscriber = { onLines: () => {}, literals: [] };
    let joined: SharedSource | undefined;
    return {
      start: (onLines, literals = []) => {
        sub.onLines = onLines;
        sub.literals = literals;
        joined = this.join(key, make, sub);
      },
      stop: async () => {
        const leaving = joined;
        joined = undefined;
        if (leaving) await this.leave(key, leaving, sub);
      },
      health: (): MonitorHealth =>
        joined?.source.health() ?? { up: false, healthy: false, detail: 'not started' },
      retune: (literals) => {
        sub.literals = literals;
        joined?.retune();
      },
      position: () => joined?.source.position?.(),
    };
  }

  /** Where each running reader that can tell starts reading (one per shared reader). */
  positions(): string[] {
    return [...this.shared.values()].flatMap((s) => s.source.position?.() ?? []);
  }

  private join(key: string, make: () => LogSource, sub: Subscriber): SharedSource {
    let shared = this.shared.get(key);
    const first = !shared;
    if (!shared) {
      shared = new SharedSource(make());
      this.shared.set(key, shared);
    }
    shared.subscribers.add(sub);
    shared.retune();
    const s = shared;
    if (first) s.source.start((lines) => s.deliver(lines));
    return s;
  }

  private async leave(key: string, shared: SharedSource, sub: Subscriber): Promise<void> {
    shared.subscribers.delete(sub);
    shared.retune();
    if (shared.subscribers.size > 0) return;
    this.shared.delete(key);
    await shared.source.stop();
  }
}
