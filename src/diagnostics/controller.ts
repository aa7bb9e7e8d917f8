import type { Registry } from 'prom-client';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import {
  MAX_LISTED,
  type NodeDiagnosticList,
  type NodeDiagnosticRequest,
  type NodeDiagnosticStatus,
} from '../kube/node-diagnostics.ts';
import { type BundlePart, collectBundle } from './collect.ts';
import { type DiagnosticsMetrics, diagnosticsMetrics } from './metrics.ts';
import { SealError } from './sealed-url.ts';
import { bundleManifest, finalStatus, successMessage } from './status.ts';
import { StatusWriter } from './status-writer.ts';
import { tarGz } from './tar.ts';

export const DIAGNOSTICS_POLL_PERIOD_MS = 10_000;
export const DEFAULT_SINCE_MINUTES = 60;
export const MAX_SINCE_MINUTES = 24 * 60;
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
export const MIN_MAX_BYTES = 1024;
export const MAX_MAX_BYTES = 64 * 1024 * 1024;
export const COLLECT_TIMEOUT_MS = 60_000;
/** How long a finished request stays before the agent deletes it (--diagnostics-finished-ttl). */
export const DEFAULT_FINISHED_TTL_MS = 24 * 60 * 60_000;

const TERMINAL = new Set(['Succeeded', 'Failed']);
/**
 * Collections started per request, across agent restarts. A request found Running was being collected
 * by an agent that stopped (killed, OOM, liveness probe); one retry covers an unrelated restart, a second
 * death means the request itself may be what kills the agent, so it is failed rather than redone.
 */
export const MAX_ATTEMPTS = 2;

/** The API calls the controller makes, bound to its node; the real client or a fake. */
export interface DiagnosticsApi {
  /** Bounded: past MAX_LISTED requests the listing stops, `complete: false`. */
  list(): Promise<NodeDiagnosticList>;
  patchStatus(name: string, status: NodeDiagnosticStatus): Promise<void>;
  /** Deletes the request if its uid still matches. */
  delete(name: string, uid: string): Promise<void>;
  /** Publishes the agent's upload key on its Node; retried at each poll until it succeeds. */
  publishKey(): Promise<void>;
}

export interface DiagnosticsControllerOptions {
  readonly api: DiagnosticsApi;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly logger: Logger;
  /** The bundle's parts for a request going back `sinceMinutes`. */
  readonly parts: (sinceMinutes: number) => readonly BundlePart[];
  /** The URL to upload to (a sealed one opened); throws a SealError, whose message is safe to show. */
  readonly target: (req: NodeDiagnosticRequest) => string;
  /** PUTs the bundle; throws an error whose message is safe to show (one of a fixed set, never the URL). */
  readonly upload: (uploadURL: string, body: Buffer) => Promise<void>;
  readonly pollPeriodMs?: number;
  readonly collectTimeoutMs?: number;
  /** A finished request is deleted this long after completedAt; 0 keeps them. */
  readonly finishedTtlMs?: number;
}

const clamp = (v: number | undefined, def: number, min: number, max: number) =>
  Math.min(max, Math.max(min, Math.floor(v ?? def)));

/**
 * Serves NodeDiagnostic requests for this node, one at a time: marks a request Running, collects a
 * bounded bundle, uploads it and writes Succeeded or Failed. A request with a terminal phase is never
 * redone (also after a restart: the phase is on the object); a Running one left by a crashed agent is,
 * up to MAX_ATTEMPTS collections in all (status.attempts counts them), then it is Failed.
 * A request for another node is ignored even if the API server hands it over. A final status that
 * could not be written is retried on the next poll without collecting again; one refused as invalid
 * ends the request as Failed (StatusWriter).
 */
export class DiagnosticsController {
  private readonly opts: DiagnosticsControllerOptions;
  private readonly metrics: DiagnosticsMetrics;
  private readonly handled = new Set<string>();
  private readonly ignored = new Set<string>();
  private readonly statuses: StatusWriter;
  private timer: TimerHandle | undefined;
  private running = false;
  private keyPublished = false;
  /** The last listing stopped at MAX_LISTED. */
  private overflowing = false;

