import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const SOURCE_DIR = import.meta.dirname;
const CACHE = join(SOURCE_DIR, '..', '..', '..', '.cache', 'fake-nvml');
const FLAGS = ['-shared', '-fPIC', '-O2', '-Wall', '-Wextra', '-Werror', '-fvisibility=hidden'];

function sources(): string[] {
  return readdirSync(SOURCE_DIR)
    .filter((f) => f.endsWith('.c') || f.endsWith('.h'))
    .sort();
}

/** The build's key: every C source and header, and the flags, so an edit to any of them rebuilds. */
function sourceHash(files: readonly string[]): string {
  const hash = createHash('sha256').update(FLAGS.join(' '));
  for (const f of files) hash.update(`\0${f}\0`).update(readFileSync(join(SOURCE_DIR, f)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The fake NVML (fake-nvml.c says what it answers and how a test scripts it) as a real
 * libnvidia-ml.so.1, built with gcc into .cache/fake-nvml/<hash of the sources>/ on first use and reused
 * until a source changes. Parallel test processes may build at once: each writes its own temporary file
 * and renames it into place, so none loads a half-written library. Throws with gcc's output when the
 * build fails.
 */
export function buildFakeNvml(): string {
  const files = sources();
  const dir = join(CACHE, sourceHash(files));
  const lib = join(dir, 'libnvidia-ml.so.1');
  if (existsSync(lib)) return lib;
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.build-${process.pid}.so`);
  const cFiles = files.filter((f) => f.endsWith('.c')).map((f) => join(SOURCE_DIR, f));
  try {
    execFileSync('gcc', [...FLAGS, '-o', tmp, ...cFiles, '-lpthread'], { stdio: 'pipe' });
  } catch (err) {
    rmSync(tmp, { force: true });
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`gcc could not build the fake NVML: ${e.stderr?.toString().trim() || e.message}`);
  }
  renameSync(tmp, lib);
  return lib;
}
