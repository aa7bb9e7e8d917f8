// The alerts fed with the series the running agent really exposes: the test scrapes a live agent and
// builds promtool's input series from that scrape (plus the target labels the ServiceMonitor adds), so
// a one-off increase starts from the value the agent wrote, never from a zero it may not write.
// Also: the chart's alerts follow nameOverride, and reasonAlerts picks reasons and severities.
//   node --import tsx --test test/helm/alerts-live.test.ts
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { ROOT } from '../deploy/support.ts';
import { startAgent } from '../support/agent-process.ts';
import { type Family, parseExposition } from '../support/scrape.ts';
import { helmTemplate, runTool, shippedGroups, toolsOrSkip } from './support.ts';

const { tools, skip } = await toolsOrSkip();

/** What Prometheus Operator's ServiceMonitor gives every sample of one agent's target. */
const TARGET = 'job="node-problem-detector",namespace="kube-system",node="n1",instance="10.0.0.1:20257"';

/** The documented loss query of docs/metrics.md, as written there. */
function documentedQuery(comment: string): string {
  const lines = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8').split('\n');
  const at = lines.indexOf(`# ${comment}`);
  assert.ok(at >= 0, `docs/metrics.md has no "# ${comment}" query`);
  return lines[at + 1] as string;
}

type Rule = { alert?: string; expr: string; labels?: object };
type Groups = { name: string; rules: Rule[] }[];

/** The rule groups of the chart's PrometheusRule with `values`. */
async function chartGroups(values: object): Promise<Groups> {
  const rule = (await helmTemplate(tools!, values)).find((d) => d.kind === 'PrometheusRule');
  assert.ok(rule, 'the chart renders a PrometheusRule');
  return (rule.spec as { groups: Groups }).groups;
}

