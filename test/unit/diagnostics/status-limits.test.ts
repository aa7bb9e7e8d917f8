/**
 * A status the API server refuses (issue 38 item 5): a 5,000-character key id quoted in a message over
 * the CRD's 4,096-character limit made every status patch fail with 422, and the agent sent it again at
 * every poll for ever. The fake API server below validates status.message against the CRD's own
 * maxLength, as the real one does, and answers 422 Invalid.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { DiagnosticsController } from '../../../src/diagnostics/controller.ts';
import {
  newUploadKey,
  sealUploadURL,
  type UploadKey,
  uploadTarget,
} from '../../../src/diagnostics/sealed-url.ts';
import { bounded, STATUS_MESSAGE_MAX } from '../../../src/diagnostics/status.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import type { NodeDiagnosticRequest, NodeDiagnosticStatus } from '../../../src/kube/node-diagnostics.ts';

const NODE = 'n1';
const CRD = join(import.meta.dirname, '..', '..', '..', 'deploy', 'components', 'diagnostics', 'crd.yaml');

/** status.message's maxLength in the CRD the manifests install. */
function crdMessageLimit(): number {
  const crd = parseAllDocuments(readFileSync(CRD, 'utf8'))[0]?.toJS();
  const schema = crd.spec.versions[0].schema.openAPIV3Schema;
  return schema.properties.status.properties.message.maxLength;
}

function request(sealedUploadURL: string): NodeDiagnosticRequest {
  return {
    name: 'r1',
    uid: 'uid-r1',
    nodeName: NODE,
    uploadURL: '',
    sealedUploadURL,
    sinceMinutes: undefined,
    maxBytes: undefined,
    phase: '',
    attempts: undefined,
    completedAt: undefined,
  };
}

type Refuse = (status: NodeDiagnosticStatus) => Error | undefined;

/** The CRD's schema check: a message over the limit is refused as the API server does (422 Invalid). */
const overLimit: Refuse = (status) =>
  [...status.message].length > crdMessageLimit()
    ? new ApiError(
        `status.message: Too long: may not be more than ${crdMessageLimit()} bytes`,
        422,
        'Invalid',
      )
    : undefined;

/** `req` gets this agent's key, to seal its URL to. */
function setup(makeRequest: (key: UploadKey) => NodeDiagnosticRequest, refuse: Refuse = overLimit) {
  const registry = createRegistry();
  const key = newUploadKey();
  const req = makeRequest(key);
  const sent: NodeDiagnosticStatus[] = [];
  const written: NodeDiagnosticStatus[] = [];
  const uploads: string[] = [];
  const controller = new DiagnosticsController({
    api: {
      list: async () => ({ items: [req], complete: true }),
      patchStatus: async (_name, status) => {
        sent.push(status);
        const err = refuse(status);
        if (err) throw err;
        written.push(status);
      },
      delete: async () => undefined,
      publishKey: async () => undefined,
    },
    target: (r) => uploadTarget(r, key, true),
    nodeName: NODE,
    clock: new FakeClock(0),
    registry,
    logger: silentLogger(),
    parts: () => [{ name: 'a.txt', maxBytes: 1024, read: async () => ({ text: 'a\n' }) }],
    upload: async (url) => void uploads.push(url),
  });
  const failures = async (stage: string) =>
    (await registry.getSingleMetric('npd_diagnostics_failures_total')?.get())?.values.find(
      (v) => v.labels.stage === stage,
    )?.value;
  return { controller, sent, written, uploads, failures };
}

const sealed = (key: UploadKey) => sealUploadURL('https://b.example/x', key.annotation, NODE);
const ownKey = (key: UploadKey) => request(sealed(key));

const polls = async (c: DiagnosticsController, n: number) => {
  for (let i = 0; i < n; i++) await c.poll();
};

