import type { StatsFs } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after } from 'node:test';
import type { Registry } from 'prom-client';
import { FakeClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import { type HostPaths, hostPaths } from '../../../../src/host/paths.ts';
import { SystemStatsMonitor } from '../../../../src/monitors/system-stats/monitor.ts';
import { type SystemStatsConfig, validateSystemStats } from '../../../../src/monitors/system-stats/schema.ts';

export const T0 = Date.UTC(2026, 0, 1);
export const FIXTURES = join(import.meta.dirname, '../../../fixtures/system-stats');

/** A fake host root, removed after the test file; files are given relative to it. */
export async function fakeHost(files: Readonly<Record<string, string>>): Promise<HostPaths> {
  const root = await mkdtemp(join(tmpdir(), 'npd-stats-'));
  after(() => rm(root, { recursive: true, force: true }));
  await writeFiles(root, files);
  return hostPaths(root);
}

export async function writeFiles(root: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** Validates a config (throws with every issue when it is invalid). */
export function statsConfig(
  raw: Record<string, unknown>,
  file = '/etc/npd/system-stats.json',
): SystemStatsConfig {
  const { config, issues } = validateSystemStats(raw, file);
  if (!config) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
  return config;
}

/** metricsConfigs enabling each ID under its own name, as NPD's shipped files do. */
export function enable(...ids: string[]): { metricsConfigs: Record<string, { displayName: string }> } {
  return { metricsConfigs: Object.fromEntries(ids.map((id) => [id, { displayName: id }])) };
}

/** A statfs(2) result of 4 KiB blocks. */
export function fakeStatfs(blocks: number, bfree: number, bavail: number): StatsFs {
  return { type: 0xef53, bsize: 4096, blocks, bfree, bavail, files: 1000, ffree: 500 } as StatsFs;
}

export interface Harness {
  readonly monitor: SystemStatsMonitor;
  readonly registry: Registry;
  readonly clock: FakeClock;
  readonly paths: HostPaths;
  /** Starts the monitor and waits for its first collection. */
  start(): Promise<void>;
  /** Moves the fake clock on and waits for the collection it triggered. */
  advance(ms: number): Promise<void>;
  /** The Prometheus text lines of one metric family, without # lines. */
  series(name: string): Promise<string[]>;
}

export function harness(
  config: SystemStatsConfig,
  paths: HostPaths,
  statfs = async (_path: string) => fakeStatfs(1000, 400, 300),
): Harness {
  const registry = createRegistry();
  const clock = new FakeClock(T0);
  const monitor = new SystemStatsMonitor(config, { clock, logger: silentLogger(), registry, paths, statfs });
  after(() => monitor.stop());
  return {
    monitor,
    registry,
    clock,
    paths,
    async start() {
      await monitor.start(() => {});
      await monitor.idle();
    },
    async advance(ms) {
      clock.advance(ms);
      await monitor.idle();
    },
    async series(name) {
      const text = await registry.metrics();
      return text.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    },
  };
}

/** The value of the one series of `name` whose label text contains every fragment. */
export async function seriesValue(h: Harness, name: string, ...fragments: string[]): Promise<number> {
  const lines = (await h.series(name)).filter((l) => fragments.every((f) => l.includes(f)));
  if (lines.length !== 1)
    throw new Error(`${name} ${fragments.join(',')}: ${lines.length} series\n${lines.join('\n')}`);
  return Number(lines[0]?.split(' ').at(-1));
}
