/**
 * Issue 41's scenarios on a running fleet, in order: the rollout, steady state, a correlated failure,
 * an API server outage and APF throttling; the neighbour's Lease renewals are measured in each (6).
 * Each returns its measured window; the conditions each sets are checked on the API server for every node.
 */
import { settleEvents } from '../fleet/accounting.ts';
import { converge } from '../fleet/converge.ts';
import type { WireCondition } from '../fleet/protocol.ts';
import { throttleAgents } from '../fleet/throttle.ts';
import { fmt, sleep } from '../fleet/util.ts';
import { type FleetContext, measure, type Window } from './fleet-window.ts';

const HEALTHY = { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock' };
const HUNG = { type: 'KernelDeadlock', status: 'True', reason: 'DockerHung' };
const READONLY: WireCondition = {
  type: 'ReadonlyFilesystem',
  status: 'True',
  reason: 'FilesystemIsReadOnly',
  message: 'Remounting filesystem read-only',
};
const WRITABLE: WireCondition = {
  type: 'ReadonlyFilesystem',
  status: 'False',
  reason: 'FilesystemIsNotReadOnly',
  message: 'Filesystem is not read-only',
};
const REPEAT_MS = 10_000;
const FAILURE_MS = 60_000;
/** How long after a change the harness waits for every node before it calls the node lost. */
const settleMs = (ctx: FleetContext) => ctx.opts.heartbeatSeconds * 1000 + 60_000;

function wrongNote(wrong: readonly string[], what: string): string[] {
  return wrong.length === 0
    ? []
    : [`${wrong.length} nodes never showed ${what}: ${wrong.slice(0, 5).join(', ')}`];
}

export function rollout(ctx: FleetContext): Promise<Window> {
  const ms = ctx.opts.rolloutSeconds * 1000;
  return measure(ctx, `1 rollout (every agent starts within ${ctx.opts.rolloutSeconds} s)`, async (t0) => {
    await ctx.fleet.start(ms);
    const c = await converge(ctx.cp, ctx.names, HEALTHY, t0, ms + settleMs(ctx));
    await sleep(Math.max(0, t0 + ms + 30_000 - Date.now()));
    return { recoverySeconds: c.seconds, notes: wrongNote(c.wrong, 'their conditions') };
  });
}

export function steady(ctx: FleetContext): Promise<Window> {
  const { heartbeatSeconds: hb, steadySeconds: s } = ctx.opts;
  return measure(ctx, `2 steady state (heartbeat ${hb} s, ${s} s)`, async () => {
    await sleep(s * 1000);
    return undefined;
  });
}

export function correlated(ctx: FleetContext): Promise<Window> {
  const label = '3 correlated failure (same hung task on every node at once, repeated every 10 s for 60 s)';
  return measure(ctx, label, async (t0) => {
    await ctx.fleet.hung(true);
    const seen = converge(ctx.cp, ctx.names, HUNG, t0, FAILURE_MS + settleMs(ctx));
    for (let t = REPEAT_MS; t < FAILURE_MS; t += REPEAT_MS) {
      await sleep(t0 + t - Date.now());
      await ctx.fleet.hung(false);
    }
    const c = await seen;
    await sleep(Math.max(0, t0 + FAILURE_MS + 5000 - Date.now()));
    return { recoverySeconds: c.seconds, notes: wrongNote(c.wrong, 'KernelDeadlock=True') };
  });
}

/** The API server stopped for the outage; measured from its restart until every node is right again. */
export async function outage(ctx: FleetContext): Promise<Window> {
  const { cp, fleet, opts } = ctx;
  const before = await fleet.metrics();
  await cp.stopApiserver();
  const down = Date.now();
  await fleet.condition(READONLY);
  const recorded = await fleet.events('outage', 1);
  await sleep(opts.outageSeconds * 1000);
  const during = await ctx.neighbour.stats(down, Date.now());
  await cp.startApiserver();
  const label = `4 outage (API server stopped ${opts.outageSeconds} s; from its restart)`;
  return measure(ctx, label, async (t0) => {
    const c = await converge(cp, ctx.names, READONLY, t0, settleMs(ctx));
    await sleep(Math.max(0, t0 + 30_000 - Date.now()));
    const a = await settleEvents(cp, fleet, 'outage', recorded, before, 180_000);
    return {
      recoverySeconds: c.seconds,
      notes: [
        `during the outage: ${during.count} Lease renewals tried, codes ${JSON.stringify(during.codes)}`,
        `events recorded during the outage ${JSON.stringify(a)}`,
        ...wrongNote(c.wrong, 'the condition set during the outage'),
      ],
    };
  });
}

export function throttle(ctx: FleetContext): Promise<Window> {
  const { cp, fleet, opts } = ctx;
  const label = `5 throttled (zero-seat APF level for the agents, ${opts.throttleSeconds} s, then lifted)`;
  return measure(ctx, label, async () => {
    const before = await fleet.metrics();
    const th = await throttleAgents(cp, ctx.dir, ctx.probe.token, ctx.probe.name);
    let recorded = 0;
    try {
      await fleet.condition(WRITABLE);
      recorded = await fleet.events('throttle', 1);
      await sleep(opts.throttleSeconds * 1000);
    } finally {
      await th.lift();
    }
    const lifted = Date.now();
    const c = await converge(cp, ctx.names, WRITABLE, lifted, settleMs(ctx));
    const a = await settleEvents(cp, fleet, 'throttle', recorded, before, 180_000);
    return {
      recoverySeconds: c.seconds,
      notes: [
        `recovery counted from the lift; events recorded while throttled ${JSON.stringify(a)}`,
        ...wrongNote(
          c.wrong,
          `the change made while throttled (after ${fmt((Date.now() - lifted) / 1000)} s)`,
        ),
      ],
    };
  });
}
