/**
 * Shared by the LogRuleEngine tests (log-engine*.test.ts): one kmsg system-log config around the given
 * rules, a fixed start time and a line builder, so each test states only its rules and lines.
 */
import type { ConditionConfig, LogMonitorConfig, LogRuleConfig } from '../../../src/rules/config.ts';
import { LogRuleEngine } from '../../../src/rules/log-engine.ts';

export const T0 = Date.UTC(2026, 0, 1, 12);
export const DEADLOCK: ConditionConfig = {
  type: 'KernelDeadlock',
  reason: 'KernelHasNoDeadlock',
  message: 'kernel has no deadlock',
};

export function engine(
  rules: LogRuleConfig[],
  conditions: ConditionConfig[] = [DEADLOCK],
  bufferSize = 10,
): LogRuleEngine {
  return new LogRuleEngine(kmsgConfig(rules, conditions, bufferSize), T0);
}

/** A kmsg system-log config around the rules, as a config file would load. */
export function kmsgConfig(
  rules: LogRuleConfig[],
  conditions: ConditionConfig[],
  bufferSize: number,
): LogMonitorConfig {
  return {
    kind: 'system-log',
    file: 'k.json',
    plugin: 'kmsg',
    pluginConfig: {},
    logPath: '',
    lookbackMs: 0,
    delayMs: 0,
    skipList: [],
    bufferSize,
    source: 'kernel-monitor',
    metricsReporting: true,
    conditions,
    rules,
  };
}

export const line = (message: string, timestamp = T0 + 1000) => ({ timestamp, message });
