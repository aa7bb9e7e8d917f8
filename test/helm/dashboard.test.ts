// Every PromQL expression of the Grafana dashboard (deploy/components/metrics/dashboard/) and of the
// alerts, checked against series the REAL agent exposes: the agent runs against the real
// kube-apiserver of the e2e harness with kmsg, filelog and probe monitors; a marked kernel line makes
// a problem, a condition and an event. /metrics is scraped twice into files (text format), the
// samples become `promtool test rules` input series (with the job and node labels the ServiceMonitor
// adds, and Prometheus's own `up`), and promtool evaluates each query on them. A query must:
// - name only metric families the agent declares (# TYPE), or `up`;
// - evaluate without error; the panels in SHOWS_DATA must return data from this run.
// Negative controls: a misspelt metric name fails both checks.
//   node --import tsx --test test/helm/dashboard.test.ts
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { ROOT } from '../deploy/support.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import {
  type AgentProcess,
  agentArgs,
  kmsg,
  marker,
  metricValue,
  startAgent,
  waitFor,
  writeConfig,
} from '../e2e/support.ts';
import {
  dashboardQueries,
  inputSeries,
  metricNames,
  parseExposition,
  type Query,
  type Scrape,
  substituteGrafanaVars,
} from './promql.ts';
import { runTool, shippedGroups, toolsOrSkip } from './support.ts';

const DASHBOARD = join(ROOT, 'deploy/components/metrics/dashboard/node-problem-detector.json');
/** Panels whose every query must return data from a healthy agent that saw one problem and synced. */
const SHOWS_DATA = [
  'Nodes with a problem condition',
  'Problems in the range',
  'Problem counts by reason',
  'Conditions per node',
  'Problems and undecided conditions now',
  'Problems over time by node and reason',
  'Agents scraped',
  'Log lines read',
  'Events written',
  'Node sync latency',
  'Agent CPU',
  'Agent memory',
];

const { tools, skip: toolSkip } = await toolsOrSkip();
const harness = toolSkip ? undefined : await import('../e2e/harness/controlplane.ts').catch(() => undefined);
const skip = toolSkip || (harness ? false : 'control-plane harness unavailable');

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
const queries = (): Query[] => [
  ...dashboardQueries(dashboard).map((q) => ({ ...q, expr: substituteGrafanaVars(q.expr) })),
  ...shippedGroups().flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
];
const mustShowData = (q: Query) => SHOWS_DATA.some((t) => q.where.startsWith(`panel "${t}"`));

/** Names a query selects that the scrape does not declare (`up` is Prometheus's own, per target). */
const unknownNames = (q: Query, scrape: Scrape) =>
  metricNames(q.expr).filter((n) => n !== 'up' && !scrape.families.has(n));

