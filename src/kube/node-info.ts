import type { Counter, Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { counter } from '../core/metrics.ts';
import { type BackoffPolicy, retryDelayMs } from './backoff.ts';
import type { KubeClient, NodeSnapshot } from './client.ts';
import { retryAfterOf } from './errors.ts';

export const NODE_INFO_INITIAL_BACKOFF_MS = 1_000;
export const NODE_INFO_MAX_BACKOFF_MS = 30_000;
/**
 * Each wait stretched by up to 100 %, as client-go's reflector backs off its list (800 ms to 30 s,
 * factor 2, jitter 1.0, tools/cache/reflector.go): agents restarted together during an outage come
 * back spread over 30 s, not within the 10 % (3 s) the old jitter gave them.
 */
export const NODE_INFO_JITTER = 1;
/** The longest Retry-After we wait for; longer asks are cut to this. */
export const NODE_INFO_MAX_RETRY_AFTER_MS = 60_000;

export interface NodeInfoOptions {
  readonly client: Pick<KubeClient, 'getNode'>;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger?: Logger;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly random?: () => number;
}

/**
 * The Node's UID, which `kubectl describe node` needs on every event. NPD blocks startup for up to 5 min
 * polling `GET node`; here the fetch runs in the background (resourceVersion=0, served from the
 * apiserver's cache) with capped exponential backoff until it succeeds, so monitors start at once. The
 * first UID learned, from this GET or from a status PATCH response, is kept until restart.
 */
export class NodeInfo {
  /** Resolves with the UID once known; never rejects. */
  readonly ready: Promise<string>;
  private readonly opts: NodeInfoOptions;
  private readonly fetches: Counter<'result'>;
  private resolveReady: (uid: string) => void = () => {};
  private known: string | undefined;
  private snapshot: NodeSnapshot | undefined;
  /** The newest Node seen, from the GET or a status patch's response (the heartbeat's, at least). */
  private latest: NodeSnapshot | undefined;
  private timer: TimerHandle | undefined;
  private running = false;
  private failures = 0;

  constructor(opts: NodeInfoOptions) {
    this.opts = opts;
    this.ready = new Promise<string>((resolve) => {
      this.resolveReady = resolve;
    });
    this.fetches = counter(opts.registry, {
      name: 'npd_node_info_fetch_total',
      help: 'GET node requests made to learn the Node UID, by result.',
      labelNames: ['result'],
    });
  }

  /** Starts fetching in the background; returns at once. */
  start(): void {
    if (this.running || this.known !== undefined) return;
    this.running = true;
    void this.fetch();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  uid(): string | undefined {
    return this.known;
  }

  /** The Node as last fetched, if a GET has succeeded. */
  node(): NodeSnapshot | undefined {
    return this.snapshot;
  }

  /**
   * The Node's status.capacity of `resource` as last seen ("8" for `nvidia.com/gpu`), undefined while
   * no Node was seen or it has none. The kubelet updates capacity as device plugins register.
   */
  capacity(resource: string): string | undefined {
    return this.latest?.capacity?.[resource];
  }

  /**
   * A client whose status patches keep capacity() current: each response is the whole Node, so the
   * heartbeat refreshes it without a GET of its own.
   */
  observing(client: Pick<KubeClient, 'patchNodeStatus'>): Pick<KubeClient, 'patchNodeStatus'> {
    return {
      patchNodeStatus: async (name, body) => {
        const node = await client.patchNodeStatus(name, body);
        if (node.uid !== '' && (this.known === undefined || node.uid === this.known)) this.latest = node;
        return node;
      },
    };
  }

  /** Learns the UID from another response; the first UID seen wins and ends the background fetch. */
  observe(uid: string): void {
    if (uid === '' || this.known !== undefined) return;
    this.known = uid;
    this.stop();
    this.resolveReady(uid);
  }

  private async fetch(): Promise<void> {
    if (!this.running) return;
    try {
      const node = await this.opts.client.getNode(this.opts.nodeName, { resourceVersion: '0' });
      if (node.uid === '') throw new Error(`node ${this.opts.nodeName} has no metadata.uid`);
      this.fetches.inc({ result: 'success' });
      this.snapshot = node;
      this.latest = node;
      this.observe(node.uid);
    } catch (err) {
      this.fetches.inc({ result: 'failure' });
      this.failures++;
      const delay = this.backoff(retryAfterOf(err));
      const log = { err, node: this.opts.nodeName, attempt: this.failures, retryInMs: Math.round(delay) };
      if (this.failures === 1) this.opts.logger?.warn(log, 'cannot get node yet; retrying in the background');
      else this.opts.logger?.debug(log, 'cannot get node');
      if (this.running) this.timer = this.opts.clock.setTimeout(() => void this.fetch(), delay);
    }
  }

  private backoff(retryAfter: number | undefined): number {
    const policy: BackoffPolicy = {
      initialMs: this.opts.initialBackoffMs ?? NODE_INFO_INITIAL_BACKOFF_MS,
      maxMs: this.opts.maxBackoffMs ?? NODE_INFO_MAX_BACKOFF_MS,
      jitter: NODE_INFO_JITTER,
      maxRetryAfterMs: NODE_INFO_MAX_RETRY_AFTER_MS,
    };
    return retryDelayMs(this.failures, policy, this.opts.random ?? Math.random, retryAfter);
  }
}
