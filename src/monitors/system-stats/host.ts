import { join } from 'node:path';
import { errorCode } from '../../core/errors.ts';
import { readText } from '../../host/procfs/proc.ts';
import {
  gaugeSpec,
  type MetricSpec,
  num,
  type StatsCollector,
  type StatsEnv,
  sectionMetrics,
} from './common.ts';
import type { MetricIdOf, SystemStatsConfig } from './schema.ts';

type HostId = MetricIdOf<'host'>;

const HOST_SPECS: Readonly<Record<HostId, MetricSpec>> = {
  'host/uptime': gaugeSpec('The uptime of the operating system', 'kernel_version', 'os_version'),
};

/** Parses os-release(5): KEY=value lines, values optionally quoted with shell-style escapes. */
export function parseOsRelease(text: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z0-9_]+)=(.*?)\s*$/.exec(line);
    if (!m?.[1] || m[2] === undefined) continue;
    let value = m[2];
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.endsWith(quote) && value.length >= 2) {
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\(["\\`$])/g, '$1');
    }
    out.set(m[1], value);
  }
  return out;
}

/**
 * NPD's os_version label: "cos VERSION-BUILD_ID" on COS, "ID VERSION" elsewhere ("ubuntu 22.04.4 LTS
 * (Jammy Jellyfish)"). NPD refuses to start on IDs it does not list; any ID is accepted here.
 */
export function osVersion(release: ReadonlyMap<string, string>): string {
  const id = release.get('ID') ?? '';
  const version = release.get('VERSION') ?? release.get('VERSION_ID') ?? '';
  if (id === 'cos') return `${id} ${version}-${release.get('BUILD_ID') ?? ''}`;
  return `${id} ${version}`.trim();
}

/** An unreadable os-release is counted but does not cost the uptime: the label is left empty. */
async function readOsVersion(env: StatsEnv): Promise<string> {
  // os-release(5): /usr/lib/os-release is the fallback when /etc/os-release is absent.
  for (const path of [
    join(env.paths.root, 'etc', 'os-release'),
    join(env.paths.root, 'usr', 'lib', 'os-release'),
  ]) {
    try {
      return osVersion(parseOsRelease(await readText(path)));
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') {
        env.fail(err);
        return '';
      }
    }
  }
  env.fail(new Error('no /etc/os-release or /usr/lib/os-release'));
  return '';
}

/** NPD's host collector: uptime in whole seconds, labelled with the kernel release and OS version. */
export function createHostCollector(config: SystemStatsConfig, env: StatsEnv): StatsCollector | undefined {
  const m = sectionMetrics(env, config.host.metrics, HOST_SPECS);
  if (!m) return undefined;
  return {
    name: 'host',
    async collect() {
      // os-release first: its failure is recorded even when a /proc read below fails too.
      const os = await readOsVersion(env);
      const [uptimeText, kernel] = await Promise.all([
        readText(join(env.proc, 'uptime')),
        readText(join(env.proc, 'sys', 'kernel', 'osrelease')),
      ]);
      const uptime = Math.floor(num(uptimeText.trim().split(/\s+/)[0], '/proc/uptime'));
      m.gauge('host/uptime')?.replace([[{ kernel_version: kernel.trim(), os_version: os }, uptime]]);
    },
    dispose: () => m.dispose(),
  };
}
