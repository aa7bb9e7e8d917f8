import type { Clock } from '../core/clock.ts';
import { SinkError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { NodeDiagnosticRequest, NodeDiagnosticStatus } from '../kube/node-diagnostics.ts';
import type { DiagnosticsMetrics } from './metrics.ts';
import { finalStatus } from './status.ts';

export interface StatusWriterDeps {
  readonly patchStatus: (name: string, status: NodeDiagnosticStatus) => Promise<void>;
  readonly clock: Clock;
  readonly metrics: DiagnosticsMetrics;
  readonly logger: Logger;
}

/** What became of a status write. */
export type Written = 'written' | 'retry' | 'refused';

/**
 * Writes the final statuses of requests. One that could not be written (the API server down) is kept
 * and written at the next poll without collecting again. One the API server refuses as invalid (422)
 * would fail the same way at every poll for ever: the request is ended as Failed with a short fixed
 * message instead, and if even that is refused, given up. Both are counted and logged.
 */
export class StatusWriter {
  private readonly deps: StatusWriterDeps;
  private readonly unreported = new Map<string, NodeDiagnosticStatus>();

  constructor(deps: StatusWriterDeps) {
    this.deps = deps;
  }

  /** The final status of a request still to be written, if any. */
  pending(uid: string): NodeDiagnosticStatus | undefined {
    return this.unreported.get(uid);
  }

  /** Requests no longer listed need no status. */
  forget(present: ReadonlySet<string>): void {
    for (const uid of this.unreported.keys()) if (!present.has(uid)) this.unreported.delete(uid);
  }

  /** Writes a final status; a write that failed for now is kept for the next poll. */
  async final(req: NodeDiagnosticRequest, status: NodeDiagnosticStatus): Promise<void> {
    const written = await this.write(req, status);
    if (written === 'retry') this.unreported.set(req.uid, status);
    if (written === 'written') this.unreported.delete(req.uid);
  }

  /**
   * Writes any status once. `refused`: the API server refused it as invalid, and the request has been
   * ended as Failed in its place (or given up); the caller must not take it up again.
   */
  async write(req: NodeDiagnosticRequest, status: NodeDiagnosticStatus, last = false): Promise<Written> {
    try {
      await this.deps.patchStatus(req.name, status);
      if (status.phase !== 'Running')
        this.deps.logger.info(
          { request: req.name, phase: status.phase, message: status.message },
          'NodeDiagnostic done',
        );
      return 'written';
    } catch (err) {
      if (invalid(err)) {
        await this.refused(req, status, err, last);
        return 'refused';
      }
      this.deps.metrics.failure('status');
      this.deps.logger.warn(
        { err, request: req.name, phase: status.phase },
        'could not write a NodeDiagnostic status; retrying',
      );
      return 'retry';
    }
  }

  /** `last`: the refused status was already the short Failed one. */
  private async refused(
    req: NodeDiagnosticRequest,
    status: NodeDiagnosticStatus,
    err: unknown,
    last: boolean,
  ): Promise<void> {
    const { metrics, logger, clock } = this.deps;
    this.unreported.delete(req.uid);
    metrics.failure('status_rejected');
    const fields = { request: req.name, phase: status.phase, err: (err as Error).message };
    if (last) {
      logger.error(fields, 'the API server refused every status for a NodeDiagnostic; given up');
      return;
    }
    logger.warn(fields, 'the API server refused a NodeDiagnostic status as invalid; writing Failed instead');
    const message = `the API server refused the agent's ${status.phase} status for this request as invalid (422); see the agent's log`;
    const failed = finalStatus(false, message, status.startedAt, clock.now(), 'StatusRejected');
    if ((await this.write(req, failed, true)) === 'retry') this.unreported.set(req.uid, failed);
  }
}

/** A 422 Invalid: the object as sent breaks the CRD's schema, so the same status can never be written. */
function invalid(err: unknown): boolean {
  return err instanceof SinkError && err.statusCode === 422;
}
