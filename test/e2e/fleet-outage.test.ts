// A small fleet (issue 41's CI test; the figures live in `npm run bench -- fleet`): 50 node identities,
// each with the DaemonSet's real identity (a node-bound ServiceAccount token under the node-binding
// policy) and the agent's real exporter stack, in 2 worker processes, against the real API server. Only
// what cannot flake at this size is asserted: after an outage every condition converges, a throttled
// agent backs off (bounded requests per node, Retry-After honoured), and every event is either written
// or counted as lost.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { settleEvents } from '../fleet/accounting.ts';
import { agentRows, auditSize } from '../fleet/audit-rows.ts';
import { converge } from '../fleet/converge.ts';
import { createIdentities, type FleetIdentity, HOLD_USER } from '../fleet/identities.ts';
import { throttleAgents } from '../fleet/throttle.ts';
import { maxPerNode, retryAfterFigures } from '../fleet/window-stats.ts';
import { Fleet } from '../fleet/workers.ts';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import { workDir } from './support.ts';

const NODES = Number(process.env.NPD_FLEET_NODES ?? 50);
const READONLY = {
  type: 'ReadonlyFilesystem',
  reason: 'FilesystemIsReadOnly',
  message: 'Remounting filesystem read-only',
};
const WRITABLE = {
  type: 'ReadonlyFilesystem',
  reason: 'FilesystemIsNotReadOnly',
  message: 'Filesystem is not read-only',
};
let cp: ControlPlane;
let fleet: Fleet | undefined;
let names: string[];
let probe: FleetIdentity;
const dir = workDir();

before(
  async () => {
    cp = await startControlPlane({ users: [{ name: HOLD_USER }] });
    const all = await createIdentities(cp, dir, NODES + 1);
    // The last identity only probes the throttle; it runs no agent and is left out of the figures.
    probe = all[NODES] as FleetIdentity;
    const ids = all.slice(0, NODES);
    names = ids.map((i) => i.name);
    fleet = await Fleet.create({
      identities: ids,
      workers: 2,
      heartbeatSeconds: 300,
      logPrefix: join(dir, 'fleet'),
    });
    await fleet.start(5000);
    const up = await converge(
      cp,
      names,
      { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock' },
      Date.now(),
      60_000,
    );
    assert.deepEqual(up.wrong, [], 'every agent wrote its conditions at start');
  },
  { timeout: 10 * 60_000 },
);

after(async () => {
  await fleet?.stop();
  await cp?.stop();
});

test('after an API server outage every condition converges and every event is written or counted', {
  timeout: 240_000,
}, async (t) => {
  const fl = fleet as Fleet;
  await cp.stopApiserver();
  const before = await fl.metrics();
  assert.equal(await fl.condition({ ...READONLY, status: 'True' }), NODES);
  const recorded = await fl.events('outage', 1);
  await new Promise((r) => setTimeout(r, 20_000));
  await cp.startApiserver();
  const back = Date.now();
  const c = await converge(cp, names, { ...READONLY, status: 'True' }, back, 120_000);
  assert.deepEqual(c.wrong, [], `nodes without the outage's condition ${c.seconds}`);
  const a = await settleEvents(cp, fl, 'outage', recorded, before, 150_000);
  t.diagnostic(`converged ${c.seconds.toFixed(1)} s after the restart; events ${JSON.stringify(a)}`);
  assert.equal(a.unaccounted, 0, `events neither written nor counted: ${JSON.stringify(a)}`);
  // Control: the LIST finds what was written, so an event missing from it would show as unaccounted.
  assert.ok(a.written > 0 && a.written <= recorded, JSON.stringify(a));
});

test('a throttled fleet backs off: bounded requests per node, Retry-After honoured, convergence after', {
  timeout: 240_000,
}, async (t) => {
  const fl = fleet as Fleet;
  const from = auditSize(cp.auditLogPath);
  const throttle = await throttleAgents(cp, dir, probe.token, probe.name);
  const before = await fl.metrics();
  let recorded = 0;
  try {
    assert.equal(await fl.condition({ ...WRITABLE, status: 'False' }), NODES);
    recorded = await fl.events('throttle', 1);
    await new Promise((r) => setTimeout(r, 30_000));
  } finally {
    await throttle.lift();
  }
  const lifted = Date.now();
  const rows = agentRows(cp.auditLogPath, from).filter((r) => r.node !== probe.name);
  const ra = retryAfterFigures(rows);
  // Control: the fleet was throttled, so the pacing checks below saw rejections.
  assert.ok(ra.rejected >= NODES, `429s: ${ra.rejected}`);
  // The most a paced agent makes in 10 s: its event loop waits at least the 1 s Retry-After (10), its
  // status loop at least 10 s after a failed sync (2). A loop that does not wait makes hundreds.
  const busiest = maxPerNode(rows, 10_000);
  assert.ok(busiest.count <= 12, `${busiest.node}: ${busiest.count} requests within 10 s`);
  // APF's Retry-After is at least 1 s; 100 ms of slack for the audit timestamps.
  const early = ra.gapsMs.filter((g) => g < 900);
  assert.deepEqual(early, [], 'requests sooner than Retry-After after a 429');
  const c = await converge(cp, names, { ...WRITABLE, status: 'False' }, lifted, 120_000);
  assert.deepEqual(c.wrong, [], 'nodes without the change made while throttled');
  const a = await settleEvents(cp, fl, 'throttle', recorded, before, 150_000);
  t.diagnostic(
    `${ra.rejected} rejected; shortest gap after a 429 ${Math.min(...ra.gapsMs).toFixed(0)} ms; busiest node ${busiest.count} requests in 10 s; converged ${c.seconds.toFixed(1)} s after the lift; events ${JSON.stringify(a)}`,
  );
  assert.equal(a.unaccounted, 0, `events neither written nor counted: ${JSON.stringify(a)}`);
});
