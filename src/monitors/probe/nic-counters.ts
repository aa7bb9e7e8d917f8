import { z } from 'zod';
import { goDuration } from '../../config/schema-kit.ts';
import { formatGoDuration } from '../../gocompat/duration.ts';
import { readStatistic } from '../../host/procfs/netdev.ts';
import type { ProbeResult, ProbeRule } from '../../rules/probe-engine.ts';
import { IncreaseWindows } from './increase-window.ts';
import { byThreshold, mainRule, type ProbeKind, unknown } from './kind.ts';
import { chosenInterfaces, ifname, NO_DEVICES } from './net-options.ts';

const options = z.strictObject({
  /** Interfaces to watch; empty: every interface backed by a device. */
  interfaces: z.array(ifname).default([]),
  /**
   * Files of /sys/class/net/<if>/statistics/ (struct rtnl_link_stats64). ENA's
   * *_allowance_exceeded counters are ethtool -S strings only, not in sysfs.
   */
  counters: z
    .array(z.string().regex(/^[a-z0-9_]+$/, 'must be a file name of statistics/, such as rx_dropped'))
    .min(1)
    .default(['rx_dropped', 'tx_dropped']),
  /** A rise by more than this many within `window` is a problem. */
  increase: z.number().int().min(0).default(100),
  window: goDuration.default(5 * 60_000),
});

export type NicCountersOptions = z.infer<typeof options>;

/**
 * NIC drop and error counters rising: a rate, not a total, since every counter is cumulative since
 * the device appeared. The first run is the baseline.
 */
export const nicCountersProbe: ProbeKind<NicCountersOptions> = {
  kind: 'nic-counters',
  options,
  defaults: () => ({
    condition: 'NetworkInterfacePacketLoss',
    reason: 'NICCountersRising',
    healthyReason: 'NICCountersSteady',
    healthyMessage: 'NIC drop and error counters are not rising',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const o = spec.options;
    const windows = new IncreaseWindows(o.window);
    return {
      rules: [rule],
      async check(ctx) {
        const names = await chosenInterfaces(env.paths.sys, o.interfaces, ctx.signal);
        if (names.length === 0) return [unknown(rule, NO_DEVICES)];
        const now = env.clock.now();
        const seen: Sample[] = [];
        for (const name of names) {
          for (const counter of o.counters) {
            const value = await readStatistic(env.paths.sys, name, counter, ctx.signal);
            const id = `${name} ${counter}`;
            seen.push({ id, rise: value === undefined ? undefined : windows.observe(id, now, value) });
          }
        }
        return [verdict(rule, o, seen)];
      },
    };
  },
};

interface Sample {
  readonly id: string;
  /** Undefined when the counter file is absent. */
  readonly rise: bigint | undefined;
}

function verdict(rule: ProbeRule, o: NicCountersOptions, seen: readonly Sample[]): ProbeResult {
  const window = formatGoDuration(o.window);
  const absent = seen.filter((s) => s.rise === undefined).map((s) => s.id);
  if (absent.length === seen.length)
    return unknown(rule, `no counter found: ${absent.join(', ')} (interface missing or driver without them)`);
  const rising = seen
    .filter((s) => s.rise !== undefined && s.rise > BigInt(o.increase))
    .map((s) => `${s.id} +${s.rise} in ${window}`);
  const skipped = absent.length > 0 ? `; not found: ${absent.join(', ')}` : '';
  if (rising.length === 0)
    return byThreshold(rule, false, `no counter rose by more than ${o.increase} in ${window}${skipped}`);
  const hint =
    'the NIC or its queue is dropping packets: check `ip -s link show`, ring sizes, the instance bandwidth/PPS allowance (ethtool -S) and the kernel log';
  return byThreshold(rule, true, `${rising.join('; ')} (limit ${o.increase}); ${hint}${skipped}`);
}
