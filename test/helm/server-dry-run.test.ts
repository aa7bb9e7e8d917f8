// Every value set's `helm template` output, server-side dry run (`kubectl apply --dry-run=server
// --validate=strict`) against the real kube-apiserver + etcd of the e2e harness, with the real
// prometheus-operator CRDs installed (test/support/dry-run.ts), so ServiceMonitor and PrometheusRule
// specs are validated by the operator's own schemas.
//   node --import tsx --test test/helm/server-dry-run.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAllAccepted, type DryRunServer, dryRunAvailability } from '../support/dry-run.ts';
import { helmTemplate, toolsOrSkip, VALUE_SETS } from './support.ts';

const { tools, skip: toolSkip } = await toolsOrSkip();
const avail = toolSkip ? { skip: toolSkip } : await dryRunAvailability();
if (avail.skip) process.stderr.write(`helm server-dry-run: skipped: ${avail.skip}\n`);

describe('helm template output is accepted by a real kube-apiserver', { skip: avail.skip }, () => {
  let server: DryRunServer;
  before(
    async () => {
      server = await (avail as { start: () => Promise<DryRunServer> }).start();
    },
    { timeout: 60 * 60_000 },
  );
  after(async () => {
    await server?.stop();
  });

  for (const [name, values] of Object.entries(VALUE_SETS)) {
    test(`value set "${name}"`, async () => {
      const docs = await helmTemplate(tools!, values);
      assertAllAccepted(docs, await server.dryRun(docs));
    });
  }

  test('control: a relabeling the ServiceMonitor CRD forbids is rejected by the server', async () => {
    const values = {
      metrics: {
        service: { enabled: true },
        serviceMonitor: { enabled: true, additionalRelabelings: [{ action: 'frobnicate' }] },
      },
    };
    const docs = (await helmTemplate(tools!, values)).filter((d) => d.kind === 'ServiceMonitor');
    assert.equal(docs.length, 1);
    const r = await server.dryRun(docs);
    assert.notEqual(r.code, 0, 'the operator schema must reject an unknown relabel action');
    assert.match(r.stderr, /action.*Unsupported value: "frobnicate"|frobnicate/);
  });
});
