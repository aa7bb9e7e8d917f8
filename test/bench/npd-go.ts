/**
 * The real node-problem-detector (Go, v1.36.0), built once into .cache by test/tools/npd/build.sh, run
 * beside this agent by the side-by-side benchmark with the same flags and NPD's own shipped configs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort, REPO } from '../support/agent-process.ts';
import { spawnWatched, type WatchedProcess } from './built-agent.ts';

export interface NpdBuild {
  readonly binary: string;
  /** NPD's module source: config/kernel-monitor.json and the rest of its shipped configs. */
  readonly source: string;
}

/** Runs the build script (a no-op once built) and returns where the binary and its sources are. */
export function npdBuild(): NpdBuild {
  const out = execFileSync('bash', [join(REPO, 'test', 'tools', 'npd', 'build.sh')], {
    cwd: REPO,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/local/go/bin` },
  });
  const binary = /^NPD=(.+)$/m.exec(out)?.[1];
  if (!binary || !existsSync(binary))
    throw new Error(`test/tools/npd/build.sh printed no NPD=<path>: ${out}`);
  const source = join(dirname(binary), 'src');
  if (!existsSync(join(source, 'config', 'kernel-monitor.json')))
    throw new Error(`${source}: no config/kernel-monitor.json (remove ${dirname(binary)} to rebuild)`);
  return { binary, source };
}

export interface NpdProcess extends WatchedProcess {
  readonly statusUrl: string;
  readonly metricsUrl: string;
}

/**
 * Spawns NPD on two free loopback ports without waiting. Standalone (--enable-k8s-exporter=false) NPD
 * serves only /metrics: its /healthz and /conditions belong to the k8s exporter.
 */
export async function spawnNpd(build: NpdBuild, args: readonly string[]): Promise<NpdProcess> {
  const [port, promPort] = [await freePort(), await freePort()];
  return {
    ...spawnWatched(build.binary, [`--port=${port}`, `--prometheus-port=${promPort}`, ...args]),
    statusUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${promPort}/metrics`,
  };
}

/** How often NPD's kmsg watcher logged that its reader stopped and it started a new one. */
export function npdKmsgRestarts(output: string): number {
  return output.split('Kmsg channel closed, attempting to restart kmsg parser').length - 1;
}
