import { join } from 'node:path';
import { z } from 'zod';
import { conditionType, goDuration } from '../../config/schema-kit.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { readUnit, type UnitState, unitTitle } from '../../host/protocols/dbus/systemd-unit.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import type { ProbeResult, ProbeRule } from '../../rules/probe-engine.ts';
import {
  byThreshold,
  mainRule,
  nonOk,
  type ProbeCheck,
  type ProbeEnv,
  type ProbeKind,
  type ProbeSpec,
} from './kind.ts';
import { RestartWindow } from './restart-window.ts';

const restarts = z.strictObject({
  /** NPD's systemd-monitor-counter: 5 restarts in 20 minutes. */
  count: z.number().int().min(1).default(5),
  window: goDuration.default(20 * 60_000),
  type: z.enum(['temporary', 'permanent']).default('permanent'),
  condition: conditionType.optional(),
  reason: z.string().min(1).optional(),
});

const options = z.strictObject({
  unit: z.string().regex(/^[^/\s]+\.[a-z]+$/, 'must be a unit name such as kubelet.service'),
  /** The system bus socket (or systemd's private /run/systemd/private), below --host-root. */
  socket: z.string().startsWith('/').default('/run/dbus/system_bus_socket'),
  /** ActiveState values that are a problem; "activating" (auto-restart) is left to the restart rule. */
  unhealthyStates: z.array(z.string().min(1)).default(['failed', 'inactive']),
  restarts: restarts.optional(),
});

export type SystemdOptions = z.infer<typeof options>;

function restartDefaults(o: SystemdOptions): ConditionConfig {
  const title = unitTitle(o.unit);
  return {
    type: o.restarts?.condition ?? `Frequent${title}Restart`,
    reason: `NoFrequent${title}Restart`,
    message: `${o.unit.replace(/\.service$/, '')} is functioning properly`,
  };
}

function restartRule(o: SystemdOptions): ProbeRule | undefined {
  const r = o.restarts;
  if (!r) return undefined;
  const title = unitTitle(o.unit);
  return {
    type: r.type,
    condition: r.type === 'permanent' ? restartDefaults(o).type : undefined,
    reason: r.reason ?? `Frequent${title}Restart`,
  };
}

/**
 * A systemd unit's state and restart rate over D-Bus (no systemctl or journal in the image):
 * ActiveState for "down", NRestarts and InactiveExitTimestamp deltas for restart loops.
 */
export const systemdProbe: ProbeKind<SystemdOptions> = {
  kind: 'systemd',
  options,
  defaults: (o) => {
    const title = unitTitle(o.unit);
    return {
      condition: `${title}Unhealthy`,
      reason: `${title}NotActive`,
      healthyReason: `${title}IsHealthy`,
      healthyMessage: `${o.unit} is active`,
    };
  },
  extraConditions: (o) => (o.restarts?.type === 'permanent' ? [restartDefaults(o)] : []),
  defaultName: (o) => `systemd:${o.unit}`,
  create: (spec, env) => createSystemdCheck(spec, env),
};

export function createSystemdCheck(
  spec: ProbeSpec<SystemdOptions>,
  env: ProbeEnv,
  uid: number = process.getuid?.() ?? 0,
): ProbeCheck {
  const o = spec.options;
  const rule = mainRule(spec);
  const restart = restartRule(o);
  const window = o.restarts ? new RestartWindow(o.restarts.window) : undefined;
  const socket = join(env.paths.root, o.socket);
  return {
    rules: restart ? [rule, restart] : [rule],
    async check(ctx) {
      const state = await readUnit(socket, uid, o.unit, ctx.signal);
      const results: ProbeResult[] = [activeResult(rule, o, state)];
      if (restart && window && o.restarts) {
        const seen = window.observe(env.clock.now(), state.nRestarts, state.activatedUs);
        const message = `${o.unit} restarted ${seen} times in ${formatGoDuration(o.restarts.window)}`;
        results.push(byThreshold(restart, seen >= o.restarts.count, message));
      }
      return results;
    },
  };
}

function activeResult(rule: ProbeRule, o: SystemdOptions, s: UnitState): ProbeResult {
  if (s.loadState === 'not-found') return nonOk(rule, `${o.unit} is not installed`);
  const since = s.activatedUs > 0n ? ` since ${new Date(Number(s.activatedUs / 1000n)).toISOString()}` : '';
  const state = `${o.unit} is ${s.activeState} (${s.subState})`;
  const bad = o.unhealthyStates.includes(s.activeState);
  return byThreshold(rule, bad, bad ? state : `${state}${since}`);
}
