/**
 * Event storm against a real kube-apiserver: the bundled agent reports to the e2e control plane while
 * `lines` matching kernel lines, each with its own message, arrive within `seconds`. The apiserver's
 * audit log counts the writes independently of the agent; the agent's metrics say where the rest went.
 * test/e2e/agent-storm.test.ts asserts the identical-line case; this prints the numbers.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AGENT_USER,
  type AuditMark,
  type ControlPlane,
  startControlPlane,
} from '../e2e/harness/controlplane.ts';
import { waitFor } from '../support/agent-process.ts';
import { type BuiltAgent, scrape, startBuilt, sum } from './built-agent.ts';
import { withMarkerRule } from './kmsg-flood.bench.ts';
import { runWriter } from './kmsg-writer.ts';
import { formatUsage, loadNote, measure } from './proc.ts';

export interface StormOptions {
  readonly lines: number;
  readonly seconds: number;
}

const REASON = 'StormLine';

/** Waits until the agent's event counters for `source` have not moved for 10 s. */
export async function settle(
  agent: Pick<BuiltAgent, 'metricsUrl' | 'output'>,
  source: string,
): Promise<void> {
  let last = '';
  let stableSince = Date.now();
  await waitFor(
    async () => {
      const m = await scrape(agent.metricsUrl);
      const now = ['npd_events_recorded_total', 'npd_events_written_total', 'npd_events_spam_filtered_total']
        .map((n) => sum(m, n, `source="${source}"`))
        .join(',');
      if (now !== last) stableSince = Date.now();
      last = now;
      return Date.now() - stableSince >= 10_000;
    },
    300_000,
    agent.output,
  );
}

export async function stormBench(opts: StormOptions): Promise<void> {
  const cp = await startControlPlane();
  const marker = `npdstorm${randomBytes(4).toString('hex')}`;
  const source = `${marker}-monitor`;
  const config = join(mkdtempSync(join(tmpdir(), 'npd-bench-storm-')), 'storm.yaml');
  writeFileSync(config, withMarkerRule(`plugin: kmsg\nsource: ${source}\nrules:\n`, marker, REASON));
  const agent = await startBuilt([
    `--kubeconfig=${cp.agentKubeconfig}`,
    `--hostname-override=${cp.nodeName}`,
    `--config.system-log-monitor=${config}`,
  ]);
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const mark = cp.auditMark();
    const started = Date.now();
    const [usage] = await Promise.all([
      measure(agent.pid, opts.seconds * 1000),
      // The kmsg writer with only marked lines: each due at an even spacing over `seconds`.
      runWriter({ rate: 0, seconds: opts.seconds, marks: opts.lines }, marker),
    ]);
    await settle(agent, source);
    await report(cp, agent, { mark, source, started, usage, opts });
  } finally {
    const code = await agent.stop();
    await cp.stop({ failed: code !== 0 });
  }
}

interface StormRun {
  mark: ReturnType<ControlPlane['auditMark']>;
  source: string;
  started: number;
  usage: Awaited<ReturnType<typeof measure>>;
  opts: StormOptions;
}

async function report(cp: ControlPlane, agent: BuiltAgent, r: StormRun): Promise<void> {
  const m = await scrape(agent.metricsUrl);
  const s = `source="${r.source}"`;
  console.log(`## Event storm: ${r.opts.lines} matching lines (distinct messages) in ${r.opts.seconds} s`);
  console.log(`agent during the storm: ${formatUsage(r.usage)}`);
  console.log(
    `agent: lines read ${sum(m, 'npd_log_lines_read_total', s)}, lost ${sum(m, 'npd_kmsg_records_lost_total', s)}, problem_counter ${sum(m, 'problem_counter', `reason="${REASON}"`)}`,
  );
  await printEventWrites(cp, (name, ...labels) => sum(m, name, ...labels), {
    source: r.source,
    mark: r.mark,
  });
  console.log(
    `settled ${((Date.now() - r.started) / 1000).toFixed(0)} s after the storm began (${loadNote()})`,
  );
}

/** An agent counter: its value for a fresh agent, or how much it grew over a phase. */
export type Counter = (name: string, ...labels: string[]) => number;

export interface EventScope {
  /** The monitor's source, as the event metrics and Event.source.component name it. */
  readonly source: string;
  /** The audit log is counted from here. */
  readonly mark: AuditMark;
  /** Only Event objects whose message contains this are counted on the server. */
  readonly messageIncludes?: string;
  /** Whose writes the audit log counts; default AGENT_USER, the harness's kubeconfig user. */
  readonly user?: string;
}

/** The agent's event pipeline counters, the apiserver's audit count of its writes and the Events stored. */
export async function printEventWrites(cp: ControlPlane, c: Counter, scope: EventScope): Promise<void> {
  const s = `source="${scope.source}"`;
  const user = scope.user ?? AGENT_USER;
  const audit = (verb: string) => cp.countAudit({ user, resource: 'events', verb }, scope.mark);
  const list = (await cp.request('GET', '/api/v1/namespaces/default/events')).json as {
    items: { source?: { component?: string }; count?: number; message: string }[];
  };
  const ours = list.items.filter(
    (e) => e.source?.component === scope.source && e.message.includes(scope.messageIncludes ?? ''),
  );
  const countSum = ours.reduce((n, e) => n + (e.count ?? 1), 0);
  const aggregates = ours.filter((e) => e.message.startsWith('(combined from similar events)'));
  console.log(
    `events: recorded ${c('npd_events_recorded_total', s)}, aggregated ${c('npd_events_aggregated_total', s)}, spam-filtered ${c('npd_events_spam_filtered_total', s)}, written create ${c('npd_events_written_total', s, 'verb="create"')} / patch ${c('npd_events_written_total', s, 'verb="patch"')}, retries ${c('npd_events_retries_total', s)}, given up ${c('npd_events_given_up_total', s)}`,
  );
  console.log(
    `queue drops (npd_events_dropped_total): ${c('npd_events_dropped_total', s)} (incoming ${c('npd_events_dropped_total', s, 'point="incoming"')}, watcher api ${c('npd_events_dropped_total', s, 'point="watcher"', 'watcher="api"')}, watcher log ${c('npd_events_dropped_total', s, 'point="watcher"', 'watcher="log"')}, watcher structured-log ${c('npd_events_dropped_total', s, 'point="watcher"', 'watcher="structured-log"')})`,
  );
  console.log(
    `apiserver audit log (${user}, events): create ${audit('create')}, patch ${audit('patch')}, all verbs ${cp.countAudit({ user, resource: 'events' }, scope.mark)}; nodes/status patches ${cp.countAudit({ user, resource: 'nodes', subresource: 'status', verb: 'patch' }, scope.mark)}`,
  );
  console.log(
    `on the server: ${ours.length} Event objects from ${scope.source}${scope.messageIncludes ? ` with "${scope.messageIncludes}"` : ''}, ${aggregates.length} of them aggregates, sum of count ${countSum}`,
  );
}
