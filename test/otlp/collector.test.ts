/**
 * The OTLP event sink against a real OpenTelemetry Collector (test/tools/otelcol/build.sh): the agent runs
 * standalone, reads marked lines from the real /dev/kmsg, and the test reads what the Collector's file
 * exporter stored.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { persistedEvent } from '../../src/events/persist/record.ts';
import { VERSION } from '../../src/core/version.ts';
import { kmsg, shippedRules, workDir } from '../e2e/support.ts';
import { freePort, kmsgWritable, metricValue, startAgent, waitFor } from '../support/agent-process.ts';
import { type Collector, ensureCollector, type StoredRecord, startCollector } from '../support/otelcol.ts';
import { caCert, serverCert, serverKey } from '../support/tls-fixtures.ts';

const NODE = 'otlp-node-1';
/** rules/kernel.yaml with lookback 0: lines other tests wrote earlier are not replayed ahead of ours. */
const kernelRules = () => shippedRules(workDir(), 'kernel.yaml');

/** A kernel line the shipped OOMKilling rule (rules/kernel.yaml) matches, with the marker as process name. */
function oomLine(marker: string): string {
  return `Killed process 4242 (${marker}) total-vm:10240kB, anon-rss:2048kB, file-rss:0kB, shmem-rss:0kB`;
}

/**
 * A permanent rule on a condition only this test's agent knows: a condition-changing line in the shared
 * /dev/kmsg must not flip a shipped condition in the agents other tests run at the same time.
 */
function markerConditionConfig(dir: string, marker: string): string {
  const file = join(dir, 'condition.yaml');
  writeFileSync(
    file,
    [
      'plugin: kmsg',
      'source: otlp-test-monitor',
      'conditions:',
      `  - type: Otlp${marker}`,
      '    reason: OtlpOk',
      '    message: fine',
      'rules:',
      '  - type: permanent',
      `    condition: Otlp${marker}`,
      `    reason: OtlpBroken${marker}`,
      `    pattern: '${marker}: controller wedged'`,
    ].join('\n'),
  );
  return file;
}

const withMarker = (records: StoredRecord[], marker: string) =>
  records.filter((r) => String(r.body).includes(marker));

const series = (name: string, labels = '') => `npd_event_sink_${name}_total{sink="otlp"${labels}}`;

