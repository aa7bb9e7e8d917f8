import type { ProblemMetrics } from '../metrics/problem-metrics.ts';
import type { SourceHub } from '../sources/hub.ts';
import type { SourceDeps } from '../sources/source.ts';

/** What every monitor factory receives: what a log source needs, plus the problem metrics and the hub. */
export interface MonitorDeps extends SourceDeps {
  readonly problemMetrics: ProblemMetrics;
  /** Shares readers between monitors of the same source; without it each monitor reads alone. */
  readonly sources?: SourceHub;
  /**
   * --trust-quoted-text: rules may match the names and commands kernel and daemon lines quote from
   * user space, as NPD's do (docs/rules.md, "Who wrote the text"). Off by default.
   */
  readonly trustQuotedText?: boolean | undefined;
  /**
   * --trust-journal-writers: every journal entry a config selects is evidence, whatever its
   * trustedWriter says, as in NPD (docs/rules.md, "Who wrote a journal entry"). Off by default.
   */
  readonly trustJournalWriters?: boolean | undefined;
  /**
   * --trust-file-writers: every line of a filelog config is evidence, as `trustedWriter: any` makes
   * it, as in NPD (docs/rules.md, "Who wrote a log file line"). Off by default.
   */
  readonly trustFileWriters?: boolean | undefined;
  /**
   * The Node's status.capacity of a resource ("8" for `nvidia.com/gpu`) as the exporter last saw it.
   * Late-bound: monitors start before the Node is fetched, so it answers undefined until then, and
   * always without a cluster.
   */
  readonly nodeCapacity?: ((resource: string) => string | undefined) | undefined;
  /** --gpu-expected-count: overrides the nvml configs' expectedCount; undefined keeps theirs. */
  readonly gpuExpectedCount?: number | undefined;
}
