import type { LogLine, MonitorHealth } from '../core/types.ts';
import type { LogMonitorConfig } from '../rules/config.ts';
import { journalMatches, passesJournalMatches } from '../sources/journald/args.ts';
import type { LinesHandler, LogSource } from '../sources/source.ts';
import type { ReplayLine } from './parse-input.ts';

/** Hands recorded lines, in record order, to every replay source started on it. */
export class ReplayFeed {
  private readonly started = new Set<(line: ReplayLine) => void>();

  push(line: ReplayLine): void {
    for (const offer of this.started) offer(line);
  }

  /** A LogSource for one monitor config over this feed. */
  source(config: LogMonitorConfig): LogSource {
    return new ReplaySource(this.started, config);
  }
}

/**
 * Recorded lines as a log source. Each line is its own batch, so the monitor's recovery ticks fall
 * between lines exactly where the replayed clock puts them. A journald config gets only the journal
 * entries journalctl would give it (the same matches its command line carries); lines that did not come
 * from a journal are not filtered.
 */
class ReplaySource implements LogSource {
  private readonly feed: Set<(line: ReplayLine) => void>;
  private readonly accepts: (line: ReplayLine) => boolean;
  private offer: ((line: ReplayLine) => void) | undefined;

  constructor(feed: Set<(line: ReplayLine) => void>, config: LogMonitorConfig) {
    this.feed = feed;
    const matches =
      config.plugin === 'journald'
        ? journalMatches({ identifier: config.pluginConfig.source, unit: config.pluginConfig.unit })
        : [];
    this.accepts = (line) =>
      !line.fromJournal ||
      passesJournalMatches(matches, { SYSLOG_IDENTIFIER: line.identifier, _SYSTEMD_UNIT: line.unit });
  }

  start(onLines: LinesHandler): void {
    if (this.offer) return;
    const offer = (line: ReplayLine) => {
      if (!this.accepts(line)) return;
      const delivered: LogLine = { timestamp: line.timestamp, message: line.message };
      onLines([delivered]);
    };
    this.offer = offer;
    this.feed.add(offer);
  }

  async stop(): Promise<void> {
    if (this.offer) this.feed.delete(this.offer);
    this.offer = undefined;
  }

  health(): MonitorHealth {
    return this.offer ? { up: true, healthy: true } : { up: false, healthy: false, detail: 'not started' };
  }
}
