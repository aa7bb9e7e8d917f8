import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { Broadcaster } from '../../../../src/events/record/broadcaster.ts';
import {
  eventLogFields,
  formatEventLine,
  startLogging,
  startStructuredLogging,
} from '../../../../src/events/record/log-sinks.ts';
import type { KubeEvent } from '../../../../src/events/record/types.ts';
import { captureLogger, drain, kubeEvent } from './helpers.ts';

describe('log sinks', () => {
  it("formats client-go's StartLogging line", () => {
    assert.equal(
      formatEventLine(kubeEvent({ reason: 'X', message: 'disk 100% full' })),
      "Event(Node/node-1): type: 'Warning' reason: 'X' disk 100% full",
    );
  });

  it('logs type, reason, message, source and count as structured fields', () => {
    const fields = eventLogFields(kubeEvent({ count: 3 }));
    assert.equal(fields.type, 'Warning');
    assert.equal(fields.reason, 'OOMKilling');
    assert.equal(fields.message, 'Killed process 1234 (foo)');
    assert.equal(fields.source, 'kernel-monitor');
    assert.equal(fields.count, 3);
  });

  it('both watchers see every event, uncorrelated', async () => {
    const { logger, records } = captureLogger();
    const broadcaster = new Broadcaster<KubeEvent>({ registry: new Registry(), logger, source: 's' });
    const lines: string[] = [];
    startStructuredLogging(broadcaster, logger);
    startLogging(broadcaster, (line) => lines.push(line));
    for (let i = 0; i < 30; i++) broadcaster.actionOrDrop(kubeEvent());
    await drain();
    assert.equal(lines.length, 30);
    const structured = records.filter((r) => r.msg === 'Event occurred');
    assert.equal(structured.length, 30);
    assert.equal(structured[0]?.reason, 'OOMKilling');
    assert.equal(structured[0]?.count, 1);
  });
});