  constructor(opts: DiagnosticsControllerOptions) {
    this.opts = opts;
    this.metrics = diagnosticsMetrics(opts.registry);
    const { clock, logger } = opts;
    const patchStatus = (name: string, status: NodeDiagnosticStatus) => opts.api.patchStatus(name, status);
    this.statuses = new StatusWriter({ patchStatus, clock, logger, metrics: this.metrics });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** A request in progress still finishes; nothing is scheduled after it. */
  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    this.timer = this.opts.clock.setTimeout(() => void this.poll(), ms);
  }

  /** One pass over the listed requests; exposed for tests, which drive it without timers. */
  async poll(): Promise<void> {
    await this.publishKey();
    try {
      const listing = await this.opts.api.list();
      this.noteOverflow(listing);
      // What a capped listing left out is still there: forget nothing about it.
      if (listing.complete) this.forgetGone(listing.items);
      for (const item of listing.items) await this.consider(item);
      await this.expire(listing.items);
    } catch (err) {
      this.metrics.failure('list');
      this.opts.logger.warn({ err }, 'listing NodeDiagnostic requests failed; retrying');
    }
    if (this.running) this.schedule(this.opts.pollPeriodMs ?? DIAGNOSTICS_POLL_PERIOD_MS);
  }

  /**
   * /healthz's line for this feature: why it is degraded, or nothing. Degraded is not dead: restarting
   * the agent would not shorten the backlog, serving and expiring does.
   */
  health(): string | undefined {
    if (!this.overflowing) return undefined;
    return `diagnostics: degraded (more than ${MAX_LISTED} NodeDiagnostic requests for this node: the first ${MAX_LISTED} listed are served and expired, the rest wait until the backlog shrinks)`;
  }

  /** A listing that stopped at the cap is counted at every poll, and logged when it starts and ends. */
  private noteOverflow(listing: NodeDiagnosticList): void {
    if (!listing.complete) this.metrics.listOverflow();
    if (listing.complete !== this.overflowing) return;
    this.overflowing = !listing.complete;
    const fields = { listed: listing.items.length, cap: MAX_LISTED };
    if (this.overflowing)
      this.opts.logger.warn(fields, 'more NodeDiagnostic requests than one listing reads; serving the first');
    else this.opts.logger.info(fields, 'NodeDiagnostic requests fit in one listing again');
  }

  /** Until the key is on the Node, no operator can seal a URL for this agent; requests are still served. */
  private async publishKey(): Promise<void> {
    if (this.keyPublished) return;
    try {
      await this.opts.api.publishKey();
      this.keyPublished = true;
    } catch (err) {
      this.metrics.failure('key');
      this.opts.logger.warn({ err }, 'could not publish the diagnostics upload key on the Node; retrying');
    }
  }

  /** Deletes this node's requests finished more than the TTL ago, so the list stays short. */
  private async expire(items: readonly NodeDiagnosticRequest[]): Promise<void> {
    const ttl = this.opts.finishedTtlMs ?? DEFAULT_FINISHED_TTL_MS;
    if (ttl <= 0) return;
    const now = this.opts.clock.now();
    for (const req of items) {
      const done = TERMINAL.has(req.phase) && req.completedAt !== undefined && now - req.completedAt > ttl;
      if (!done || req.nodeName !== this.opts.nodeName || this.statuses.pending(req.uid)) continue;
      try {
        await this.opts.api.delete(req.name, req.uid);
        this.metrics.expired();
      } catch (err) {
        this.metrics.failure('expire');
        this.opts.logger.warn(
          { err, request: req.name },
          'could not delete an expired NodeDiagnostic; retrying',
        );
      }
    }
  }

  private forgetGone(items: readonly NodeDiagnosticRequest[]): void {
    const present = new Set(items.map((i) => i.uid));
    for (const set of [this.handled, this.ignored])
      for (const uid of set) if (!present.has(uid)) set.delete(uid);
    this.statuses.forget(present);
  }