describe('dashboard and alert queries on the real agent’s series', { skip }, () => {
  let cp: ControlPlane;
  let agent: AgentProcess;
  const dir = mkdtempSync(join(tmpdir(), 'npd-dashboard-'));
  const scrapes: Scrape[] = [];

  before(
    async () => {
      cp = await harness!.startControlPlane();
      const mark = marker('dash');
      const { configs, logFile } = monitorConfigs(dir, mark);
      agent = await startAgent(
        [
          ...agentArgs(cp.agentKubeconfig, cp.nodeName, configs),
          `--config.probe-monitor=${join(ROOT, 'rules/probes.yaml')}`,
        ],
        { KUBECONFIG: '' },
      );
      const synced = async () =>
        ((await metricValue(agent.metricsUrl, 'npd_condition_sync_total{result="success"}')) ?? 0) >= 1;
      await waitFor(synced, 30_000, agent.output);
      scrapes.push(await scrape(agent, join(dir, 'scrape-0.txt')));
      // Two rounds: a series that first appears after a round still has two samples for rate().
      for (const round of [1, 2]) {
        kmsg(`${mark} event ${round}`, `${mark} stuck ${round}`);
        writeFileSync(logFile, `${new Date().toISOString()} an application line\n`, { flag: 'a' });
        await waitFor(() => recorded(round), 30_000, agent.output);
        scrapes.push(await scrape(agent, join(dir, `scrape-${round}.txt`)));
      }
    },
    { timeout: 60 * 60_000 },
  );

  /** The agent counted `n` marked problems, holds the condition, and wrote `n` events. */
  async function recorded(n: number): Promise<boolean> {
    const text = await (await fetch(agent.metricsUrl)).text();
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
    return (
      value(/^problem_counter\{reason="DashboardEvent"\} (\S+)/m) >= n &&
      value(/^problem_gauge\{type="DashboardProblem",reason="DashboardStuck"\} (\S+)/m) === 1 &&
      value(/^npd_events_written_total\{source="dashboard-kmsg",verb="create"\} (\S+)/m) >= n
    );
  }

  after(async () => {
    const code = await agent?.stop();
    await cp?.stop({ failed: code !== 0 });
    rmSync(dir, { recursive: true, force: true });
  });

  test('the dashboard has the panels the issue asks for', () => {
    const all = queries();
    assert.ok(all.length >= 20, `${all.length} queries`);
    for (const t of SHOWS_DATA)
      assert.ok(
        all.some((q) => q.where.startsWith(`panel "${t}"`)),
        t,
      );
  });

  test('every panel selector filters by the cluster and job variables; stat panels have thresholds', () => {
    const unfiltered = dashboardQueries(dashboard)
      .filter((q) => q.where.startsWith('panel'))
      .flatMap((q) => {
        const selectors = [...q.expr.matchAll(/[a-zA-Z_:][\w:]*\{([^}]*)\}/g)].map((m) => m[1] ?? '');
        const bare = metricNames(q.expr).length - selectors.length;
        return selectors
          .filter((s) => !s.includes('cluster=~"$cluster"') || !s.includes('job=~"$job"'))
          .map((s) => `${q.where}: {${s}}`)
          .concat(bare > 0 ? [`${q.where}: ${bare} selector(s) without labels`] : []);
      });
    assert.deepEqual(unfiltered, []);
    const names = dashboard.templating.list.map((v: { name: string }) => v.name);
    for (const v of ['cluster', 'job', 'node']) assert.ok(names.includes(v), `variable $${v}`);
    const stats = panels(dashboard.panels).filter((p) => p.type === 'stat');
    assert.ok(stats.length >= 3);
    for (const p of stats) {
      const steps = p.fieldConfig?.defaults?.thresholds?.steps ?? [];
      assert.ok(steps.length >= 2, `panel "${p.title}" has thresholds`);
    }
  });

  test('Agent CPU and memory show the agent, not the kubelet scraped with the same node label', async () => {
    const at = scrapes.length - 1;
    const rss = Number(scrapes.at(-1)!.samples.get('process_resident_memory_bytes'));
    const panel = (t: string) => queries().find((q) => q.where === `panel "${t}" target 0`)!.expr;
    const agentCpu = 'sum by (node) (rate(process_cpu_seconds_total{job="node-problem-detector"}[2m]))';
    const node = `{node="${cp.nodeName}"}`;
    // The test above fails when the variable is missing; here its values must be the agent's job only.
    const jobVariable = queries().find((q) => q.where === 'variable $job')?.expr;
    const r = await promtoolQueries(
      [],
      [
        // The panel's rate minus the agent's own: 0 only if the kubelet's 1 core/s is not in it.
        {
          expr: `${panel('Agent CPU')} - on (node) ${agentCpu}`,
          eval_time: `${at}m`,
          exp_samples: [{ labels: node, value: 0 }],
        },
        { expr: panel('Agent memory'), eval_time: `${at}m`, exp_samples: [{ labels: node, value: rss }] },
        { expr: panel('Agents scraped'), eval_time: `${at}m`, exp_samples: [{ labels: '{}', value: 1 }] },
        ...(jobVariable
          ? [
              {
                expr: `count by (job) (${jobVariable})`,
                eval_time: `${at}m`,
                exp_samples: [{ labels: '{job="node-problem-detector"}', value: 1 }],
              },
            ]
          : []),
      ],
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.ok(rss > 0 && rss < KUBELET_RSS, 'the agent and the kubelet differ');
  });

  test('every query names only metrics the agent exposes', () => {
    const missing = queries().flatMap((q) => unknownNames(q, scrapes.at(-1)!).map((n) => `${q.where}: ${n}`));
    assert.deepEqual(missing, []);
  });

  test('promtool evaluates every query on the scraped series; the SHOWS_DATA panels return data', async () => {
    const r = await promtoolQueries(queries());
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  });

  test('control: a misspelt metric name fails both checks; a broken expression fails evaluation', async () => {
    const bad = {
      where: 'panel "Log lines read" target 0',
      expr: 'sum by (node) (rate(npd_log_line_read_total[2m]))',
    };
    assert.deepEqual(unknownNames(bad, scrapes.at(-1)!), ['npd_log_line_read_total']);
    const r = await promtoolQueries([bad]);
    assert.notEqual(r.code, 0, 'a query on a metric the agent does not expose returns nothing');
    assert.match(r.stdout + r.stderr, /FAILED/);
    const broken = await promtoolQueries([{ where: 'alert X', expr: 'sum by (node (npd_monitor_up)' }]);
    assert.notEqual(broken.code, 0, 'an expression that does not parse fails even where no data is required');
  });

  /**
   * One promql_expr_test per query, evaluated at the last scrape (scrapes are 1 m apart), plus `extra`
   * tests. The kubelet is scraped too, with the same node label (as under Prometheus Operator), and uses
   * far more CPU and memory than the agent.
   */
  async function promtoolQueries(qs: readonly Query[], extra: readonly object[] = []) {
    const labels = { job: 'node-problem-detector', instance: '127.0.0.1:20257', node: cp.nodeName };
    const up = {
      series: `up{job="node-problem-detector",instance="127.0.0.1:20257",node="${cp.nodeName}"}`,
      values: '1 1',
    };
    const n = scrapes.length - 1;
    const kubelet = (name: string, values: string) => ({
      series: `${name}{job="kubelet",instance="10.0.0.1:10250",metrics_path="/metrics",node="${cp.nodeName}"}`,
      values,
    });
    const kubeletSeries = [
      kubelet('up', `1x${n}`),
      kubelet('process_cpu_seconds_total', `0+60x${n}`),
      kubelet('process_resident_memory_bytes', `${KUBELET_RSS}x${n}`),
    ];
    const tests = qs.map((q) => ({
      // Data: count(Q) > 0 -> 1, none -> 0. Otherwise only errors fail: the result is 1 either way.
      expr: mustShowData(q)
        ? `(count(${q.expr}) > bool 0) or vector(0)`
        : `(count(${q.expr}) >= bool 0) or vector(1)`,
      eval_time: `${scrapes.length - 1}m`,
      exp_samples: [{ labels: '{}', value: 1 }],
    }));
    const file = join(dir, 'queries.test.yaml');
    writeFileSync(
      file,
      stringify({
        rule_files: [],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: [...inputSeries(scrapes, labels), up, ...kubeletSeries],
            promql_expr_test: [...tests, ...extra],
          },
        ],
      }),
    );
    return runTool(tools!.promtool, ['test', 'rules', file]);
  }
});

