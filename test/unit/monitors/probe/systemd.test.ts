import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../../src/core/clock.ts';
import { unitObjectPath } from '../../../../src/host/protocols/dbus/systemd-unit.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { RestartWindow } from '../../../../src/monitors/probe/restart-window.ts';
import { createSystemdCheck, type SystemdOptions } from '../../../../src/monitors/probe/systemd.ts';
import { FakeDbus } from '../../../support/fake-dbus.ts';
import { config, env, run, spec, T0, tempDir } from './helpers.ts';

const MIN = 60_000;
const KUBELET = unitObjectPath('kubelet.service');

describe('RestartWindow', () => {
  it('counts NRestarts deltas inside the window and forgets them after it', () => {
    const w = new RestartWindow(20 * MIN);
    assert.equal(w.observe(T0, 7, 100n), 0, 'the first sample is the baseline');
    assert.equal(w.observe(T0 + MIN, 9, 200n), 2);
    assert.equal(w.observe(T0 + 2 * MIN, 9, 200n), 2);
    assert.equal(w.observe(T0 + 15 * MIN, 12, 300n), 5);
    assert.equal(w.observe(T0 + 21 * MIN, 12, 300n), 3, 'the restarts at +1m left the window');
    assert.equal(w.observe(T0 + 36 * MIN, 12, 300n), 0);
  });

  it('counts a manual restart (activation changed, NRestarts reset) and units without NRestarts', () => {
    const w = new RestartWindow(20 * MIN);
    w.observe(T0, 4, 100n);
    assert.equal(w.observe(T0 + MIN, 0, 200n), 1, 'manual start: NRestarts went back to 0');
    assert.equal(w.observe(T0 + 2 * MIN, 2, 300n), 3);
    const plain = new RestartWindow(20 * MIN);
    plain.observe(T0, undefined, 100n);
    assert.equal(plain.observe(T0 + MIN, undefined, 200n), 1);
    assert.equal(plain.observe(T0 + 2 * MIN, undefined, 200n), 1);
  });
});

describe('systemd probe against a fake D-Bus', async () => {
  const root = await tempDir();
  await mkdir(join(root, 'run/dbus'), { recursive: true });
  const bus = await FakeDbus.start(join(root, 'run/dbus'));
  after(() => bus.close());
  const clock = new FakeClock(T0);
  const e = env(hostPaths(root), clock);
  const entry = { kind: 'systemd', unit: 'kubelet.service', restarts: { count: 3, window: '10m' } };

  it('uses NPD-style names derived from the unit', () => {
    const c = config({ probes: [entry] });
    assert.deepEqual(
      c.conditions.map((x) => [x.type, x.reason]),
      [
        ['FrequentKubeletRestart', 'NoFrequentKubeletRestart'],
        ['KubeletUnhealthy', 'KubeletIsHealthy'],
      ],
    );
    assert.equal(c.probes[0]?.name, 'systemd:kubelet.service');
  });

  it('reports an active unit as OK and a failed one as NonOK', async () => {
    bus.setUnit(KUBELET, {
      ActiveState: 'active',
      SubState: 'running',
      NRestarts: 0,
      InactiveExitTimestamp: 1_767_225_600_000_000n,
    });
    const check = createSystemdCheck(spec<SystemdOptions>(entry), e, 0);
    const [active, restarts] = await run(check);
    assert.equal(active?.status, 'OK');
    assert.equal(active?.message, 'kubelet.service is active (running) since 2026-01-01T00:00:00.000Z');
    assert.equal(restarts?.status, 'OK');
    assert.equal(restarts?.rule.condition, 'FrequentKubeletRestart');
    bus.setUnit(KUBELET, { ActiveState: 'failed', SubState: 'failed', NRestarts: 0 });
    const [failed] = await run(check);
    assert.equal(failed?.status, 'NonOK');
    assert.equal(failed?.rule.reason, 'KubeletNotActive');
    assert.equal(failed?.message, 'kubelet.service is failed (failed)');
  });

  it('reports a missing unit', async () => {
    bus.setUnit(unitObjectPath('nope.service'), {
      LoadState: 'not-found',
      ActiveState: 'inactive',
      SubState: 'dead',
    });
    const [r] = await run(
      createSystemdCheck(spec<SystemdOptions>({ kind: 'systemd', unit: 'nope.service' }), e, 0),
    );
    assert.equal(r?.status, 'NonOK');
    assert.equal(r?.message, 'nope.service is not installed');
  });

  it('raises FrequentKubeletRestart after N restarts in the window and clears by itself', async () => {
    const check = createSystemdCheck(spec<SystemdOptions>(entry), e, 0);
    const sample = async (n: number, activation: bigint) => {
      bus.setUnit(KUBELET, {
        ActiveState: 'active',
        SubState: 'running',
        NRestarts: n,
        InactiveExitTimestamp: activation,
      });
      const [, restarts] = await run(check);
      return restarts;
    };
    assert.equal((await sample(10, 1n))?.status, 'OK');
    clock.advance(MIN);
    assert.equal((await sample(12, 2n))?.status, 'OK');
    clock.advance(MIN);
    const loop = await sample(13, 3n);
    assert.equal(loop?.status, 'NonOK');
    assert.equal(loop?.message, 'kubelet.service restarted 3 times in 10m0s');
    clock.advance(9 * MIN);
    assert.equal((await sample(13, 3n))?.status, 'OK', 'two of the three restarts are older than 10m');
  });

  it('throws when systemd does not answer, so the monitor reports Unknown', async () => {
    const check = createSystemdCheck(spec<SystemdOptions>({ ...entry, socket: '/run/dbus/missing' }), e, 0);
    await assert.rejects(run(check), /ENOENT/);
  });
});
