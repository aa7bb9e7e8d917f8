/**
 * Shared pieces of the fault suite: monitor configs, reads of the Node and its Events, metric scraping,
 * bounded waits, and the accounting every fault test checks (each recorded event is written,
 * spam-filtered, given up or dropped, and each of those is a metric). The fault proxy lives in
 * fault-proxy.ts, the before/after hooks that start everything in suite.ts; both are re-exported here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { scrape, sum } from '../bench/built-agent.ts';
import type { ControlPlane } from '../e2e/harness/controlplane.ts';
import { type AgentProcess, marker, waitFor, writeConfig } from '../e2e/support.ts';

export { scrape, sum } from '../bench/built-agent.ts';
export { AGENT_USER, type ControlPlane } from '../e2e/harness/controlplane.ts';
export * from '../e2e/support.ts';
export * from './fault-proxy.ts';
export * from './suite.ts';

/** A fresh marker `id` for a test's log lines, the monitor `source` and a condition type named after it. */
export function markedNames(prefix: string, conditionPrefix = 'Problem') {
  const id = marker(prefix);
  return { id, source: `${id}-monitor`, condition: `${conditionPrefix}${id}` };
}

/** A monitor config file (written as YAML) in `dir`. */
export function writeMonitor(dir: string, name: string, config: Readonly<Record<string, unknown>>): string {
  return writeConfig(dir, name, [stringify(config).trimEnd()]);
}

/** A condition a monitor declares, in the state it starts in. */
export function initialCondition(type: string, reason: string, message = 'fine') {
  return { type, reason, message };
}

/** A rule that sets `condition` when a line matches `pattern`. */
export function permanentRule(condition: string, reason: string, pattern: string) {
  return { type: 'permanent', condition, reason, pattern };
}

/** A rule that reports an Event when a line matches `pattern`. */
export function temporaryRule(reason: string, pattern: string) {
  return { type: 'temporary', reason, pattern };
}

/**
 * Where every event a recorder accepted for `source` went, once the pipeline has settled. The API
 * watcher correlates each one and then writes it (create or patch), spam-filters it, gives up on it, or
 * it was dropped from the API watcher's queue: these must add up to what was recorded.
 */
export interface EventAccount {
  recorded: number;
  written: number;
  spamFiltered: number;
  givenUp: number;
  droppedApi: number;
  droppedBeforeRecorder: number;
}

export async function eventAccount(metricsUrl: string, source: string): Promise<EventAccount> {
  const m = await scrape(metricsUrl);
  const s = `source="${source}"`;
  return {
    recorded: sum(m, 'npd_events_recorded_total', s),
    written: sum(m, 'npd_events_written_total', s),
    spamFiltered: sum(m, 'npd_events_spam_filtered_total', s),
    givenUp: sum(m, 'npd_events_given_up_total', s),
    droppedApi: sum(m, 'npd_events_dropped_total', s, 'watcher="api"'),
    droppedBeforeRecorder:
      sum(m, 'npd_events_dropped_total', s, 'point="awaiting_node_uid"') +
      sum(m, 'npd_events_dropped_total', s, 'point="incoming"'),
  };
}

export function accounted(a: EventAccount): boolean {
  return a.recorded === a.written + a.spamFiltered + a.givenUp + a.droppedApi;
}

/** Waits (bounded) until every event of `source` is accounted for, then returns the account. */
export async function settledAccount(
  agent: AgentProcess,
  source: string,
  ms = 60_000,
): Promise<EventAccount> {
  await waitFor(async () => accounted(await eventAccount(agent.metricsUrl, source)), ms, agent.output);
  return eventAccount(agent.metricsUrl, source);
}

export interface EventJson {
  metadata: { name: string };
  reason: string;
  message: string;
  count?: number;
  source?: { component?: string };
  involvedObject: { uid?: string; name: string };
}

/** Core/v1 Events of one source in the default namespace, read as admin. */
export async function eventsOf(cp: ControlPlane, source: string): Promise<EventJson[]> {
  const r = await cp.request('GET', '/api/v1/namespaces/default/events');
  const items = (r.json as { items?: EventJson[] } | undefined)?.items ?? [];
  return items.filter((e) => e.source?.component === source);
}

export async function nodeCondition(
  cp: ControlPlane,
  type: string,
): Promise<{ status: string; reason?: string; message?: string } | undefined> {
  const r = await cp.request('GET', `/api/v1/nodes/${cp.nodeName}`);
  const conditions = (r.json as { status?: { conditions?: { type: string; status: string }[] } }).status
    ?.conditions;
  return conditions?.find((c) => c.type === type);
}

/** The sum of one metric's series (those with all of `labels`) on the agent's metrics endpoint. */
export async function metricOf(agent: AgentProcess, name: string, ...labels: string[]): Promise<number> {
  return sum(await scrape(agent.metricsUrl), name, ...labels);
}

/** The HTTP status of the agent's /healthz. */
export async function healthz(agent: AgentProcess): Promise<number> {
  return (await fetch(`${agent.statusUrl}/healthz`)).status;
}

/** An agent and the control plane it reports to; the waits below show the agent's log when they give up. */
export interface Target {
  readonly cp: ControlPlane;
  readonly agent: AgentProcess;
}

/**
 * Waits (bounded) until the Node's condition `type` has `status`. The default outlasts the condition
 * manager's longest retry wait (40 s stretched by up to half: resyncPolicy), which follows an outage.
 */
export function untilCondition(t: Target, type: string, status: string, ms = 90_000): Promise<void> {
  return waitFor(async () => (await nodeCondition(t.cp, type))?.status === status, ms, t.agent.output);
}

/** Waits (bounded) until an Event of `source` with `reason` exists. */
export function untilEvent(t: Target, source: string, reason: string, ms = 60_000): Promise<void> {
  return waitFor(
    async () => (await eventsOf(t.cp, source)).some((e) => e.reason === reason),
    ms,
    t.agent.output,
  );
}

/** Pids of the processes whose command line contains `text` (e.g. a test's script directory). */
export function processesMentioning(text: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}
