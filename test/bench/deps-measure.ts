/**
 * Measures what loading a module costs, the same way for our clients and for the libraries: an entry
 * that imports it is bundled by esbuild with the shipped bundle's settings (minified ESM, built-ins
 * through require()), run by this Node several times, and compared with a baseline bundle that loads
 * only the row's built-ins and shared packages.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { REPO } from '../support/agent-process.ts';

/**
 * One run: RSS after load (after a full GC), wall ms from process start to the end of load, and the CPU
 * ms the process spent by then (all threads; steadier than wall time on a shared machine).
 */
export interface LoadSample {
  readonly rssKiB: number;
  readonly ms: number;
  readonly cpuMs: number;
}

export interface Built {
  readonly file: string;
  readonly bytes: number;
}

/** As test/tools/build.ts: `import 'node:http'` builds an ESM facade that loads far more than require(). */
const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.namespace === 'builtin'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** Reads VmRSS and the time after a full GC, so what a load left as garbage does not count. */
const REPORT = `globalThis.gc?.();
const __rss = /^VmRSS:\\s+(\\d+)/m.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1];
const __cpu = process.cpuUsage();
console.log(JSON.stringify({ rssKiB: Number(__rss), ms: performance.now(), cpuMs: (__cpu.user + __cpu.system) / 1000 }));
`;

/** Bundled CommonJS code calls require() for Node built-ins; an unbundled entry needs it too. */
export const REQUIRE_BANNER =
  "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/** An entry importing `modules` whole (every export kept alive) after requiring `builtins`. */
export function entrySource(builtins: readonly string[], modules: readonly string[]): string {
  const pre = builtins.map((b, i) => `const __b${i} = require(${JSON.stringify(b)});`);
  const imports = modules.map((m, i) => `import * as __m${i} from ${JSON.stringify(m)};`);
  const keep = `globalThis.__keep = [${[...builtins.map((_, i) => `__b${i}`), ...modules.map((_, i) => `__m${i}`)].join(', ')}];`;
  return `${imports.join('\n')}\n${pre.join('\n')}\n${keep}\n${REPORT}`;
}

/**
 * Bundles `source` in `dir` (whose node_modules holds the library). Bare names not found there (the
 * agent's own dependencies, e.g. prom-client) resolve from the repo's node_modules.
 */
export async function bundleEntry(
  dir: string,
  name: string,
  source: string,
  external: readonly string[] = [],
): Promise<Built> {
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, `${name}.entry.mjs`);
  const file = join(dir, `${name}.bundle.mjs`);
  writeFileSync(entry, source);
  await build({
    entryPoints: [entry],
    outfile: file,
    absWorkingDir: dir,
    nodePaths: [join(REPO, 'node_modules')],
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    logLevel: 'error',
    // dbus-next's optional native usocket (abstract sockets) and x11 (session-bus autolaunch) are not
    // its dependencies: it requires them only when used, so they stay out as they do when installed.
    external: ['usocket', 'x11', '*.node', ...external],
    plugins: [builtinsViaRequire],
    banner: { js: REQUIRE_BANNER },
  });
  return { file, bytes: statSync(file).size };
}

export function runOnce(file: string): LoadSample {
  const out = execFileSync(process.execPath, ['--expose-gc', file], { encoding: 'utf8', timeout: 60_000 });
  const last = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as LoadSample;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Runs the bundles in turn (interleaved, so a busy moment on the machine hits all alike), `runs` times. */
export function sampleAll(files: readonly string[], runs: number): LoadSample[][] {
  const samples: LoadSample[][] = files.map(() => []);
  for (let r = 0; r < runs; r++) for (const [i, f] of files.entries()) samples[i]?.push(runOnce(f));
  return samples;
}

/** Median RSS and load time of `samples` minus the baseline's medians. */
export function added(samples: readonly LoadSample[], base: readonly LoadSample[]): LoadSample {
  return {
    rssKiB: median(samples.map((s) => s.rssKiB)) - median(base.map((s) => s.rssKiB)),
    ms: median(samples.map((s) => s.ms)) - median(base.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)) - median(base.map((s) => s.cpuMs)),
  };
}

/** `npm install` of pinned packages into `dir` (no scripts: nothing here needs a native build). */
export function npmInstall(dir: string, packages: readonly string[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"npd-deps-bench","private":true}\n');
  execFileSync(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--omit=optional',
      '--no-package-lock',
      ...packages,
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
  );
}

/** Bytes under `dir`/node_modules and the packages there: what an image shipping node_modules carries. */
export function installedSize(dir: string): { bytes: number; packages: number } {
  const du = execFileSync('du', ['-sb', join(dir, 'node_modules')], { encoding: 'utf8' });
  // `npm ls --parseable` prints the project itself first, then one path per installed package.
  const ls = execFileSync('npm', ['ls', '--all', '--parseable'], { cwd: dir, encoding: 'utf8' });
  return { bytes: Number(du.split('\t')[0]), packages: ls.trim().split('\n').length - 1 };
}
