import { publishedConditions } from '../conditions/extra.ts';
import { SUBSYSTEM_DEFAULTS } from '../conditions/subsystem.ts';
import type { FlagSpec } from '../config/flag-parser.ts';
import type { TaintRule } from '../taints/spec.ts';
import { B, D, type FlagReader } from './flag-specs.ts';

/** The flags that choose which conditions reach the Node besides the configs' own. */
export interface ConditionOptions {
  /** --extra-conditions: also publish the shipped threshold and flapping conditions (src/conditions/extra.ts). */
  readonly extraConditions: boolean;
  /** --subsystem-conditions: also publish KernelReady, NetworkingReady, ... (docs/rules.md). */
  readonly subsystemConditions: boolean;
  readonly subsystemWindowMs: number;
  readonly subsystemHoldMs: number;
}

export const CONDITION_FLAGS: readonly FlagSpec[] = [
  B(
    'extra-conditions',
    'Also write the threshold and flapping conditions (FilesystemSpaceLow, ProcessIDsLow, NetworkLinkFlapping, ...) to the Node (docs/consumers.md)',
    false,
  ),
  B(
    'subsystem-conditions',
    'Also publish KernelReady, NetworkingReady, StorageReady, ContainerRuntimeReady, AcceleratedHardwareReady',
    false,
  ),
  D('subsystem-window', 'How long an event keeps its subsystem condition False', SUBSYSTEM_DEFAULTS.window),
  D(
    'subsystem-hold',
    'How long a False subsystem condition must be free of problems before it turns True',
    SUBSYSTEM_DEFAULTS.hold,
  ),
];

export function conditionOptions(f: FlagReader): ConditionOptions {
  const windowMs = f.dur('subsystem-window');
  if (windowMs <= 0) f.errors.push('--subsystem-window must be greater than 0');
  return {
    extraConditions: f.get('extra-conditions') === 'true',
    subsystemConditions: f.get('subsystem-conditions') === 'true',
    subsystemWindowMs: windowMs,
    subsystemHoldMs: f.dur('subsystem-hold'),
  };
}

/** A taint keyed on a condition the Node does not show could not be explained from `kubectl describe node`. */
export function checkTaintedConditions(
  rules: readonly TaintRule[],
  extraConditions: boolean,
  errors: string[],
): void {
  const published = publishedConditions(extraConditions);
  for (const rule of rules.filter((r) => !published(r.conditionType)))
    errors.push(
      `--taint-on-condition=${rule.conditionType}=...: ${rule.conditionType} is written to the Node only with --extra-conditions=true`,
    );
}
