/**
 * Issue 38 build item 3: the event of a problem carries its evidence as annotations on the core/v1 Event
 * (events/evidence.ts), through the real recorder path (dispatcher, recorder, broadcaster, correlator,
 * sink), while reason and message stay NPD's and counting and aggregation of identical events are what
 * they were: every run here is compared with the same run without evidence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Evidence } from '../../../src/core/evidence.ts';
import type { ProblemEvent } from '../../../src/core/types.ts';
import { EventDispatcher } from '../../../src/events/dispatcher.ts';
import {
  EVIDENCE_ANNOTATION,
  EVIDENCE_FLAG_ANNOTATION,
  EVIDENCE_WRITER_ANNOTATION,
  evidenceAnnotations,
} from '../../../src/events/evidence.ts';
import { otlpLog } from '../../../src/events/persist/otlp-log.ts';
import { persistedEvent } from '../../../src/events/persist/record.ts';
import { createEventPipeline, nodeRef } from '../../../src/events/record/index.ts';
import { eventJson } from '../../../src/events/record/kube-sink.ts';
import { eventLogFields } from '../../../src/events/record/log-sinks.ts';
import { makeEventsV1Event } from '../../../src/events/series/events.ts';
import { eventsV1Json } from '../../../src/events/series/kube-typed.ts';
import { captureLogger, drain, FakeSink, kubeEvent } from './record/helpers.ts';

const T0 = Date.UTC(2026, 0, 1);
const SMARTD: Evidence = {
  source: 'smartd-monitor',
  plugin: 'journald',
  trust: 'listed-writer',
  writer: { transport: 'stdout', unit: 'smartd.service', uid: '0', comm: 'smartd' },
};
const KERNEL: Evidence = { source: 'kernel-monitor', plugin: 'kmsg', trust: 'kernel' };

/** The dispatcher on the agent's core/v1 pipeline, with a fake API sink. */
function setup() {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const sink = new FakeSink();
  const pipeline = createEventPipeline({
    clock,
    registry,
    logger: captureLogger().logger,
    sink,
    node: nodeRef('node-1', 'uid-1'),
    host: 'node-1',
    random: () => 0.5,
    logLine: () => {},
  });
  const dispatcher = new EventDispatcher(registry);
  dispatcher.attach(pipeline);
  const send = (events: readonly ProblemEvent[]) => {
    dispatcher.dispatch('smartd-monitor', events);
    clock.advance(1000);
  };
  return { sink, send };
}

function problem(message: string, evidence?: Evidence): ProblemEvent {
  const event: ProblemEvent = { severity: 'warn', timestamp: T0, reason: 'SMARTSelfCheckFailed', message };
  return evidence === undefined ? event : { ...event, evidence };
}

/** What the API saw, without names (they hold a clock-derived suffix) and annotations. */
function calls(sink: FakeSink) {
  return sink.calls.map((c) => [c.verb, c.event.reason, c.event.message, c.event.count, c.patch]);
}

describe('evidence annotations', () => {
  it('names plugin/trust, the journal writer and a flag; none without evidence', () => {
    assert.deepEqual(evidenceAnnotations(SMARTD), {
      [EVIDENCE_ANNOTATION]: 'journald/listed-writer',
      [EVIDENCE_WRITER_ANNOTATION]: '_TRANSPORT=stdout _SYSTEMD_UNIT=smartd.service _UID=0 _COMM=smartd',
    });
    assert.deepEqual(
      evidenceAnnotations({ ...KERNEL, trust: 'trusted-by-flag', flag: '--trust-quoted-text' }),
      {
        [EVIDENCE_ANNOTATION]: 'kmsg/trusted-by-flag',
        [EVIDENCE_FLAG_ANNOTATION]: '--trust-quoted-text',
      },
    );
    assert.equal(evidenceAnnotations(undefined), undefined);
    // The names themselves, as consumers select on them.
    assert.equal(EVIDENCE_ANNOTATION, 'node-problem-detector.io/evidence');
  });
});

