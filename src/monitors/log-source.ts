import type { LogLine } from '../types.ts';
import type { MonitorHealth } from './monitor.ts';

/** A stream of log lines from one place on the host (the kernel ring, the journal, a file). */
export interface LogSource {
  start(onLines: (lines: readonly LogLine[]) => void): void;
  stop(): Promise<void>;
  health(): MonitorHealth;
}
