import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { LogLine, MonitorHealth } from '../core/types.ts';
import type { HostPaths } from '../host/paths.ts';
import type { TrustedWriter } from '../rules/config.ts';
import type { SharedScan } from '../rules/shared-scan.ts';

/**
 * What a log source reads: the part of a system-log-monitor config that is not rules (the full config
 * satisfies it, so sources need nothing from rules/ to be configured).
 */
export interface LogSourceConfig {
  /** The file the config came from, for errors. */
  readonly file: string;
  /** The monitor's source name: the metric label and log field. */
  readonly source: string;
  readonly pluginConfig: Readonly<Record<string, string>>;
  readonly logPath: string;
  readonly lookbackMs: number;
  readonly delayMs: number;
  /** journald: whose entries may be evidence; absent means every entry (the schema always sets it). */
  readonly trustedWriter?: TrustedWriter | undefined;
}

/** What a log source is built with. */
export interface SourceDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly paths: HostPaths;
}

/** A batch already run through a literal scan shared by every monitor reading the same source. */
export interface ScannedBatch {
  readonly scan: SharedScan;
  /** Per line of the batch: the scan's marks, or undefined when no literal occurs. */
  readonly found: readonly (Uint8Array | undefined)[];
}

export type LinesHandler = (lines: readonly LogLine[], scanned?: ScannedBatch) => void;

/** A stream of log lines from one place on the host (the kernel ring, the journal, a file). */
export interface LogSource {
  /** `literals` are what the reader's rules look for, so that a shared source can scan once. */
  start(onLines: LinesHandler, literals?: readonly string[]): void;
  stop(): Promise<void>;
  health(): MonitorHealth;
  /** Tells a shared source that the reader's rules, and so its literals, changed. */
  retune?(literals: readonly string[]): void;
  /** Where reading starts, for the start-up summary ("<source>: <where>"); undefined until known. */
  position?(): string | undefined;
}
