import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Small readers for /proc and /sys files. Kernel limits such as fs.file-max can be LONG_MAX, beyond
 * Number.MAX_SAFE_INTEGER, so integers are parsed as BigInt and narrowed only where it is safe.
 */

export async function readText(path: string, signal?: AbortSignal): Promise<string> {
  return readFile(path, { encoding: 'utf8', signal });
}

/** Whitespace-separated integer fields of a one-line file such as file-nr. */
export async function readBigInts(path: string, signal?: AbortSignal): Promise<bigint[]> {
  const text = (await readText(path, signal)).trim();
  return text.split(/\s+/).map((field) => parseBigInt(field, path));
}

export async function readBigInt(path: string, signal?: AbortSignal): Promise<bigint> {
  const [value] = await readBigInts(path, signal);
  if (value === undefined) throw new Error(`${path}: empty`);
  return value;
}

export function parseBigInt(field: string, path: string): bigint {
  if (!/^-?\d+$/.test(field)) throw new Error(`${path}: not an integer: ${JSON.stringify(field)}`);
  return BigInt(field);
}

/** Integers at or above 2^53 mean "no practical limit" (LONG_MAX, ULONG_MAX and friends). */
export const UNLIMITED = 2n ** 53n;

/** `part` as a percentage of `whole`, rounded down to 0.1 %, without losing BigInt precision. */
export function percentOf(part: bigint, whole: bigint): number {
  if (whole <= 0n) return 0;
  return Number((part * 1000n) / whole) / 10;
}

export function procFile(proc: string, ...parts: string[]): string {
  return join(proc, ...parts);
}

/** Formats a ratio for messages: "1234 of 5000 (24.6%)". */
export function usage(used: bigint | number, limit: bigint | number, percent: number): string {
  return `${used} of ${limit} (${percent}%)`;
}