describe('NodeDiagnostic status within the CRD', () => {
  it('the bound is the CRD maxLength; a longer text is cut to it in code points, with the cut said', () => {
    assert.equal(STATUS_MESSAGE_MAX, crdMessageLimit());
    const long = 'é'.repeat(5000);
    const cut = bounded(long);
    assert.equal([...cut].length, STATUS_MESSAGE_MAX);
    assert.match(cut, /… \(cut from 5000 characters\)$/);
    // Control: a text at the limit is left as it is.
    const full = 'x'.repeat(STATUS_MESSAGE_MAX);
    assert.equal(bounded(full), full);
  });

  it('a 5,000-character key id is refused with a message the API server accepts, written once', async () => {
    const huge = `npd-sealed-v1.${'k'.repeat(5000)}.AAAA.AAAA.AAAA.AAAA`;
    const { controller, sent, written, uploads, failures } = setup(() => request(huge));
    await polls(controller, 3);
    assert.equal(sent.length, 1, 'one status patch, not one per poll');
    assert.equal(written[0]?.phase, 'Failed');
    assert.ok([...(written[0]?.message ?? '')].length <= STATUS_MESSAGE_MAX);
    assert.match(
      written[0]?.message ?? '',
      /^sealedUploadURL was sealed to key k{32}…, but this node's agent/,
    );
    assert.deepEqual(uploads, []);
    assert.equal(await failures('status_rejected'), 0);
  });

  it('control: a real key id of another key is quoted whole', async () => {
    const other = newUploadKey();
    const { controller, written } = setup(() => request(sealed(other)));
    await polls(controller, 1);
    assert.match(written[0]?.message ?? '', new RegExp(`sealed to key ${other.kid}, but`));
  });

  it('a status refused as invalid (422) ends the request as Failed, counted, and is not re-sent', async () => {
    const refuseSuccess: Refuse = (s) =>
      s.phase === 'Succeeded' ? new ApiError('status.bytes: Invalid value', 422, 'Invalid') : undefined;
    const s = setup(ownKey, refuseSuccess);
    await polls(s.controller, 3);
    assert.deepEqual(s.uploads, ['https://b.example/x'], 'collected and uploaded once');
    assert.deepEqual(
      s.sent.map((x) => x.phase),
      ['Running', 'Succeeded', 'Failed'],
    );
    const last = s.written.at(-1);
    assert.equal(last?.phase, 'Failed');
    assert.equal(last?.conditions?.[0]?.reason, 'StatusRejected');
    assert.match(
      last?.message ?? '',
      /refused the agent's Succeeded status for this request as invalid \(422\)/,
    );
    assert.equal(await s.failures('status_rejected'), 1);
    assert.equal(await s.failures('status'), 0);
  });

  it('when every status is refused the request is given up after two writes, not retried per poll', async () => {
    const all: Refuse = () => new ApiError('invalid', 422, 'Invalid');
    const t = setup(ownKey, all);
    await polls(t.controller, 4);
    assert.deepEqual(
      t.sent.map((x) => x.phase),
      ['Running', 'Failed'],
    );
    assert.deepEqual(t.uploads, [], 'never collected: Running was refused');
    assert.equal(await t.failures('status_rejected'), 2);
  });

  it('control: a status that failed for now (API server down, no 422) is sent again at the next poll', async () => {
    let down = true;
    const transient: Refuse = (st) =>
      down && st.phase !== 'Running' ? new ApiError('unavailable', 503) : undefined;
    const t = setup(ownKey, transient);
    await polls(t.controller, 2);
    assert.deepEqual(
      t.sent.map((x) => x.phase),
      ['Running', 'Succeeded', 'Succeeded'],
    );
    down = false;
    await polls(t.controller, 2);
    assert.deepEqual(
      t.written.map((x) => x.phase),
      ['Running', 'Succeeded'],
    );
    assert.equal(await t.failures('status'), 2);
    assert.equal(await t.failures('status_rejected'), 0);
  });
});
