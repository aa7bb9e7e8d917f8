// Every monitor config the project ships: rules/*.yaml (the chart and deploy/base/rules copy them) and
// the DaemonSet's own deploy/base/config/*.yaml, loaded with every monitor kind the agent knows.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { monitorTypes } from '../../src/agent/registry.ts';
import { type LoadedConfig, loadConfigs } from '../../src/config/load.ts';

export const ROOT = join(import.meta.dirname, '../..');
export const SHIPPED_CONFIG_DIRS = ['rules', 'deploy/base/config'] as const;

/** Repository-relative paths of the shipped config files. */
export function shippedConfigFiles(): string[] {
  return SHIPPED_CONFIG_DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `${dir}/${f}`),
  );
}

/** One shipped file, loaded as the agent loads it. */
export function loadShipped(file: string): LoadedConfig[] {
  return loadConfigs(
    [{ file: join(ROOT, file) }],
    monitorTypes().map((t) => t.configKind),
  );
}
