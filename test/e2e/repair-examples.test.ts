// The shipped repair-controller examples (deploy/examples/) are accepted by the real API server with
// the controllers' real CRDs (pinned Go module zips, test/tools/repair-consumers/build.sh), through
// the real kubectl's server-side apply; a broken copy of each is refused (negative controls).
// NHC's own admission webhook (minHealthy/maxUnhealthy) runs in repair-nhc.test.ts, beside NHC.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ControlPlane, startControlPlane } from './harness/controlplane.ts';
import {
  applyObject,
  example,
  installCrds,
  type RepairConsumers,
  repairConsumers,
} from './repair-support.ts';

let cp: ControlPlane;
let tools: RepairConsumers;

before(
  async () => {
    tools = repairConsumers();
    cp = await startControlPlane();
    await installCrds(cp, tools.NHC_CRDS);
    await installCrds(cp, tools.CAPI_CRDS);
  },
  { timeout: 60 * 60_000 },
);

after(async () => {
  await cp?.stop();
});

interface Nhc {
  spec: { unhealthyConditions: { type: string; status: string; duration: string }[] };
}
interface Mhc {
  spec: { checks: { unhealthyNodeConditions: Record<string, unknown>[] } };
}

describe('NodeHealthCheck example (NHC v0.12.0 CRD)', () => {
  test('is accepted by server-side apply', async () => {
    const r = await applyObject(cp, example('nodehealthcheck.yaml'), { dryRun: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /nodehealthcheck\.remediation\.medik8s\.io\/node-problem-detector serverside-applied/,
    );
  });

  test('a duration NHC cannot parse is refused by the CRD schema', async () => {
    const broken = example<Nhc>('nodehealthcheck.yaml');
    const row = broken.spec.unhealthyConditions.find((c) => c.type === 'KernelDeadlock');
    assert.ok(row);
    row.duration = '5 minutes';
    const r = await applyObject(cp, broken, { dryRun: true });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.unhealthyConditions\[\d+\]\.duration/);
  });
});

describe('MachineHealthCheck example (Cluster API v1.13.6 CRD, v1beta2)', () => {
  test('is accepted by server-side apply', async () => {
    const r = await applyObject(cp, example('machinehealthcheck.yaml'), { dryRun: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /machinehealthcheck\.cluster\.x-k8s\.io\/my-cluster-md-0-node-problems serverside-applied/,
    );
  });

  test("v1beta1's timeout field in a v1beta2 check is refused", async () => {
    const broken = example<Mhc>('machinehealthcheck.yaml');
    const row = broken.spec.checks.unhealthyNodeConditions[2];
    assert.equal(row?.type, 'KernelDeadlock');
    delete row.timeoutSeconds;
    row.timeout = '300s';
    const r = await applyObject(cp, broken, { dryRun: true });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /\.spec\.checks\.unhealthyNodeConditions\[2\]\.timeout: field not declared in schema/,
    );
  });
});
