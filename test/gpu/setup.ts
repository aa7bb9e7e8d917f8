/**
 * test:gpu's preparations: the kit (built from the checkout where node_modules is, else the one carried
 * along), the NVML config the run uses (the shipped one, or a copy naming another library), the two
 * monitors' sources, and the probe (probe.ts) run from the kit.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../support/agent-process.ts';
import type { PathSources } from './observe.ts';
import { KERNEL_RULES, KIT, NVML_CONFIG } from './paths.ts';
import type { ProbeReport } from './probe-report.ts';

/**
 * Rebuilds the kit where node_modules is (so it is the checked-out code); elsewhere (a GPU machine the
 * repository was copied to without node_modules) uses the kit that came along. Returns why there is none.
 */
export function ensureKit(build: boolean): string | undefined {
  const modules = join(REPO, 'node_modules');
  if (build && existsSync(join(modules, 'esbuild')) && existsSync(join(modules, 'tsx'))) {
    console.log('test:gpu: building the kit (agent bundle, probe, native addons) in .cache/gpu-kit');
    execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'kit.ts')], {
      cwd: REPO,
      stdio: 'inherit',
    });
  }
  for (const f of ['main.js', 'gpu-probe.mjs'])
    if (!existsSync(join(KIT, f)))
      return `${join(KIT, f)} is missing: run \`npm run test:gpu\` once where node_modules is installed and bring .cache/gpu-kit along`;
  return undefined;
}

/** The NVML config for this run: the shipped file, or a copy whose `library` is `library`. */
export function nvmlConfig(dir: string, library: string | undefined): string {
  if (library === undefined) return NVML_CONFIG;
  const text = readFileSync(NVML_CONFIG, 'utf8')
    .split('\n')
    .filter((l) => !/^library:/.test(l))
    .join('\n');
  const copy = join(dir, 'gpu-nvml.yaml');
  writeFileSync(
    copy,
    `${text.trimEnd()}\n# test:gpu: the library this run loads\nlibrary: ${JSON.stringify(library)}\n`,
  );
  return copy;
}

function sourceOf(file: string, fallback: string): string {
  return /^source:\s*['"]?([\w.-]+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? fallback;
}

/** The monitors' `source` labels: the kernel-log rules' and the NVML monitor's (schema default). */
export function pathSources(nvmlFile: string): PathSources {
  return { kernel: sourceOf(KERNEL_RULES, 'gpu-monitor'), nvml: sourceOf(nvmlFile, 'gpu-nvml-monitor') };
}

/** The probe's answer; a probe that crashed or hung is NVML failing, with its output as why. */
export function runProbe(
  nvmlFile: string,
  hostRoot: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): ProbeReport {
  const run = spawnSync(process.execPath, [join(KIT, 'gpu-probe.mjs'), nvmlFile, hostRoot], {
    cwd: REPO,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  const last = (run.stdout ?? '').trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as ProbeReport;
  } catch {
    const why = `${run.error?.message ?? `exit ${run.status ?? run.signal}`}: ${(run.stderr ?? '').trim().slice(-800)}`;
    return { state: 'failed', why: `the probe gave no answer (${why})` };
  }
}
