/**
 * NPD and this agent started side by side with the same flags and NPD's own kernel-monitor.json,
 * unchanged, reading the same /dev/kmsg; and what the side-by-side benchmark reads from each.
 */
import { join } from 'node:path';
import { freePort } from '../support/agent-process.ts';
import {
  agentNode,
  type BuiltAgent,
  msToFirstOk,
  scrape,
  shippedNodeFlags,
  spawnBuilt,
  spawnWatched,
  sum,
} from './built-agent.ts';
import { type NpdBuild, type NpdProcess, spawnNpd } from './npd-go.ts';
import { statusKiB } from './proc.ts';

/** The kernel-monitor.json rule the marked lines match: `Killed process \d+ (.+) total-vm:...`. */
export const MARK_REASON = 'OOMKilling';

export interface Pair {
  readonly npd: NpdProcess;
  readonly ours: BuiltAgent;
}

export function kernelMonitorJson(build: NpdBuild): string {
  return join(build.source, 'config', 'kernel-monitor.json');
}

/** NPD's standalone flags; this agent takes the same ones. */
export function standaloneArgs(build: NpdBuild): string[] {
  return [
    '--enable-k8s-exporter=false',
    `--config.system-log-monitor=${kernelMonitorJson(build)}`,
    '--address=127.0.0.1',
    '--prometheus-address=127.0.0.1',
  ];
}

/** Spawns both at once (this agent with the DaemonSet's NODE_OPTIONS) and waits for both /metrics. */
export async function startPair(
  build: NpdBuild,
  args: { readonly npd: readonly string[]; readonly ours: readonly string[] },
): Promise<Pair> {
  const npd = await spawnNpd(build, args.npd);
  const ours = await spawnBuilt(args.ours, { nodeFlags: shippedNodeFlags() });
  try {
    await Promise.all([msToFirstOk(npd, npd.metricsUrl), msToFirstOk(ours, ours.metricsUrl)]);
  } catch (err) {
    await stopPair({ npd, ours });
    throw err;
  }
  return { npd, ours };
}

export async function stopPair(pair: Pair): Promise<void> {
  await Promise.all([pair.npd.stop(), pair.ours.stop()]);
}

/**
 * The runtime's own floor: the agent's node binary and flags running nothing but a node:http server
 * that answers 200. No Node process can reach its first 200 sooner, whatever the agent does at start.
 */
const FLOOR_SERVER =
  "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

async function floorMs(): Promise<number> {
  const port = await freePort();
  const bare = spawnWatched(agentNode(), [...shippedNodeFlags(), '-e', FLOOR_SERVER], {
    env: { PORT: String(port) },
  });
  return msToFirstOk(bare, `http://127.0.0.1:${port}/`).finally(() => bare.stop());
}

export interface StartupTimes {
  readonly npd: number[];
  readonly ours: number[];
  /** The same timer on a bare node:http server with the agent's binary and flags. */
  readonly floor: number[];
}

/** Spawn to first 200 on /metrics, `runs` times each, one process at a time, alternating. */
export async function startupTimes(build: NpdBuild, runs: number): Promise<StartupTimes> {
  const out: StartupTimes = { npd: [], ours: [], floor: [] };
  const args = standaloneArgs(build);
  for (let i = 0; i < runs; i++) {
    const npd = await spawnNpd(build, args);
    out.npd.push(await msToFirstOk(npd, npd.metricsUrl).finally(() => npd.stop()));
    const ours = await spawnBuilt(args, { nodeFlags: shippedNodeFlags() });
    out.ours.push(await msToFirstOk(ours, ours.metricsUrl).finally(() => ours.stop()));
    out.floor.push(await floorMs());
  }
  return out;
}

/** The Prometheus samples of both, read at the same moment. */
export interface PairSamples {
  readonly npd: Map<string, number>;
  readonly ours: Map<string, number>;
}

export async function scrapePair(pair: Pair): Promise<PairSamples> {
  const [npd, ours] = await Promise.all([scrape(pair.npd.metricsUrl), scrape(pair.ours.metricsUrl)]);
  return { npd, ours };
}

/** The growth of `name{labels}` in each between two readings. */
export function pairDelta(
  before: PairSamples,
  after: PairSamples,
  name: string,
  ...labels: string[]
): { npd: number; ours: number } {
  const d = (side: 'npd' | 'ours') => sum(after[side], name, ...labels) - sum(before[side], name, ...labels);
  return { npd: d('npd'), ours: d('ours') };
}

/** Distinct marked OOM lines a process logged (NPD: "New status generated", this agent: "Event occurred"). */
export function markedInLog(output: string, marker: string): number {
  const seen = new Set<string>();
  for (const m of output.matchAll(new RegExp(`Killed process (\\d+) \\(${marker}\\)`, 'g')))
    seen.add(m[1] as string);
  return seen.size;
}

export function rssSplit(pid: number): { anon: number; file: number } {
  return { anon: statusKiB(pid, 'RssAnon'), file: statusKiB(pid, 'RssFile') };
}
