import type { Registry } from 'prom-client';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { Broadcaster, type Watcher } from './broadcaster.ts';
import { startLogging, startStructuredLogging } from './log-sinks.ts';
import { monotonicNanos, type NanoSource } from './names.ts';
import { EventRecorder } from './recorder.ts';
import { type SinkLoop, startRecordingToSink } from './sink-loop.ts';
import type { EventSink, KubeEvent, ObjectRef } from './types.ts';

export { nodeRef } from './recorder.ts';

/** An extra consumer of one source's recorded events (webhook, file), with its own bounded queue. */
export interface ExtraWatcher {
  /**
   * Stops retrying, tries each event still queued once, and resolves within `graceMs` (on the injected
   * clock); events not tried by then are counted as dropped.
   */
  flush(graceMs: number): Promise<void>;
}

/** Attaches an extra watcher to a source's broadcaster; called once per source. */
export type ExtraSinkFactory = (broadcaster: Broadcaster<KubeEvent>, source: string) => ExtraWatcher;

export interface EventPipelineOptions {
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** The API sink; without one, events are only logged. */
  readonly sink?: EventSink;
  /** The involved object of every event: the Node reference (apiVersion v1, kind Node, uid, no namespace). */
  readonly node: ObjectRef;
  /** source.host and reportingInstance. */
  readonly host: string;
  /** Event namespace when the node reference has none; default "default". */
  readonly namespace?: string;
  /** Uniform in [0, 1), for the first retry sleep's jitter. */
  readonly random?: () => number;
  readonly uuid?: () => string;
  /**
   * Where the plain one-line log goes. Defaults to debug level, since the structured watcher already logs
   * every event at info and two info lines per event would only add noise.
   */
  readonly logLine?: (line: string) => void;
  /** Uncorrelated sinks that, like the log watchers, get every occurrence (see docs/event-sinks.md). */
  readonly extraWatchers?: readonly ExtraSinkFactory[];
}

export interface EventPipeline {
  /** The recorder for one problem-daemon source, created on first use. */
  recorderFor(source: string): EventRecorder;
  /**
   * Stops accepting events, tries each event still queued for the API once, and resolves within
   * `graceMs` (on the injected clock); events not tried by then are counted as dropped.
   */
  shutdown(graceMs: number): Promise<void>;
}

interface SourcePipeline {
  readonly recorder: EventRecorder;
  readonly broadcaster: Broadcaster<KubeEvent>;
  readonly sinkLoop: SinkLoop | undefined;
  readonly logWatchers: readonly Watcher[];
  readonly extras: readonly ExtraWatcher[];
}

function buildSource(opts: EventPipelineOptions, source: string, nanos: NanoSource): SourcePipeline {
  const { clock, registry, logger } = opts;
  const broadcaster = new Broadcaster<KubeEvent>({ registry, logger, source, clock });
  const sinkLoop = opts.sink
    ? startRecordingToSink(broadcaster, {
        source,
        sink: opts.sink,
        clock,
        registry,
        logger,
        random: opts.random,
        correlator: { nanos },
      })
    : undefined;
  const logLine = opts.logLine ?? ((line: string) => logger.debug(line));
  const logWatchers = [startStructuredLogging(broadcaster, logger), startLogging(broadcaster, logLine)];
  const extras = (opts.extraWatchers ?? []).map((attach) => attach(broadcaster, source));
  const recorder = new EventRecorder({
    component: source,
    host: opts.host,
    involvedObject: opts.node,
    namespace: opts.namespace,
    clock,
    broadcaster,
    nanos,
    logger,
    registry,
    uuid: opts.uuid,
  });
  return { recorder, broadcaster, sinkLoop, logWatchers, extras };
}

async function shutdownSource(pipeline: SourcePipeline, graceMs: number): Promise<void> {
  // Flush first so a retry sleep in progress is abandoned and the remaining events are tried only once.
  const flushed = [pipeline.sinkLoop?.flush(graceMs), ...pipeline.extras.map((e) => e.flush(graceMs))];
  await pipeline.broadcaster.shutdown();
  await Promise.all([...flushed, ...pipeline.logWatchers.map((w) => w.done)]);
}

/**
 * NPD's event wiring: one broadcaster, recorder and correlating API sink per source, plus structured and
 * plain log watchers. All sources share one nanosecond source, so event names never collide across them.
 */
export function createEventPipeline(opts: EventPipelineOptions): EventPipeline {
  const nanos = monotonicNanos(opts.clock);
  const sources = new Map<string, SourcePipeline>();
  let stopping: Promise<void> | undefined;
  return {
    recorderFor(source) {
      let pipeline = sources.get(source);
      if (!pipeline) {
        pipeline = buildSource(opts, source, nanos);
        sources.set(source, pipeline);
        // A late source still gets a recorder, whose events are refused and counted like any other.
        if (stopping) void shutdownSource(pipeline, 0);
      }
      return pipeline.recorder;
    },
    shutdown(graceMs) {
      stopping ??= Promise.all([...sources.values()].map((p) => shutdownSource(p, graceMs))).then(() => {});
      return stopping;
    },
  };
}
