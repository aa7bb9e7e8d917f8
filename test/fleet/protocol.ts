/** The commands the fleet's worker processes take over IPC, and their answers. */
import type { FleetIdentity } from './identities.ts';

export interface WireCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

export type Command =
  | {
      readonly cmd: 'init';
      readonly identities: readonly FleetIdentity[];
      readonly heartbeatSeconds: number;
      readonly logFile: string;
    }
  /** Starts every identity's exporter at a uniformly random moment within `jitterMs` (a rollout). */
  | { readonly cmd: 'start'; readonly jitterMs: number }
  /** Every identity reports the condition now, as its monitor would. */
  | { readonly cmd: 'condition'; readonly condition: WireCondition }
  /** Every identity logs the same hung task now (scale-fleet.ts's hitKernelError). */
  | { readonly cmd: 'hung'; readonly first: boolean }
  /** Every identity records `count` Warning events with unique messages starting with `tag`. */
  | { readonly cmd: 'events'; readonly tag: string; readonly count: number }
  | { readonly cmd: 'metrics' }
  | { readonly cmd: 'stop'; readonly graceMs: number };

export interface Request {
  readonly id: number;
  readonly command: Command;
}

export type Reply =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** Counter and gauge values of the npd_ metrics, keyed `name{label="value",...}`, summed over the worker. */
export type MetricTotals = Record<string, number>;

export const EVENT_SOURCE = 'kernel-monitor';
export const FLEET_EVENT_REASON = 'FleetProbe';
