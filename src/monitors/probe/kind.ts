import type { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import type { HealthTag } from '../../core/types.ts';
import type { DnsLookup } from '../../host/protocols/dns.ts';
import type { HostPaths } from '../../host/paths.ts';
import type { ConditionConfig, RuleType } from '../../rules/config.ts';
import type { ProbeResult, ProbeRule } from '../../rules/probe-engine.ts';

/** What one probe entry of a probe-monitor config says, after validation. */
export interface ProbeSpec<O = unknown> extends HealthTag {
  readonly kind: string;
  /** Unique within its config file; the `probe` label of the probe metrics. */
  readonly name: string;
  readonly type: RuleType;
  readonly condition?: string | undefined;
  readonly reason: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** NonOK results count only after this many in a row (a flapping endpoint is not a problem yet). */
  readonly failureThreshold: number;
  readonly options: O;
}

/** Per-run inputs. The signal fires on timeout or stop; probes pass it to every socket they open. */
export interface ProbeContext {
  readonly signal: AbortSignal;
}

/** Long-lived services a probe may use; everything on the host is reached below `paths`. */
export interface ProbeEnv {
  readonly paths: HostPaths;
  readonly clock: Clock;
  /** The agent's environment (KUBERNETES_SERVICE_HOST/PORT); none when absent. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
  /** DNS lookups through given servers; node:dns when absent. */
  readonly lookup?: DnsLookup;
}

/** One configured probe, ready to run. It may keep state (restart history) between runs. */
export interface ProbeCheck {
  /** Every rule this probe can report on, for problem-metric initialisation and Unknown results. */
  readonly rules: readonly ProbeRule[];
  check(ctx: ProbeContext): Promise<ProbeResult[]>;
}

/** The problem a kind reports when a config names no condition, NPD style. */
export interface ProbeDefaults {
  readonly condition: string;
  readonly reason: string;
  readonly healthyReason: string;
  readonly healthyMessage: string;
}

/** A probe kind: its options schema (without the common keys) and how to build a check. */
export interface ProbeKind<O = unknown> {
  readonly kind: string;
  readonly options: z.ZodType<O>;
  defaults(options: O): ProbeDefaults;
  /** Conditions a probe reports besides its own (systemd's restart rule); each with its defaults. */
  extraConditions?(options: O): readonly ConditionConfig[];
  defaultName?(options: O): string;
  create(spec: ProbeSpec<O>, env: ProbeEnv): ProbeCheck;
}

/** The main rule of a probe, as the engine sees it. */
export function mainRule(spec: ProbeSpec): ProbeRule {
  return { type: spec.type, condition: spec.condition, reason: spec.reason };
}

export function ok(rule: ProbeRule, message: string): ProbeResult {
  return { rule, status: 'OK', message };
}

export function nonOk(rule: ProbeRule, message: string): ProbeResult {
  return { rule, status: 'NonOK', message };
}

export function unknown(rule: ProbeRule, message: string): ProbeResult {
  return { rule, status: 'Unknown', message };
}

/** `OK`/`NonOK` by a threshold, with one message for both. */
export function byThreshold(rule: ProbeRule, problem: boolean, message: string): ProbeResult {
  return problem ? nonOk(rule, message) : ok(rule, message);
}
