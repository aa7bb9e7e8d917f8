import { errorMessage } from '../../core/errors.ts';
import { type Libc, libcLoader } from './libc.ts';
import { type Madvise, pageOutFileMappings } from './page-out.ts';

/** Returns true when the allocator gave memory back to the kernel. */
export type MallocTrim = () => boolean;
/** Pages out the read-only file mappings (page-out.ts); returns how many ranges the kernel refused. */
export type PageOut = () => number;
export type MallocTrimResult =
  | { readonly trim: MallocTrim; readonly pageOut?: PageOut }
  | { readonly unavailable: string };

/**
 * glibc's malloc_trim(0), and page-out of the file mappings start-up touched (page-out.ts), through
 * koffi. glibc keeps the pages V8 freed after start-up (parser and
 * compiler zones) in its arenas; trimming returns them: measured RssAnon 33.8 -> 23.4 MiB in ~1 ms on
 * the idle bundle. libc (libc.ts) is loaded on first use; musl has no malloc_trim, so there (and
 * without koffi) the result says why and the agent runs on untrimmed.
 */
export async function libcMallocTrim(libc: () => Libc | Error = libcLoader()): Promise<MallocTrimResult> {
  if (process.platform !== 'linux')
    return { unavailable: `malloc_trim is glibc's, not ${process.platform}'s` };
  try {
    const lib = libc();
    if (lib instanceof Error) throw lib;
    const fn = lib.func('int malloc_trim(size_t pad)') as (pad: number) => number;
    const madvise = lib.func('int madvise(uintptr_t addr, size_t len, int advice)') as Madvise;
    return { trim: () => fn(0) === 1, pageOut: () => pageOutFileMappings(madvise) };
  } catch (err) {
    return { unavailable: `malloc_trim unavailable (not glibc, or koffi missing): ${errorMessage(err)}` };
  }
}
