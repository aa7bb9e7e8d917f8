// A real repair controller acting on what the real agent writes: medik8s NodeHealthCheck v0.12.0
// (built from its Go module, test/tools/repair-consumers/build.sh) runs against the test control
// plane with the shipped example (deploy/examples/nodehealthcheck.yaml, durations cut to seconds).
// NHC creates a remediation CR once a listed condition has had its status for `duration`, counted
// from lastTransitionTime; the agent raises the condition from lines the test appends to a log file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import { sleep } from './harness/processes.ts';
import { type NhcController, startNhc, TEMPLATE_REF } from './nhc-controller.ts';
import { LINES, readyNode, Scenario } from './nhc-scenario.ts';
import { applyObject, example, repairConsumers } from './repair-support.ts';
import { waitFor, workDir } from './support.ts';

/**
 * NHC's duration for the conditions under test: short for CI, and long enough that half of it (where
 * the reason change and the restart land) leaves a busy machine's NHC 13 s to act before a postponed
 * deadline would have come.
 */
const DURATION_S = 30;
const dir = workDir();
let cp: ControlPlane;
let nhc: NhcController;

type Row = { type: string; status: string; duration: string };
type Nhc = { metadata: { name: string }; spec: Record<string, unknown> & { unhealthyConditions: Row[] } };

/** The shipped example, with seconds for the rows under test and our remediation template. */
function testNhc(): Nhc {
  const obj = example<Nhc>('nodehealthcheck.yaml');
  const deadlock = obj.spec.unhealthyConditions.find((r) => r.type === 'KernelDeadlock');
  assert.ok(deadlock, 'the example lists KernelDeadlock');
  deadlock.duration = `${DURATION_S}s`;
  // A condition with a recovery line (rules/containerd.yaml), for the one that clears in time.
  obj.spec.unhealthyConditions.push({
    type: 'ContainerdCRIUnavailable',
    status: 'True',
    duration: `${DURATION_S}s`,
  });
  obj.spec.remediationTemplate = TEMPLATE_REF;
  return obj;
}

before(
  async () => {
    const tools = repairConsumers();
    cp = await startControlPlane();
    // Two more healthy nodes: with the harness's node, the example's storm guard (minHealthy 51%)
    // lets NHC remediate one unhealthy node of four, and would block one of two.
    for (const name of ['nhc-healthy-1', 'nhc-healthy-2']) await readyNode(cp, name);
    nhc = await startNhc(cp, tools, dir);
    // The webhook answers once the controller serves it; until then the API server refuses (Fail).
    await waitFor(
      async () => (await applyObject(cp, testNhc(), { dryRun: true })).code === 0,
      60_000,
      nhc.log,
    );
    const r = await applyObject(cp, testNhc());
    assert.equal(r.code, 0, r.stderr);
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  await nhc?.stop();
  await cp?.stop();
});

const D = DURATION_S * 1000;
const ctx = () => ({ cp, dir, nhcLog: () => nhc.log() });

describe("medik8s NodeHealthCheck acts on the agent's conditions", () => {
  test("NHC's webhook refuses the example without its storm guard (minHealthy/maxUnhealthy)", async () => {
    const broken = testNhc();
    delete broken.spec.minHealthy;
    const r = await applyObject(cp, broken, { dryRun: true });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /one of minHealthy and maxUnhealthy should be specified/);
  });

  test('a condition held past the duration makes NHC create the remediation, not before', async () => {
    const s = new Scenario(ctx(), 'nhc-held');
    await s.start();
    try {
      s.write(LINES.hardLockup);
      const since = Date.parse(await s.waitStatus('KernelDeadlock', 'True'));
      const created = await s.waitRemediation(D + 30_000);
      // Second resolution on both sides.
      assert.ok(created >= since + D - 1000, `created ${created - since} ms after the transition`);
    } finally {
      await s.finish();
    }
  });

  test('a reason change inside the window does not postpone it', async () => {
    const s = new Scenario(ctx(), 'nhc-reason');
    await s.start();
    try {
      s.write(LINES.criFailed);
      const since = await s.waitStatus('ContainerdCRIUnavailable', 'True');
      assert.equal((await s.condition('ContainerdCRIUnavailable'))?.reason, 'ContainerdCRIPluginFailed');
      await sleep(D / 2);
      s.write(LINES.criServiceFailed);
      await waitFor(
        async () => (await s.condition('ContainerdCRIUnavailable'))?.reason === 'ContainerdCRIServiceFailed',
        30_000,
        () => s.output(),
      );
      assert.equal((await s.condition('ContainerdCRIUnavailable'))?.lastTransitionTime, since);
      const created = await s.waitRemediation(D + 30_000);
      // Restarted from the reason change, NHC would act no sooner than since + 1.5 D.
      assert.ok(
        created < Date.parse(since) + D + D / 2 - 2000,
        `created ${created - Date.parse(since)} ms after`,
      );
    } finally {
      await s.finish();
    }
  });

  test('an agent restart inside the window does not postpone it', async () => {
    const s = new Scenario(ctx(), 'nhc-restart');
    await s.start();
    try {
      s.write(LINES.hardLockup);
      const since = await s.waitStatus('KernelDeadlock', 'True');
      await sleep(D / 2);
      await s.stop();
      await s.restartAgent();
      // The restarted agent replays the line (lookback) and resumes the Node's transition time.
      const own = (await s.published()).find((c) => c.type === 'KernelDeadlock');
      assert.equal(Math.floor(Date.parse(own?.transition ?? '') / 1000) * 1000, Date.parse(since));
      assert.equal((await s.condition('KernelDeadlock'))?.lastTransitionTime, since);
      const created = await s.waitRemediation(D + 30_000);
      assert.ok(
        created < Date.parse(since) + D + D / 2 - 2000,
        `created ${created - Date.parse(since)} ms after`,
      );
    } finally {
      await s.finish();
    }
  });

  test('a condition that clears before the duration does not trigger it; held again, it does', async () => {
    const s = new Scenario(ctx(), 'nhc-clears');
    await s.start();
    try {
      s.write(LINES.criFailed);
      const first = Date.parse(await s.waitStatus('ContainerdCRIUnavailable', 'True'));
      await sleep(D / 4);
      s.write(LINES.criStarted);
      await s.waitStatus('ContainerdCRIUnavailable', 'False');
      // Wait past when the first True would have been due, plus NHC's reaction time.
      await sleep(Math.max(0, first + D + 10_000 - Date.now()));
      assert.equal(await s.remediation(), undefined);
      // Positive control: the same condition, held this time, is acted on.
      s.write(LINES.criFailed);
      await s.waitStatus('ContainerdCRIUnavailable', 'True');
      await s.waitRemediation(D + 30_000);
    } finally {
      await s.finish();
    }
  });
});