const KUBELET_RSS = 4e9;

interface DashboardPanel {
  type: string;
  title?: string;
  panels?: DashboardPanel[];
  fieldConfig?: { defaults?: { thresholds?: { steps?: unknown[] } } };
}

const panels = (list: DashboardPanel[]): DashboardPanel[] =>
  list.flatMap((p) => [p, ...panels(p.panels ?? [])]);

async function scrape(agent: AgentProcess, file: string): Promise<Scrape> {
  const text = await (await fetch(agent.metricsUrl)).text();
  writeFileSync(file, text);
  return parseExposition(text);
}

/** A kmsg monitor with rules on `mark` only (other tests share /dev/kmsg), and a filelog monitor. */
function monitorConfigs(dir: string, mark: string): { configs: string[]; logFile: string } {
  const kmsgConfig = writeConfig(dir, 'dash-kmsg.yaml', [
    'plugin: kmsg',
    'logPath: /dev/kmsg',
    'lookback: 0s',
    'source: dashboard-kmsg',
    'conditions:',
    '  - { type: DashboardProblem, reason: NoDashboardProblem, message: fine }',
    'rules:',
    `  - { type: temporary, reason: DashboardEvent, pattern: '${mark} event.*' }`,
    `  - { type: permanent, condition: DashboardProblem, reason: DashboardStuck, pattern: '${mark} stuck.*' }`,
  ]);
  const logFile = join(dir, 'app.log');
  writeFileSync(logFile, '');
  const filelog = writeConfig(dir, 'dash-filelog.json', [
    JSON.stringify({
      plugin: 'filelog',
      pluginConfig: {
        timestamp: '^(\\S+)',
        message: '^\\S+ (.*)$',
        timestampFormat: '2006-01-02T15:04:05Z07:00',
      },
      logPath: logFile,
      lookback: '0s',
      bufferSize: 10,
      source: 'dashboard-filelog',
      conditions: [],
      rules: [{ type: 'temporary', reason: 'DashboardFileEvent', pattern: 'never matches this.*' }],
    }),
  ]);
  return { configs: [kmsgConfig, filelog], logFile };
}
