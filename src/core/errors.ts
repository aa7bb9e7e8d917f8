/** Error classes and helpers shared by every stage; nothing here imports the rest of src. */

/** Errors a sink throws, classified the way client-go's recordEvent classifies them. */
export class SinkError extends Error {
  /** HTTP status, or undefined for transport failures (which are retried). */
  readonly statusCode: number | undefined;
  /** `status.reason` from a Kubernetes Status body, e.g. AlreadyExists. */
  readonly reason: string | undefined;

  constructor(message: string, statusCode?: number, reason?: string) {
    super(message);
    this.name = 'SinkError';
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

/** A start-up failure the operator fixes by changing a flag: reported as one line, exit 2. */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartError';
  }
}

/** An error's message, prefixed with its errno code when the message does not already say it. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

export function errorCode(err: unknown): string | undefined {
  return err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
}

/** The server's Retry-After, in ms, that a sink error carries; undefined when absent or invalid. */
export function retryAfterMs(err: unknown): number | undefined {
  const value = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
