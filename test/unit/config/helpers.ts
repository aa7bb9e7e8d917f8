import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError, type ConfigIssue, formatIssue } from '../../../src/config/errors.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { customPluginConfigKind } from '../../../src/monitors/custom-plugin/schema.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';

export const KINDS = [systemLogConfigKind, customPluginConfigKind];
export const NPD_DIR = join(import.meta.dirname, '../../fixtures/npd-config');

/** Loads in-memory files; returns the ConfigError's issues, or fails when loading succeeds. */
export function loadErrors(files: Record<string, string | undefined>, kind?: string): ConfigIssue[] {
  try {
    loadConfigs(
      Object.keys(files).map((file) => (kind ? { file, kind } : { file })),
      KINDS,
      (f) => {
        const text = files[f];
        if (text === undefined) throw new Error(`ENOENT: ${f}`);
        return text;
      },
    );
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.message, err.issues.map(formatIssue).join('\n'));
    return [...err.issues];
  }
  assert.fail('expected loading to fail');
}

export function loadOne(file: string, text: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file, kind: 'system-log-monitor' }], KINDS, () => text);
  assert.ok(loaded);
  assert.equal(loaded.kind, 'system-log-monitor');
  return loaded.config as LogMonitorConfig;
}

export function assertDeepFrozen(value: unknown, where = 'config'): void {
  if (value === null || typeof value !== 'object') return;
  assert.ok(Object.isFrozen(value), `${where} is not frozen`);
  for (const [k, v] of Object.entries(value)) assertDeepFrozen(v, `${where}.${k}`);
}
