import { z } from 'zod';
import { conditionType, goDuration } from '../../config/schema-kit.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { isUp, type LinkState, readLink } from '../../host/procfs/netdev.ts';
import type { ConditionConfig } from '../../rules/config.ts';
import type { ProbeResult, ProbeRule } from '../../rules/probe-engine.ts';
import { IncreaseWindows } from './increase-window.ts';
import { byThreshold, mainRule, type ProbeKind, unknown } from './kind.ts';
import { chosenInterfaces, ifname, NO_DEVICES } from './net-options.ts';

const flapping = z.strictObject({
  /** Carrier changes (down and up count one each) within `window` that make a flap problem. */
  changes: z.number().int().min(1).default(4),
  window: goDuration.default(10 * 60_000),
  condition: conditionType.default('NetworkInterfaceFlapping'),
  reason: z.string().min(1).default('InterfaceFlapping'),
});

const options = z.strictObject({
  /** Interfaces that must be up; empty: every interface backed by a device (not lo, veth, bridges). */
  interfaces: z.array(ifname).default([]),
  flapping: flapping.prefault({}),
});

export type InterfacesOptions = z.infer<typeof options>;

function flapDefaults(o: InterfacesOptions): ConditionConfig {
  return {
    type: o.flapping.condition,
    reason: 'NoInterfaceFlapping',
    message: 'network interfaces have a stable carrier',
  };
}

/**
 * Interfaces expected up are up (operstate, /sys/class/net/<if>/operstate) and not flapping
 * (carrier_changes rising within a window). Both belong to the agent's network namespace: hostNetwork.
 */
export const interfacesProbe: ProbeKind<InterfacesOptions> = {
  kind: 'interfaces',
  options,
  defaults: () => ({
    condition: 'NetworkInterfaceDown',
    reason: 'InterfaceDown',
    healthyReason: 'InterfacesUp',
    healthyMessage: 'every expected network interface is up',
  }),
  extraConditions: (o) => [flapDefaults(o)],
  create(spec, env) {
    const o = spec.options;
    const down = mainRule(spec);
    const flap: ProbeRule = { type: 'permanent', condition: o.flapping.condition, reason: o.flapping.reason };
    const windows = new IncreaseWindows(o.flapping.window);
    return {
      rules: [down, flap],
      async check(ctx) {
        const names = await chosenInterfaces(env.paths.sys, o.interfaces, ctx.signal);
        if (names.length === 0) return [unknown(down, NO_DEVICES), unknown(flap, NO_DEVICES)];
        const links = new Map<string, LinkState | undefined>();
        for (const name of names) links.set(name, await readLink(env.paths.sys, name, ctx.signal));
        const now = env.clock.now();
        const changes = [...links].map(([name, link]): [string, bigint] => {
          if (link?.carrierChanges === undefined) return [name, 0n];
          return [name, windows.observe(name, now, link.carrierChanges)];
        });
        return [downResult(down, links), flapResult(flap, o, changes)];
      },
    };
  },
};

function downResult(rule: ProbeRule, links: ReadonlyMap<string, LinkState | undefined>): ProbeResult {
  const bad: string[] = [];
  for (const [name, link] of links) {
    if (!link) bad.push(`${name} does not exist`);
    else if (!isUp(link))
      bad.push(`${name} is ${link.operstate}${link.carrier === false ? ' (no carrier)' : ''}`);
  }
  if (bad.length === 0) return byThreshold(rule, false, `up: ${[...links.keys()].join(', ')}`);
  const hint =
    'check `ip link show`, the cable, ENI/NIC attachment or the network configuration that should bring it up';
  return byThreshold(rule, true, `${bad.join('; ')}; ${hint}`);
}

function flapResult(
  rule: ProbeRule,
  o: InterfacesOptions,
  changes: readonly [string, bigint][],
): ProbeResult {
  const over = changes.filter(([, n]) => n >= BigInt(o.flapping.changes));
  const window = formatGoDuration(o.flapping.window);
  if (over.length === 0)
    return byThreshold(
      rule,
      false,
      `carrier changes in ${window}: ${changes.map(([i, n]) => `${i} ${n}`).join(', ')}`,
    );
  const list = over.map(([i, n]) => `${i} changed carrier ${n} times in ${window}`).join('; ');
  return byThreshold(
    rule,
    true,
    `${list} (at least ${o.flapping.changes} is flapping); check the cable or switch port, the NIC driver (kernel log) and \`ip -s link show\``,
  );
}