describe('alerts on the series a live agent exposes', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'npd-alerts-live-'));
  let families: Map<string, Family>;
  after(() => rmSync(dir, { recursive: true, force: true }));

  before(async () => {
    const agent = await startAgent(['--enable-k8s-exporter=false']);
    try {
      families = parseExposition(await (await fetch(agent.metricsUrl)).text());
    } finally {
      await agent.stop();
    }
  });

  /** The scraped series with the target labels, and its scraped value; fails if the agent lacks it. */
  function scraped(series: string): { series: string; value: number } {
    const name = series.replace(/\{.*$/, '');
    const sample = families.get(name)?.samples.find((s) => s.series === series);
    assert.ok(sample, `the agent does not expose ${series} before its first increment`);
    return { series: series.replace(/\}$/, `,${TARGET}}`), value: sample.value };
  }

  /** A one-off increment at minute 2, from the value the agent exposed. */
  const oneOff = (series: string) => {
    const s = scraped(series);
    return { series: s.series, values: `${s.value} ${s.value} ${s.value + 1}x20` };
  };

  async function promtoolTest(groups: Groups, tests: object[]) {
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
    writeFileSync(
      join(dir, 'live.test.yaml'),
      stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }),
    );
    return runTool(tools!.promtool, ['test', 'rules', 'live.test.yaml'], dir);
  }

  const lossAlert = {
    alert: 'DocumentedKmsgLoss',
    expr: documentedQuery('kernel log lost under load (raise the CPU limit)'),
  };
  // Annotations are left out here (the fixture tests in alerts/ check them): their values depend on
  // the scraped starting value, which on a busy host need not be 0.
  const withDocs = (): Groups =>
    [...shippedGroups(), { name: 'docs', rules: [lossAlert] }].map((g) => ({
      ...g,
      rules: g.rules.map(({ annotations: _, ...r }: Rule & { annotations?: object }) => r),
    }));
  const series = () => [
    oneOff('problem_counter{reason="OOMKilling"}'),
    oneOff('npd_events_dropped_total{point="incoming",source="kernel-monitor",watcher=""}'),
    oneOff('npd_kmsg_records_lost_total{source="kernel-monitor"}'),
  ];

  test('a one-off OOM kill, event drop and kmsg loss each fire their alert', async () => {
    const r = await promtoolTest(withDocs(), [
      {
        interval: '1m',
        input_series: series(),
        alert_rule_test: [
          {
            alertname: 'NodeProblemOOMKilling',
            eval_time: '5m',
            exp_alerts: [
              {
                exp_labels: {
                  severity: 'warning',
                  namespace: 'kube-system',
                  node: 'n1',
                  reason: 'OOMKilling',
                },
              },
            ],
          },
          {
            alertname: 'NodeProblemDetectorEventsDropped',
            eval_time: '5m',
            exp_alerts: [
              {
                exp_labels: { severity: 'info', node: 'n1', point: 'incoming' },
              },
            ],
          },
          {
            alertname: 'DocumentedKmsgLoss',
            eval_time: '5m',
            exp_alerts: [{ exp_labels: { ...labelsOf(TARGET), source: 'kernel-monitor' } }],
          },
        ],
      },
    ]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  });

  test('control: the same increments on series born at 1 (no zero sample) fire nothing', async () => {
    const bornAtOne = series().map((s) => ({ series: s.series, values: `_ _ ${s.values.split(' ')[2]}` }));
    const silent = ['NodeProblemOOMKilling', 'NodeProblemDetectorEventsDropped', 'DocumentedKmsgLoss'];
    const r = await promtoolTest(withDocs(), [
      {
        interval: '1m',
        input_series: bornAtOne,
        alert_rule_test: silent.map((alertname) => ({ alertname, eval_time: '5m', exp_alerts: [] })),
      },
    ]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  });

  test('the chart derives the job of NodeProblemDetectorDown from nameOverride', async () => {
    const values = { nameOverride: 'npd', metrics: { prometheusRule: { enabled: true } } };
    const groups = await chartGroups(values);
    const down = (job: string) => [
      {
        interval: '1m',
        input_series: [{ series: `up{job="${job}",node="n1",instance="10.0.0.1:20257"}`, values: '1 0x15' }],
        alert_rule_test: [
          {
            alertname: 'NodeProblemDetectorDown',
            eval_time: '13m',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning', job, node: 'n1', instance: '10.0.0.1:20257' },
                exp_annotations: {
                  summary: 'node-problem-detector on n1 is not scrapable',
                  description:
                    "The agent's /metrics endpoint has not answered for 10 minutes; problems on this node go unreported.",
                },
              },
            ],
          },
        ],
      },
    ];
    const r = await promtoolTest(groups, down('npd'));
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const control = await promtoolTest(shippedGroups(), down('npd'));
    assert.notEqual(control.code, 0, 'the fixed job="node-problem-detector" misses a renamed job');
  });

  test('reasonAlerts picks the reasons and their severities', async () => {
    const values = {
      metrics: {
        prometheusRule: {
          enabled: true,
          reasonAlerts: { OOMKilling: 'critical', TaskHung: null, XidError: 'warning' },
        },
      },
    };
    const groups = await chartGroups(values);
    const reasons = groups.find((g) => g.name === 'node-problem-detector.reasons')?.rules ?? [];
    const byName = new Map(reasons.map((r) => [r.alert, r]));
    assert.deepEqual(byName.get('NodeProblemOOMKilling')?.labels, { severity: 'critical' });
    assert.equal(byName.has('NodeProblemTaskHung'), false, 'null removes a reason');
    assert.match(byName.get('NodeProblemXidError')?.expr ?? '', /problem_counter\{reason="XidError"\}/);
    assert.equal(reasons.length, 13, '13 defaults - TaskHung + XidError');
    const check = await (async () => {
      writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
      return runTool(tools!.promtool, ['check', 'rules', 'rules.yaml'], dir);
    })();
    assert.equal(check.code, 0, check.stdout + check.stderr);
    const noneGroups = await chartGroups({
      metrics: { prometheusRule: { enabled: true, reasonAlerts: null } },
    });
    assert.equal(
      noneGroups.some((g) => g.name === 'node-problem-detector.reasons'),
      false,
    );
  });
});

function labelsOf(target: string): Record<string, string> {
  return Object.fromEntries(
    [...target.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}