describe('OTLP sink against a real OpenTelemetry Collector', { skip: !kmsgWritable() }, () => {
  let bin = '';
  before(async () => {
    bin = await ensureCollector();
  });

  describe('with the Collector up', () => {
    let collector: Collector;
    before(async () => {
      collector = await startCollector(bin, await freePort());
    });
    after(() => collector.stop());

    it('stores kernel events and condition changes with Kubernetes resource attributes (protobuf)', async () => {
      const marker = `npdotlp${randomBytes(5).toString('hex')}`;
      const dir = mkdtempSync(join(tmpdir(), 'npd-otlp-'));
      const agent = await startAgent([
        '--enable-k8s-exporter=false',
        `--hostname-override=${NODE}`,
        `--config.system-log-monitor=${kernelRules()},${markerConditionConfig(dir, marker)}`,
        `--event-otlp-endpoint=${collector.endpoint}`,
        '--event-otlp-header=X-Test=otlp',
      ]);
      try {
        kmsg(oomLine(marker));
        kmsg(`${marker}: controller wedged`);
        await waitFor(() => withMarker(collector.records(), marker).length >= 2, 20_000, agent.output);
        const mine = withMarker(collector.records(), marker);
        const oom = mine.find((r) => r.attributes['k8s.event.reason'] === 'OOMKilling');
        assert.ok(oom, `an OOMKilling record: ${JSON.stringify(mine)}`);
        assert.deepEqual(
          {
            'service.name': oom.resource['service.name'],
            'service.version': oom.resource['service.version'],
            'k8s.node.name': oom.resource['k8s.node.name'],
            'k8s.object.kind': oom.resource['k8s.object.kind'],
            'k8s.object.name': oom.resource['k8s.object.name'],
          },
          {
            'service.name': 'node-problem-detector',
            'service.version': VERSION,
            'k8s.node.name': NODE,
            'k8s.object.kind': 'Node',
            'k8s.object.name': NODE,
          },
        );
        assert.equal(oom.resource['k8s.node.uid'], undefined, 'standalone: the node UID is unknown');
        assert.equal(oom.severityNumber, 13);
        assert.equal(oom.severityText, 'WARN');
        assert.equal(oom.attributes['k8s.event.count'], 1);
        assert.equal(oom.attributes['k8s.event.type'], 'Warning');
        assert.equal(oom.attributes['k8s.event.source.component'], 'kernel-monitor');
        assert.match(String(oom.body), new RegExp(`Killed process 4242 \\(${marker}\\)`));
        assert.ok(BigInt(oom.timeUnixNano ?? '0') > 0n, 'timestamp set');

        const change = mine.find((r) => r.attributes['k8s.event.reason'] === `OtlpBroken${marker}`);
        assert.ok(change, `a condition-change record: ${JSON.stringify(mine)}`);
        assert.match(String(change.body), new RegExp(`^Node condition Otlp${marker} is now: True`));
        assert.equal(change.severityText, 'WARN');

        const ok = await metricValue(agent.metricsUrl, series('writes', ',result="success"'));
        assert.ok((ok ?? 0) >= 2, `writes{result="success"} counts them (got ${ok})`);
      } finally {
        assert.equal(await agent.stop(), 0);
      }
    });

    it('the trap: the generic webhook body posted to /v1/logs gets 200 and stores nothing', async () => {
      const marker = `npdtrap${randomBytes(5).toString('hex')}`;
      const event = {
        name: `${NODE}.1`,
        namespace: 'default',
        involvedObject: { kind: 'Node', name: NODE, namespace: '', uid: '', apiVersion: 'v1' },
        reason: 'OOMKilling',
        message: `Killed process 1 (${marker})`,
        type: 'Warning' as const,
        source: { component: 'kernel-monitor', host: NODE },
        reportingComponent: 'kernel-monitor',
        reportingInstance: NODE,
        firstTimestamp: Date.now(),
        lastTimestamp: Date.now(),
        count: 1,
      };
      const res = await fetch(`${collector.endpoint}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(persistedEvent(event, NODE)),
      });
      assert.equal(res.status, 200, 'the Collector accepts it');
      assert.deepEqual(await res.json(), { partialSuccess: {} }, 'and reports nothing rejected');
      // Positive control: a real OTLP record sent after it is stored, so the file exporter has flushed.
      const control = `npdctl${randomBytes(5).toString('hex')}`;
      const ctl = await fetch(`${collector.endpoint}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: control } }] }] }],
        }),
      });
      assert.equal(ctl.status, 200);
      await waitFor(() => withMarker(collector.records(), control).length === 1, 10_000, collector.output);
      assert.equal(withMarker(collector.records(), marker).length, 0, 'the webhook body stored nothing');
    });
  });

  it('retries while the Collector is down and delivers once it is back (JSON), counting the retries', async () => {
    const marker = `npdotlp${randomBytes(5).toString('hex')}`;
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'npd-otlp-down-'));
    const agent = await startAgent([
      '--enable-k8s-exporter=false',
      `--hostname-override=${NODE}`,
      `--config.system-log-monitor=${kernelRules()}`,
      `--event-otlp-endpoint=http://127.0.0.1:${port}`,
      '--event-otlp-protocol=http/json',
    ]);
    let collector: Collector | undefined;
    try {
      kmsg(oomLine(marker));
      await waitFor(
        async () => ((await metricValue(agent.metricsUrl, series('retries'))) ?? 0) >= 1,
        20_000,
        agent.output,
      );
      const failures = await metricValue(agent.metricsUrl, series('writes', ',result="failure"'));
      assert.ok((failures ?? 0) >= 1, 'the refused connection counts as a failed write');
      collector = await startCollector(bin, port, { dir });
      const up = collector;
      await waitFor(
        () => withMarker(up.records(), marker).length === 1,
        30_000,
        () => agent.output() + up.output(),
      );
      const oom = withMarker(up.records(), marker)[0];
      assert.equal(oom?.attributes['k8s.event.reason'], 'OOMKilling');
      assert.equal(await metricValue(agent.metricsUrl, series('given_up')), 0, 'nothing given up');
      assert.ok(((await metricValue(agent.metricsUrl, series('writes', ',result="success"'))) ?? 0) >= 1);
    } finally {
      assert.equal(await agent.stop(), 0);
      await collector?.stop();
    }
  });

  it('verifies an https Collector against --event-otlp-ca-file, and fails (counted) without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-otlp-tls-'));
    const certs = {
      caFile: join(dir, 'ca.pem'),
      certFile: join(dir, 'server.pem'),
      keyFile: join(dir, 'server.key'),
    };
    writeFileSync(certs.caFile, caCert);
    writeFileSync(certs.certFile, serverCert);
    writeFileSync(certs.keyFile, serverKey, { mode: 0o600 });
    const collector = await startCollector(bin, await freePort(), { tls: certs });
    const run = async (marker: string, extra: string[]) => {
      const agent = await startAgent([
        '--enable-k8s-exporter=false',
        `--hostname-override=${NODE}`,
        `--config.system-log-monitor=${kernelRules()}`,
        `--event-otlp-endpoint=${collector.endpoint}`,
        ...extra,
      ]);
      return { agent, marker };
    };
    try {
      const trusted = await run(`npdtls${randomBytes(5).toString('hex')}`, [
        `--event-otlp-ca-file=${certs.caFile}`,
      ]);
      try {
        kmsg(oomLine(trusted.marker));
        await waitFor(
          () => withMarker(collector.records(), trusted.marker).length === 1,
          20_000,
          trusted.agent.output,
        );
      } finally {
        assert.equal(await trusted.agent.stop(), 0);
      }
      // Negative control: the same Collector, Node's CA bundle only: the handshake fails, the write is counted.
      const untrusted = await run(`npdtls${randomBytes(5).toString('hex')}`, []);
      try {
        kmsg(oomLine(untrusted.marker));
        const failures = () => metricValue(untrusted.agent.metricsUrl, series('writes', ',result="failure"'));
        await waitFor(async () => ((await failures()) ?? 0) >= 1, 20_000, untrusted.agent.output);
        assert.match(untrusted.agent.output(), /self-signed|unable to verify|certificate/i);
        assert.equal(withMarker(collector.records(), untrusted.marker).length, 0);
      } finally {
        assert.equal(await untrusted.agent.stop(), 0);
      }
    } finally {
      await collector.stop();
    }
  });
});
