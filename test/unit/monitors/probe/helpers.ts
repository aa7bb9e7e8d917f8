import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { type HostPaths, hostPaths } from '../../../../src/host/paths.ts';
import type { ProbeCheck, ProbeEnv, ProbeSpec } from '../../../../src/monitors/probe/kind.ts';
import { probeKinds } from '../../../../src/monitors/probe/kinds.ts';
import { type ProbeMonitorConfig, validateProbeMonitor } from '../../../../src/monitors/probe/schema.ts';
import type { ProbeResult } from '../../../../src/rules/probe-engine.ts';

export const T0 = Date.UTC(2026, 0, 1);

/** A temporary directory removed after the test file; returns its path. */
export async function tempDir(prefix = 'npd-probe-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A fake host root whose files are given relative to it, e.g. {'proc/sys/fs/file-nr': '1 0 10\n'}. */
export async function fakeHost(files: Readonly<Record<string, string>>): Promise<HostPaths> {
  const root = await tempDir('npd-host-');
  await writeFiles(root, files);
  return hostPaths(root);
}

export async function writeFiles(root: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** Validates a one-file config (throws with every issue if it is invalid). */
export function config(raw: Record<string, unknown>): ProbeMonitorConfig {
  const { config: c, issues } = validateProbeMonitor({ plugin: 'probe', ...raw }, 'probes.yaml');
  if (!c) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
  return c;
}

/** The spec of a single probe entry, through the real schema so defaults apply. */
export function spec<O = unknown>(entry: Record<string, unknown>): ProbeSpec<O> {
  const probe = config({ probes: [entry] }).probes[0];
  if (!probe) throw new Error('no probe');
  return probe as ProbeSpec<O>;
}

export function env(paths: HostPaths, clock = new FakeClock(T0)): ProbeEnv {
  return { paths, clock };
}

/** Builds one probe of a built-in kind from a config entry. */
export function probe(entry: Record<string, unknown>, e: ProbeEnv): ProbeCheck {
  const s = spec(entry);
  const kind = probeKinds().find((k) => k.kind === s.kind);
  if (!kind) throw new Error(`no kind ${s.kind}`);
  return kind.create(s, e);
}

export function run(check: ProbeCheck, signal = new AbortController().signal): Promise<ProbeResult[]> {
  return check.check({ signal });
}

/** The single result of a one-rule probe. */
export async function runOne(check: ProbeCheck): Promise<ProbeResult> {
  const results = await run(check);
  if (results.length !== 1 || !results[0]) throw new Error(`expected one result, got ${results.length}`);
  return results[0];
}
