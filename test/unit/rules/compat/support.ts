/**
 * Shared by the NPD compatibility tests (npd-*.test.ts): where NPD's shipped configs and our rules/
 * live, how to load either, and a deterministic replay clock.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import type { ReplayLine } from '../../../../src/replay/parse-input.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
export const NPD_DIR = join(ROOT, 'test', 'fixtures', 'npd-config');
export const START = Date.UTC(2026, 0, 1);

function load(file: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file }], [systemLogConfigKind]);
  assert.ok(loaded, file);
  return loaded.config as LogMonitorConfig;
}
export const npd = (name: string) => load(join(NPD_DIR, name));
export const ours = (name: string) => load(join(ROOT, 'rules', name));

export function rawJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(NPD_DIR, name), 'utf8')) as Record<string, unknown>;
}

/** One line per second, so frequency windows and event order are deterministic. */
export function lines(messages: readonly string[]): ReplayLine[] {
  return messages.map((message, i) => ({ timestamp: START + i * 1000, message }));
}
