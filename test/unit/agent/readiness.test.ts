import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Exporter } from '../../../src/agent/exporter.ts';
import { readiness } from '../../../src/agent/readiness.ts';

const exporter = (mode: Exporter['mode'], synced: boolean) =>
  ({ mode, conditions: { synced: () => synced } }) as unknown as Exporter;

describe('/readyz', () => {
  it('standalone says there is nothing to sync instead of claiming a node sync', () => {
    assert.deepEqual(readiness(exporter('standalone', true), true), {
      ok: true,
      detail: 'standalone: nothing to sync\n',
    });
  });

  it('with a cluster: ready after a node sync, not before', () => {
    assert.deepEqual(readiness(exporter('kubernetes', true), true), { ok: true, detail: 'node sync ok\n' });
    assert.equal(readiness(exporter('kubernetes', false), true).ok, false);
    assert.match(
      readiness(exporter('kubernetes', true), false).detail,
      /update-node-conditions=false: nothing to sync/,
    );
    assert.equal(readiness(undefined, true).ok, false);
  });
});
