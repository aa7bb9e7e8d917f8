/**
 * `npm run bench -- deps [--runs=7] [--dir=DIR]`: each protocol client written here against the maintained
 * library it replaces (README, "Dependencies, and where we left the named stack"): RSS and time that
 * loading it adds, its minified bundle, the library's installed closure, and a wire-format cross-check
 * against protobufjs. The libraries are installed from the npm registry into DIR (default: a temporary
 * directory, removed afterwards), never into the repo. Not part of `npm test`: it needs the registry.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { correctness } from './deps-correctness.ts';
import {
  added,
  type Built,
  bundleEntry,
  entrySource,
  installedSize,
  type LoadSample,
  npmInstall,
  REQUIRE_BANNER,
  sampleAll,
} from './deps-measure.ts';
import { SUBJECTS, type Subject } from './deps-subjects.ts';

export interface DepsOptions {
  readonly runs: number;
  /** Reuse (or keep) the installs here; without it a temporary directory is used and removed. */
  readonly dir?: string;
}

interface RowResult {
  readonly subject: Subject;
  readonly ours: LoadSample & { bytes: number };
  readonly library: LoadSample & { bytes: number };
  /** The library imported from node_modules, not bundled: how the agent loads client-node when it must. */
  readonly raw: LoadSample;
  readonly installed: { bytes: number; packages: number };
}

/** The library's entry run straight from `dir` (shared packages by their resolved path in the repo). */
function rawEntry(s: Subject, dir: string): string {
  const fromRepo = createRequire(join(import.meta.dirname, 'run.ts'));
  const shared = s.shared.map((p) => fromRepo.resolve(p));
  const file = join(dir, 'library.raw.mjs');
  writeFileSync(file, `${REQUIRE_BANNER}\n${entrySource(s.builtins, [...shared, ...s.library.imports])}`);
  return file;
}

const kib = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
const mibOf = (k: number) => `${(k / 1024).toFixed(1)} MiB`;

async function measureRow(s: Subject, dir: string, runs: number): Promise<RowResult> {
  if (!existsSync(join(dir, 'node_modules'))) npmInstall(dir, s.library.install);
  const base = await bundleEntry(dir, 'baseline', entrySource(s.builtins, s.shared));
  const ourSource = entrySource(s.builtins, [...s.shared, ...s.ours]);
  const ours = await bundleEntry(dir, 'ours', ourSource, s.oursExternal);
  const lib = await bundleEntry(dir, 'library', entrySource(s.builtins, [...s.shared, ...s.library.imports]));
  const [b = [], o = [], l = [], r = []] = sampleAll(
    [base.file, ours.file, lib.file, rawEntry(s, dir)],
    runs,
  );
  const size = (x: Built) => x.bytes - base.bytes;
  return {
    subject: s,
    ours: { ...added(o, b), bytes: size(ours) },
    library: { ...added(l, b), bytes: size(lib) },
    raw: added(r, b),
    installed: installedSize(dir),
  };
}

function printRow(r: RowResult): void {
  const line = (who: string, x: LoadSample, extra: string) =>
    console.log(
      `  ${who.padEnd(18)} ${mibOf(x.rssKiB).padStart(9)} RSS ${x.cpuMs.toFixed(0).padStart(5)} ms CPU ${x.ms.toFixed(0).padStart(5)} ms wall${extra}`,
    );
  const { label } = r.subject.library;
  console.log(
    `${r.subject.row}: ${label}, installed ${kib(r.installed.bytes)} in ${r.installed.packages} packages`,
  );
  line('ours, bundled', r.ours, `  ${kib(r.ours.bytes).padStart(9)} minified`);
  line('library, bundled', r.library, `  ${kib(r.library.bytes).padStart(9)} minified`);
  line('library, installed', r.raw, '  (imported from node_modules)');
}

export async function depsBench(opts: DepsOptions): Promise<void> {
  const root = opts.dir ?? mkdtempSync(join(tmpdir(), 'npd-deps-'));
  try {
    console.log(`## Hand-written protocol clients against the libraries (medians of ${opts.runs} runs each)`);
    console.log(
      '  added to a baseline bundle that loads the same Node built-ins (and prom-client where ours uses it);',
    );
    console.log('  RSS after a full GC, CPU and wall time from process start to the end of loading');
    const results: RowResult[] = [];
    for (const [i, s] of SUBJECTS.entries()) {
      const r = await measureRow(s, join(root, String(i)), opts.runs);
      printRow(r);
      results.push(r);
    }
    console.log('## Wire format against protobufjs (as @grpc/proto-loader installs it)');
    const protoLoader = join(root, '1', 'node_modules', '@grpc', 'proto-loader');
    for (const ok of correctness(protoLoader)) console.log(`  ok  ${ok}`);
  } finally {
    if (opts.dir === undefined) rmSync(root, { recursive: true, force: true });
  }
}
