import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateKeys, eventKey, spamKey } from '../../../../src/events/record/keys.ts';
import { kubeEvent } from './helpers.ts';

const event = kubeEvent({
  involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'n1', namespace: 'ns', uid: 'u1', fieldPath: 'fp' },
  source: { component: 'comp', host: 'host' },
  type: 'Warning',
  reason: 'R',
  message: 'M',
  reportingComponent: 'rc',
  reportingInstance: 'ri',
});

describe('correlator keys (client-go events_cache.go field order, empty separator)', () => {
  it('eventKey: source, object incl. fieldPath, type, reason, message', () => {
    assert.equal(eventKey(event), 'comphostNodensn1fpu1v1WarningRM');
  });

  it('eventKey treats a missing fieldPath as empty', () => {
    const noPath = kubeEvent({ ...event, involvedObject: { ...event.involvedObject, fieldPath: undefined } });
    assert.equal(eventKey(noPath), 'comphostNodensn1u1v1WarningRM');
  });

  it('spamKey: source, object without fieldPath, type; no reason or message', () => {
    assert.equal(spamKey(event), 'comphostNodensn1u1v1Warning');
    assert.equal(spamKey({ ...event, reason: 'other', message: 'other' }), spamKey(event));
    assert.notEqual(spamKey({ ...event, type: 'Normal' }), spamKey(event));
  });

  it('aggregateKeys: source, object without fieldPath, type, reason, reporting fields; local key = message', () => {
    assert.deepEqual(aggregateKeys(event), ['comphostNodensn1u1v1WarningRrcri', 'M']);
    assert.equal(aggregateKeys({ ...event, message: 'other' })[0], aggregateKeys(event)[0]);
  });
});
