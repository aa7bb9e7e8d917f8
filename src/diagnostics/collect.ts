import type { Clock } from '../core/clock.ts';
import { deadline } from '../host/timeout.ts';
import { redact } from './redact.ts';

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

/** Keeps the newest bytes of a text (logs end with what matters), on a character boundary. */
export function tailBytes(text: string, max: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, cut: false };
  let start = bytes.length - max;
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return { text: bytes.subarray(start).toString('utf8'), cut: true };
}

function abandoned(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new Error('time limit reached'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/**
 * Reads the parts in order within the limits: each gets what is left of the byte budget (at most its own
 * cap), is redacted, then cut to the budget, so the content can never outgrow maxBytes. Once the budget or
 * the time is used up, the remaining parts are recorded as skipped; a part that fails is recorded as an
 * error. Collection itself never throws.
 */
export async function collectBundle(
  parts: readonly BundlePart[],
  limits: CollectLimits,
  clock: Clock,
): Promise<CollectedBundle> {
  const files: { name: string; data: Buffer }[] = [];
  const manifest: ManifestEntry[] = [];
  const overall = deadline(clock, limits.timeoutMs, new AbortController().signal);
  let used = 0;
  try {
    for (const part of parts) {
      const budget = Math.min(part.maxBytes, limits.maxBytes - used);
      const entry = await readPart(part, budget, overall);
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
): Promise<{ manifest: ManifestEntry; data?: Buffer }> {
  const skipped = (note: string) => ({
    manifest: { name: part.name, status: 'skipped' as const, bytes: 0, note },
  });
  if (overall.expired()) return skipped('time limit reached before this part');
  if (budget <= 0) return skipped('size limit (maxBytes) reached before this part');
  let out: PartOutput;
  try {
    out = await Promise.race([part.read(budget, overall.signal), abandoned(overall.signal)]);
  } catch (err) {
    const note = redact((err as Error).message ?? String(err));
    return { manifest: { name: part.name, status: 'error', bytes: 0, note } };
  }
  if ('absent' in out) return { manifest: { name: part.name, status: 'absent', bytes: 0, note: out.absent } };
  const { text, cut } = tailBytes(redact(out.text), budget);
  const data = Buffer.from(text, 'utf8');
  const truncated = cut || out.truncated === true;
  const note = cut && !out.note ? `cut to the newest ${budget} bytes` : out.note;
  const status: PartStatus = truncated ? 'truncated' : 'ok';
  return { manifest: { name: part.name, status, bytes: data.length, ...(note ? { note } : {}) }, data };
}