describe('the recorder path', () => {
  it('the Event the sink creates has the annotations in metadata; reason and message are as without', async () => {
    const t = setup();
    t.send([problem('Device: /dev/sda [SAT], FAILED SMART self-check.', SMARTD)]);
    await drain();
    const created = t.sink.calls[0]?.event;
    assert.deepEqual(created?.annotations, evidenceAnnotations(SMARTD));
    const body = eventJson(created ?? kubeEvent());
    assert.deepEqual((body.metadata as Record<string, unknown>).annotations, evidenceAnnotations(SMARTD));
    const plain = setup();
    plain.send([problem('Device: /dev/sda [SAT], FAILED SMART self-check.')]);
    await drain();
    assert.deepEqual(calls(t.sink), calls(plain.sink));
    const control = eventJson(plain.sink.calls[0]?.event ?? kubeEvent());
    assert.equal('annotations' in (control.metadata as Record<string, unknown>), false, 'control: none');
  });

  it('identical events are counted as before, whatever writer each names (annotations are in no key)', async () => {
    const other: Evidence = { ...SMARTD, writer: { ...SMARTD.writer, comm: 'smartctl' } };
    const t = setup();
    const plain = setup();
    for (const evidence of [SMARTD, SMARTD, other]) {
      t.send([problem('FAILED SMART self-check', evidence)]);
      plain.send([problem('FAILED SMART self-check')]);
      await drain();
    }
    assert.equal(t.sink.verbs(), 'create,patch,patch');
    assert.deepEqual(calls(t.sink), calls(plain.sink));
    assert.deepEqual(
      t.sink.calls.map((c) => c.patch?.count),
      [undefined, 2, 3],
    );
  });

  it('aggregation of similar events is unchanged, and the combined event keeps the evidence', async () => {
    const t = setup();
    const plain = setup();
    for (let i = 0; i < 12; i++) {
      t.send([problem(`FAILED SMART self-check on /dev/sd${i}`, SMARTD)]);
      plain.send([problem(`FAILED SMART self-check on /dev/sd${i}`)]);
      await drain();
    }
    assert.deepEqual(calls(t.sink), calls(plain.sink));
    const combined = t.sink.calls.filter((c) => c.event.message.startsWith('(combined from similar events)'));
    assert.ok(combined.length > 0, 'the run reached the aggregator');
    for (const c of combined) assert.deepEqual(c.event.annotations, evidenceAnnotations(SMARTD));
  });
});

describe('the other event outlets', () => {
  const event = kubeEvent({ annotations: evidenceAnnotations(KERNEL) });

  it('webhook and file sinks: the persisted Event has them in metadata', () => {
    const md = persistedEvent(event, 'node-1').metadata as Record<string, unknown>;
    assert.deepEqual(md.annotations, { [EVIDENCE_ANNOTATION]: 'kmsg/kernel' });
  });

  it('OTLP: k8s.event.annotation.<key> attributes; none for an event without', () => {
    const src = { nodeName: 'node-1', serviceName: 'npd', serviceVersion: '1' };
    const attrs = new Map(otlpLog(event, src, T0).attributes);
    assert.equal(attrs.get(`k8s.event.annotation.${EVIDENCE_ANNOTATION}`), 'kmsg/kernel');
    const bare = otlpLog(kubeEvent(), src, T0).attributes;
    assert.ok(bare.every(([k]) => !k.startsWith('k8s.event.annotation.')));
  });

  it('the structured event log and events.k8s.io/v1 Events carry them too', () => {
    assert.deepEqual(eventLogFields(event).annotations, { [EVIDENCE_ANNOTATION]: 'kmsg/kernel' });
    assert.equal('annotations' in eventLogFields(kubeEvent()), false);
    const init = {
      regarding: nodeRef('node-1', 'uid-1'),
      type: 'Warning' as const,
      reason: 'KernelOops',
      action: 'KernelOops',
      note: 'oops',
      reportingController: 'kernel-monitor',
      reportingInstance: 'node-1',
    };
    const v1 = { ...makeEventsV1Event(init, T0, 1n), annotations: evidenceAnnotations(KERNEL) };
    const md = eventsV1Json(v1).metadata as Record<string, unknown>;
    assert.deepEqual(md.annotations, { [EVIDENCE_ANNOTATION]: 'kmsg/kernel' });
  });
});
