import type { Registry } from 'prom-client';
import type { StartupPlan } from '../conditions/ownership.ts';
import type { Logger } from '../core/logger.ts';
import { counter } from '../core/metrics.ts';

/**
 * Counts and logs the conditions that the Node still showed True from an earlier boot and that the
 * agent does not resume (conditions/ownership.ts): the reboot ended them, so they are published at
 * their defaults until this boot's log or probes find the problem again.
 */
export function endedAtBoot(plan: StartupPlan, deps: { registry: Registry; logger: Logger }): void {
  const ended = counter(deps.registry, {
    name: 'npd_conditions_ended_at_boot_total',
    help: 'Conditions True on the Node from an earlier boot (another boot ID) that the agent did not resume.',
  });
  if (plan.endedAtBoot.length === 0) return;
  ended.inc(plan.endedAtBoot.length);
  deps.logger.info(
    { conditions: plan.endedAtBoot.map((c) => `${c.type}=${c.reason}`) },
    'the node rebooted since these conditions were set; not resuming them',
  );
}
