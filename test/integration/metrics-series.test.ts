// Every counter the running agent declares has a sample from the first scrape, so increase() and
// rate() see the first drop, loss or failure: a series born at 1 reads as no increase at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pkg from '../../package.json' with { type: 'json' };
import { startAgent } from '../support/agent-process.ts';
import { json, startFakeApiServer } from '../support/fake-apiserver.ts';
import { parseExposition } from '../support/scrape.ts';

async function scrape(args: string[]) {
  const agent = await startAgent(args);
  try {
    return parseExposition(await (await fetch(agent.metricsUrl)).text());
  } finally {
    await agent.stop();
  }
}

function emptyCounters(families: ReturnType<typeof parseExposition>): string[] {
  return [...families.values()]
    .filter((f) => f.type === 'counter' && f.samples.length === 0)
    .map((f) => f.name);
}

const has = (families: ReturnType<typeof parseExposition>, series: string) =>
  families.get(series.replace(/\{.*$/, ''))?.samples.find((s) => s.series === series)?.value;

const NO_API_SINK = [
  'npd_events_aggregated_total',
  'npd_events_spam_filtered_total',
  'npd_events_retries_total',
  'npd_events_given_up_total',
  'npd_events_written_total',
];

describe('metric series exist from the first scrape', () => {
  it('standalone: no counter family is empty, the alerted ones are at 0, npd_build_info is 1', async () => {
    const families = await scrape(['--enable-k8s-exporter=false']);
    // Without an API server there is no API sink to write, retry, give up, aggregate or spam-filter,
    // and the default rules have no templated reason that could overflow.
    assert.deepEqual(
      emptyCounters(families).sort(),
      [...NO_API_SINK, 'npd_problem_reasons_overflow_total'].sort(),
    );
    // Exposed (at 0 unless this host's kernel log already overflowed), not absent.
    assert.equal(typeof has(families, 'npd_kmsg_records_lost_total{source="kernel-monitor"}'), 'number');
    const dropped = 'npd_events_dropped_total{point="incoming",source="kernel-monitor",watcher=""}';
    assert.equal(typeof has(families, dropped), 'number');
    assert.equal(has(families, 'npd_monitor_failures_total{source="probe-monitor"}'), 0);
    assert.equal(has(families, `npd_build_info{version="${pkg.version}",commit="unknown"}`), 1);
  });

  it('reporting to an API server: the sink series are there too', async () => {
    const node = { metadata: { name: 'metrics-node', uid: 'u-1' }, status: { conditions: [] } };
    const api = await startFakeApiServer((req, res) => {
      if (req.method === 'POST') return json(res, 201, JSON.parse(req.body || '{}'));
      json(res, 200, node);
    });
    try {
      const families = await scrape([
        `--apiserver-override=${api.url}?inClusterConfig=false`,
        '--hostname-override=metrics-node',
      ]);
      assert.deepEqual(emptyCounters(families), ['npd_problem_reasons_overflow_total']);
      const written = 'npd_events_written_total{source="kernel-monitor",verb="create"}';
      assert.equal(typeof has(families, written), 'number', 'exposed before (or after) the first write');
    } finally {
      await api.close();
    }
  });

  it('a templated reason creates its overflow series at 0', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const config = join(mkdtempSync(join(tmpdir(), 'npd-series-')), 'templated.yaml');
    const rule = ['  - type: temporary', "    reason: 'Disk${1}Failed'", "    pattern: 'disk (\\w+) failed'"];
    writeFileSync(config, ['plugin: kmsg', 'source: templated-monitor', 'rules:', ...rule].join('\n'));
    const families = await scrape(['--enable-k8s-exporter=false', `--config.system-log-monitor=${config}`]);
    assert.equal(has(families, 'npd_problem_reasons_overflow_total{template="Disk${1}Failed"}'), 0);
  });
});