  private async consider(req: NodeDiagnosticRequest): Promise<void> {
    if (req.nodeName !== this.opts.nodeName) {
      if (this.ignored.has(req.uid)) return;
      this.ignored.add(req.uid);
      this.metrics.ignored('other_node');
      this.opts.logger.warn(
        { request: req.name, node: req.nodeName },
        'ignoring a NodeDiagnostic for another node',
      );
      return;
    }
    const pending = this.statuses.pending(req.uid);
    if (pending) return this.statuses.final(req, pending);
    if (TERMINAL.has(req.phase) || this.handled.has(req.uid)) return;
    // Running here means another agent process started it: this one never left a request Running.
    const attempts = req.phase === 'Running' ? Math.max(1, req.attempts ?? 1) : 0;
    if (attempts >= MAX_ATTEMPTS) return this.abandon(req, attempts);
    await this.handle(req, attempts + 1);
  }

  private async abandon(req: NodeDiagnosticRequest, attempts: number): Promise<void> {
    this.handled.add(req.uid);
    this.metrics.failure('interrupted');
    this.metrics.request('failed');
    const message = `the agent stopped while collecting this request ${attempts} times; not retried`;
    // startedAt stays as the last agent wrote it.
    await this.statuses.final(
      req,
      finalStatus(false, message, undefined, this.opts.clock.now(), 'Interrupted'),
    );
  }

  private async handle(req: NodeDiagnosticRequest, attempts: number): Promise<void> {
    const url = this.target(req);
    if (url instanceof Error) {
      this.handled.add(req.uid);
      return this.statuses.final(
        req,
        finalStatus(false, url.message, undefined, this.opts.clock.now(), 'UploadRefused'),
      );
    }
    const startedAt = new Date(this.opts.clock.now()).toISOString();
    const running = { phase: 'Running' as const, message: 'collecting', startedAt, attempts };
    const marked = await this.statuses.write(req, running);
    if (marked === 'refused') this.handled.add(req.uid);
    if (marked !== 'written') return;
    this.handled.add(req.uid);
    this.opts.logger.info({ request: req.name }, 'collecting a diagnostics bundle');
    await this.statuses.final(req, await this.produce(req, url, startedAt));
  }

  /** Refused before anything is collected: a plain URL not allowed, or a sealed one that does not open. */
  private target(req: NodeDiagnosticRequest): string | Error {
    try {
      return this.opts.target(req);
    } catch (err) {
      this.metrics.failure('target');
      this.metrics.request('failed');
      return err instanceof SealError ? err : new Error('the upload URL could not be read');
    }
  }

  private async produce(
    req: NodeDiagnosticRequest,
    url: string,
    startedAt: string,
  ): Promise<NodeDiagnosticStatus> {
    const { clock } = this.opts;
    const sinceMinutes = clamp(req.sinceMinutes, DEFAULT_SINCE_MINUTES, 1, MAX_SINCE_MINUTES);
    const maxBytes = clamp(req.maxBytes, DEFAULT_MAX_BYTES, MIN_MAX_BYTES, MAX_MAX_BYTES);
    const limits = { maxBytes, timeoutMs: this.opts.collectTimeoutMs ?? COLLECT_TIMEOUT_MS };
    const bundle = await collectBundle(this.opts.parts(sinceMinutes), limits, clock);
    for (const p of bundle.parts) this.metrics.part(p.status);
    const manifest = bundleManifest(req, bundle, { sinceMinutes, maxBytes, createdAt: clock.now() });
    const body = await tarGz([...bundle.files, manifest], clock.now());
    try {
      await this.opts.upload(url, body);
    } catch (err) {
      this.metrics.failure('upload');
      this.metrics.request('failed');
      const detail = (err as { detail?: string }).detail;
      this.opts.logger.warn({ request: req.name, err: (err as Error).message, detail }, 'upload failed');
      return finalStatus(false, (err as Error).message, startedAt, clock.now());
    }
    this.metrics.request('succeeded');
    this.metrics.uploaded(body.length);
    return {
      ...finalStatus(true, successMessage(body.length, bundle), startedAt, clock.now()),
      bytes: body.length,
    };
  }
}
