/**
 * A failed API call. It is a SinkError so the recorder classifies it the way client-go does: a status
 * code means the server answered (abandon), none means a transport failure (retry).
 */
export class ApiError extends SinkError {
  /** Set for 429 and 5xx responses that carried a usable Retry-After header. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, statusCode?: number, reason?: string, retryAfterMs?: number) {
    super(message, statusCode, reason);
    this.name = 'ApiError';
    this.retryAfterMs = retryAfterMs;
  }
}

/** The server-suggested wait in ms, if the error carries one; usable on any thrown value. */
export function retryAfterOf(err: unknown): number | undefined {
  return err instanceof ApiError ? err.retryAfterMs : undefined;
}

/** Longest wait we accept from Retry-After, so a bogus header cannot park a loop for days. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * Retry-After as delay-seconds (what kube-apiserver sends) or as an HTTP-date. client-go understands only
 * integer seconds; accepting the date form as well is harmless.
 */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

interface StatusBody {
  readonly message?: unknown;
  readonly reason?: unknown;
}

/** Reads `reason` and `message` from a metav1.Status body, tolerating any other body. */
export function statusDetails(body: string): { reason: string | undefined; message: string | undefined } {
  try {
    const parsed = JSON.parse(body) as StatusBody | null;
    if (parsed && typeof parsed === 'object') {
      return {
        reason: typeof parsed.reason === 'string' && parsed.reason !== '' ? parsed.reason : undefined,
        message: typeof parsed.message === 'string' && parsed.message !== '' ? parsed.message : undefined,
      };
    }
  } catch {
    // not JSON: a proxy or load balancer page
  }
  return { reason: undefined, message: undefined };
}

import { SinkError } from '../core/errors.ts';
