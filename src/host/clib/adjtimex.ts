import { endianness } from 'node:os';
import { errorMessage } from '../../core/errors.ts';
import { type Libc, libcLoader } from './libc.ts';

/** The read-only part of struct timex that tells whether the kernel clock is synchronised. */
export interface Timex {
  /** adjtimex's return value: TIME_OK (0) … TIME_ERROR (5). */
  readonly state: number;
  readonly status: number;
  /** Microseconds. */
  readonly maxErrorUs: number;
  readonly estErrorUs: number;
}

export type AdjtimexResult = Timex | { readonly unavailable: string };
export type AdjtimexFn = () => Promise<AdjtimexResult>;

/** Set by the kernel (and NTP daemons) while the clock is not synchronised. */
export const STA_UNSYNC = 0x40;
export const TIME_ERROR = 5;

/** sizeof(struct timex) on LP64 Linux; the offsets below are the same on every LP64 ABI. */
const TIMEX_SIZE = 208;
const LP64_LE = new Set(['x64', 'arm64', 'riscv64', 'loong64', 'ppc64']);

export function decodeTimex(state: number, buf: Buffer): Timex {
  return {
    state,
    maxErrorUs: Number(buf.readBigInt64LE(24)),
    estErrorUs: Number(buf.readBigInt64LE(32)),
    status: buf.readInt32LE(40),
  };
}

/**
 * adjtimex(2) with modes = 0 (read only, no capability needed; the clock is not namespaced), called
 * through libc.ts, loaded on first use, so a build or platform without koffi falls back to the time
 * daemons' state files instead of failing to start.
 */
export function koffiAdjtimex(libc: () => Libc | Error = libcLoader()): AdjtimexFn {
  let call: ((buf: Buffer) => number) | undefined;
  let failed: string | undefined;
  const load = async (): Promise<void> => {
    if (!LP64_LE.has(process.arch) || endianness() !== 'LE' || process.platform !== 'linux') {
      failed = `adjtimex is only read on little-endian 64-bit Linux, not ${process.platform}/${process.arch}`;
      return;
    }
    try {
      const lib = libc();
      if (lib instanceof Error) throw lib;
      call = lib.func('int adjtimex(_Inout_ uint8_t *buf)') as (buf: Buffer) => number;
    } catch (err) {
      failed = `cannot load adjtimex through koffi: ${errorMessage(err)}`;
    }
  };
  return async () => {
    if (!call && !failed) await load();
    if (!call) return { unavailable: failed ?? 'adjtimex unavailable' };
    const buf = Buffer.alloc(TIMEX_SIZE);
    const state = call(buf);
    if (state < 0) return { unavailable: `adjtimex returned ${state}` };
    return decodeTimex(state, buf);
  };
}
