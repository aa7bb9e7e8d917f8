import { createRequire } from 'node:module';
import { errorMessage } from '../../core/errors.ts';

/** A loaded C library: koffi's func() declares one of its functions. */
export interface Libc {
  func(signature: string): unknown;
}

/** What is used of koffi: loading a library by name. */
export interface KoffiLoad {
  load(name: string): Libc;
}

const MUSL_ARCH: Readonly<Record<string, string>> = { x64: 'x86_64', arm64: 'aarch64' };

/**
 * The C library by soname: glibc's, then musl's (whose loader is its libc). By name rather than
 * dlopen(NULL), which searches the node binary's own exported symbols first.
 */
export function libcSonames(arch: string = process.arch): string[] {
  return ['libc.so.6', `libc.musl-${MUSL_ARCH[arch] ?? arch}.so.1`];
}

function requireKoffi(): KoffiLoad {
  return createRequire(import.meta.url)('koffi') as KoffiLoad;
}

function koffiOf(loadKoffi: () => KoffiLoad): KoffiLoad | Error {
  try {
    return loadKoffi();
  } catch (err) {
    return new Error(`koffi unavailable: ${errorMessage(err)}`);
  }
}

function open(loadKoffi: () => KoffiLoad): Libc | Error {
  const koffi = koffiOf(loadKoffi);
  if (koffi instanceof Error) return koffi;
  const tried: string[] = [];
  for (const soname of libcSonames()) {
    try {
      return koffi.load(soname);
    } catch (err) {
      tried.push(`${soname}: ${errorMessage(err)}`);
    }
  }
  return new Error(`no C library could be loaded (${tried.join('; ')})`);
}

/**
 * The one way the agent reaches libc (adjtimex, waitpid, malloc_trim, madvise, poll, pipe2): a function
 * that loads koffi and libc on its first call, and from then on returns the same library, or the same
 * Error saying why there is none (no koffi in this build, an unknown libc), so callers fall back.
 */
export function libcLoader(loadKoffi: () => KoffiLoad = requireKoffi): () => Libc | Error {
  let result: Libc | Error | undefined;
  return () => {
    result ??= open(loadKoffi);
    return result;
  };
}

/**
 * Another C library (NVML's libnvidia-ml.so.1) by soname or path, through the same koffi, so this stays
 * the one module that loads koffi. Each call tries again until one loads, then returns that library: a
 * driver installed after the agent started (the GPU Operator's driver container) is found at the next
 * try. The Error says which file and why (dlopen's message), or that koffi is missing.
 */
export function libraryLoader(name: string, loadKoffi: () => KoffiLoad = requireKoffi): () => Libc | Error {
  let lib: Libc | undefined;
  return () => {
    if (lib) return lib;
    const koffi = koffiOf(loadKoffi);
    if (koffi instanceof Error) return koffi;
    try {
      lib = koffi.load(name);
      return lib;
    } catch (err) {
      return new Error(`cannot load ${name}: ${errorMessage(err)}`);
    }
  };
}
