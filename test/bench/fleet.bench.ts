/**
 * `npm run bench -- fleet [--nodes=1000 --workers=2 ...]`: issue 41's fleet against the real
 * kube-apiserver + etcd. `nodes` identities with the DaemonSet's real identity, each the agent's own
 * exporter stack (test/fleet/), in `workers` processes, beside a kubelet-like neighbour renewing a Lease
 * per node every 10 s; then the scenarios of fleet-scenarios.ts, each measured from the audit log and
 * the API server's /metrics, printed as a table (BENCHMARKS.md keeps it) with the extrapolation.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from '../e2e/harness/controlplane.ts';
import { createIdentities, type FleetIdentity, fleetStaticUsers } from '../fleet/identities.ts';
import { Neighbour } from '../fleet/neighbour.ts';
import { Fleet } from '../fleet/workers.ts';
import { extrapolate } from './fleet-extrapolate.ts';
import { details, tableRow } from './fleet-report.ts';
import { correlated, outage, rollout, steady, throttle } from './fleet-scenarios.ts';
import type { FleetBenchOptions, FleetContext, Window } from './fleet-window.ts';
import { cpuSeconds, loadNote, statusKiB } from './proc.ts';

async function flowSchemaOf(ctx: Pick<FleetContext, 'cp'>, id: FleetIdentity): Promise<string> {
  const r = await ctx.cp.request('GET', `/api/v1/nodes/${id.name}`, { token: id.token });
  const uid = r.headers?.['x-kubernetes-pf-flowschema-uid'];
  const list = (await ctx.cp.request('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas')).json as {
    items: { metadata: { name: string; uid: string } }[];
  };
  return list.items.find((i) => i.metadata.uid === uid)?.metadata.name ?? String(uid);
}

function harnessNote(fleet: Fleet): string {
  const pids = fleet.pids();
  const cpu = pids.reduce((s, p) => s + cpuSeconds(p), 0);
  const rss = pids.reduce((s, p) => s + statusKiB(p, 'VmRSS'), 0);
  return `the ${pids.length} agent worker processes used ${cpu.toFixed(0)} s CPU in all, ${(rss / 1024).toFixed(0)} MiB RSS at the end`;
}

/** The rollout starts the agents, so it always runs; --steady=0, --outage=0 or --throttle=0 leave one out. */
function chosen(opts: FleetBenchOptions): ((ctx: FleetContext) => Promise<Window>)[] {
  return [
    rollout,
    ...(opts.steadySeconds > 0 ? [steady] : []),
    correlated,
    ...(opts.outageSeconds > 0 ? [outage] : []),
    ...(opts.throttleSeconds > 0 ? [throttle] : []),
  ];
}

async function scenarios(ctx: FleetContext): Promise<Window[]> {
  const out: Window[] = [];
  for (const run of chosen(ctx.opts)) {
    const w = await run(ctx);
    out.push(w);
    console.log(`${w.label}: done (${loadNote()})`);
  }
  return out;
}

function report(ctx: FleetContext, windows: readonly Window[], agentsFlow: string, setupS: number): void {
  const { opts } = ctx;
  console.log(
    `\n## Fleet: ${opts.nodes} agents in ${opts.workers} processes, heartbeat ${opts.heartbeatSeconds} s; agents' FlowSchema ${agentsFlow}; identities made in ${setupS.toFixed(0)} s`,
  );
  console.log(
    '| scenario | s | req/node | writes/node | peak QPS | mean QPS | apiserver CPU s (% core) | agents p50/p99 ms | 429s | neighbour p50/p99 ms (server p99 s) | recovery s | lost events (given up, dropped) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const w of windows) console.log(tableRow(w, opts.nodes));
  for (const w of windows) details(w);
  extrapolate(windows, opts.nodes, opts.heartbeatSeconds);
  console.log(`  (${harnessNote(ctx.fleet)}; agent warnings in ${ctx.fleet.logFiles.join(', ')})`);
}

export async function fleetBench(opts: FleetBenchOptions): Promise<void> {
  const cp = await startControlPlane({ users: fleetStaticUsers(opts.nodes) });
  const dir = mkdtempSync(join(tmpdir(), 'npd-bench-fleet-'));
  let fleet: Fleet | undefined;
  let neighbour: Neighbour | undefined;
  try {
    const t0 = Date.now();
    const all = await createIdentities(cp, dir, opts.nodes + 1);
    const probe = all[opts.nodes] as FleetIdentity;
    const ids = all.slice(0, opts.nodes);
    const setupS = (Date.now() - t0) / 1000;
    const agentsFlow = await flowSchemaOf({ cp }, probe);
    neighbour = await Neighbour.start(cp, opts.nodes);
    fleet = await Fleet.create({
      identities: ids,
      workers: opts.workers,
      heartbeatSeconds: opts.heartbeatSeconds,
      logPrefix: join(dir, 'agents'),
    });
    const ctx: FleetContext = { cp, fleet, neighbour, names: ids.map((i) => i.name), probe, dir, opts };
    report(ctx, await scenarios(ctx), agentsFlow, setupS);
  } finally {
    await fleet?.stop().catch((e: unknown) => console.log(`fleet stop: ${String(e)}`));
    await neighbour?.stop();
    await cp.stop();
  }
}
