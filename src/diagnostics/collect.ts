import type { Clock } from '../core/clock.ts';
import { deadline } from '../host/process/timeout.ts';
import { redact, redactInChunks } from './redact.ts';

/** What one part of a bundle produced. */
export type PartOutput =
  | { readonly text: string; readonly truncated?: boolean; readonly note?: string }
  | { readonly absent: string };

/** One file of the bundle and how to read it within a byte budget. */
export interface BundlePart {
  readonly name: string;
  /** This part's own cap; the bundle's remaining budget may be smaller. */
  readonly maxBytes: number;
  read(budget: number, signal: AbortSignal): Promise<PartOutput>;
}

export type PartStatus = 'ok' | 'truncated' | 'absent' | 'error' | 'skipped';

export interface ManifestEntry {
  readonly name: string;
  readonly status: PartStatus;
  readonly bytes: number;
  readonly note?: string;
}

export interface CollectedBundle {
  readonly files: readonly { readonly name: string; readonly data: Buffer }[];
  readonly parts: readonly ManifestEntry[];
  /** Bytes of all files' content: never more than the limit. */
  readonly contentBytes: number;
}

export interface CollectLimits {
  readonly maxBytes: number;
  /** For the whole collection; a part still running then is abandoned and recorded as such. */
  readonly timeoutMs: number;
}

/** A part's text is cut to this many times its own cap before redaction: the work per part is bounded. */
const REDACT_INPUT_FACTOR = 2;

/**
 * Keeps the newest bytes of a text starting on a line, so a cut never leaves the end of a line whose
 * beginning (a key before its value) is gone. When the last line alone is longer than max, `strict` keeps
 * nothing of it; otherwise its newest bytes are kept on a character boundary (for text already redacted).
 */
export function tailBytes(text: string, max: number, strict = false): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, cut: false };
  let start = bytes.length - max;
  if (bytes[start - 1] !== 0x0a) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl >= 0 && nl < bytes.length - 1) start = nl + 1;
    else if (strict) return { text: '', cut: true };
  }
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return { text: bytes.subarray(start).toString('utf8'), cut: true };
}

/** What is left of a text whose head was cut at an unknown point: from its second line on. */
export function dropPartialFirstLine(text: string): string {
  const nl = text.indexOf('\n');
  return nl < 0 ? '' : text.slice(nl + 1);
}

/** Lets the event loop run between chunks of work (the health probe among what it serves). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function abandoned(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new Error('time limit reached'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/**
 * Reads the parts in order within the limits: each gets what is left of the byte budget (at most its own
 * cap), is redacted, then cut to the budget, so the content can never outgrow maxBytes. Redaction runs in
 * chunks with the event loop served between them (`yieldNow`), and stops at the time limit. Once the
 * budget or the time is used up, the remaining parts are recorded as skipped; a part that fails is
 * recorded as an error. Collection itself never throws.
 */
export async function collectBundle(
  parts: readonly BundlePart[],
  limits: CollectLimits,
  clock: Clock,
  yieldNow: () => Promise<void> = nextTurn,
): Promise<CollectedBundle> {
  const files: { name: string; data: Buffer }[] = [];
  const manifest: ManifestEntry[] = [];
  const overall = deadline(clock, limits.timeoutMs, new AbortController().signal);
  let used = 0;
  try {
    for (const part of parts) {
      const budget = Math.min(part.maxBytes, limits.maxBytes - used);
      const entry = await readPart(part, budget, overall, yieldNow);
      manifest.push(entry.manifest);
      if (entry.data) {
        files.push({ name: part.name, data: entry.data });
        used += entry.data.length;
      }
    }
  } finally {
    overall.cancel();
  }
  return { files, parts: manifest, contentBytes: used };
}

async function readPart(
  part: BundlePart,
  budget: number,
  overall: ReturnType<typeof deadline>,
  yieldNow: () => Promise<void>,
): Promise<{ manifest: ManifestEntry; data?: Buffer }> {
  const skipped = (note: string) => ({
    manifest: { name: part.name, status: 'skipped' as const, bytes: 0, note },
  });
  const failed = (err: unknown) => {
    const note = redact((err as Error).message ?? String(err));
    return { manifest: { name: part.name, status: 'error' as const, bytes: 0, note } };
  };
  if (overall.expired()) return skipped('time limit reached before this part');
  if (budget <= 0) return skipped('size limit (maxBytes) reached before this part');
  let out: PartOutput;
  let text: string;
  let precut: boolean;
  try {
    out = await Promise.race([part.read(budget, overall.signal), abandoned(overall.signal)]);
    if ('absent' in out)
      return { manifest: { name: part.name, status: 'absent', bytes: 0, note: out.absent } };
    const input = tailBytes(out.text, REDACT_INPUT_FACTOR * part.maxBytes, true);
    precut = input.cut;
    text = await redactInChunks(input.text, { signal: overall.signal, yieldNow });
  } catch (err) {
    return failed(err);
  }
  const { text: kept, cut } = tailBytes(text, budget);
  const data = Buffer.from(kept, 'utf8');
  const truncated = cut || precut || out.truncated === true;
  const note = (cut || precut) && !out.note ? `cut to the newest ${budget} bytes` : out.note;
  const status: PartStatus = truncated ? 'truncated' : 'ok';
  return { manifest: { name: part.name, status, bytes: data.length, ...(note ? { note } : {}) }, data };
}
