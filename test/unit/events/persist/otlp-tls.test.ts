import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { OtlpSink } from '../../../../src/events/persist/otlp.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { caCert, serverCert, serverKey } from '../../../support/tls-fixtures.ts';
import { captureLogger, kubeEvent, metricValue } from './helpers.ts';

describe('OtlpSink over https', () => {
  let server: https.Server;
  let endpoint = '';
  before(async () => {
    server = https.createServer({ cert: serverCert, key: serverKey }, (req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"partialSuccess":{}}'),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  async function writeOnce(tls: { ca?: string; insecureSkipVerify?: boolean }) {
    const registry = new Registry();
    const { logger, records } = captureLogger();
    const sink = new OtlpSink({
      endpoint,
      protocol: 'http/json',
      source: { nodeName: 'node-1', serviceName: 'node-problem-detector', serviceVersion: '1' },
      clock: new FakeClock(),
      registry,
      logger,
      tls,
      maxTries: 1,
    });
    try {
      await sink.write(kubeEvent());
    } finally {
      await sink.close();
    }
    const result = (r: string) =>
      metricValue(registry, 'npd_event_sink_writes_total', { sink: 'otlp', result: r });
    return { success: await result('success'), failure: await result('failure'), records };
  }

  it('verifies the server against the CA file it is given', async () => {
    assert.equal((await writeOnce({ ca: caCert })).success, 1);
  });

  it('fails, counted, against a CA it does not trust (negative control)', async () => {
    const r = await writeOnce({});
    assert.equal(r.success, 0);
    assert.equal(r.failure, 1);
    assert.ok(
      r.records.some((l) => /certificate/i.test(String(l.err))),
      JSON.stringify(r.records),
    );
  });

  it('skips verification when told to', async () => {
    assert.equal((await writeOnce({ insecureSkipVerify: true })).success, 1);
  });
});
