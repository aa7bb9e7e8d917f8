import type { Registry } from 'prom-client';
import { ConditionChangeLog } from '../conditions/change-log.ts';
import { SubsystemHealth } from '../conditions/subsystem.ts';
import { SubsystemReporter } from '../conditions/subsystem-reporter.ts';
import { SubsystemTable } from '../conditions/subsystem-table.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { counter } from '../core/metrics.ts';
import type { Condition } from '../core/types.ts';
import type { Options } from './options.ts';

/** The opt-in subsystem conditions (--subsystem-conditions): a reporter and the types it owns. */
export interface Subsystems {
  readonly reporter: SubsystemReporter;
  types(): string[];
  configure(configs: readonly LoadedConfig[]): void;
}

export function createSubsystems(
  deps: {
    options: Options;
    configs: readonly LoadedConfig[];
    clock: Clock;
    logger: Logger;
    registry: Registry;
  },
  update: (c: Condition) => void,
): Subsystems | undefined {
  const { options, clock, logger } = deps;
  if (!options.subsystemConditions) return undefined;
  const evicted = counter(deps.registry, {
    name: 'npd_subsystem_events_evicted_total',
    help: 'Events forgotten by the subsystem conditions before their window ended (too many distinct reasons).',
  });
  const health = new SubsystemHealth({
    table: SubsystemTable.from(deps.configs),
    windowMs: options.subsystemWindowMs,
    holdMs: options.subsystemHoldMs,
    nodeName: options.nodeName,
    onEvicted: () => evicted.inc(),
  });
  const changes = new ConditionChangeLog((c) =>
    logger.info({ condition: c.type, status: c.status, reason: c.reason, message: c.message }, 'subsystem'),
  );
  const publish = (conditions: readonly Condition[]) => {
    for (const c of conditions) {
      changes.record(c);
      update(c);
    }
  };
  return {
    reporter: new SubsystemReporter({ health, clock, publish }),
    types: () => health.types(),
    configure: (configs) => health.configure(SubsystemTable.from(configs)),
  };
}
