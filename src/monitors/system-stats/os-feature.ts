import { join } from 'node:path';
import { readText } from '../../host/procfs/proc.ts';
import {
  gaugeSpec,
  type Labels,
  type MetricSpec,
  type StatsCollector,
  type StatsEnv,
  sectionMetrics,
} from './common.ts';
import type { MetricIdOf, SystemStatsConfig } from './schema.ts';

type OsFeatureId = MetricIdOf<'osFeature'>;

const OS_FEATURE_SPECS: Readonly<Record<OsFeatureId, MetricSpec>> = {
  'system/os_feature': gaugeSpec(
    'OS Features like GPU support, KTD kernel, third party modules as unknown modules. 1 if the feature is enabled and 0, if disabled.',
    'os_feature',
    'value',
  ),
};

/**
 * Kernel command line arguments, split as NPD does: on spaces outside double quotes, words that start
 * with a quote skipped, the value being the text between the first and second `=` without quotes.
 */
export function parseCmdline(text: string): ReadonlyMap<string, string> {
  const words: string[] = [];
  let word = '';
  let quoted = false;
  for (const ch of text.split('\n')[0] ?? '') {
    if (ch === '"') quoted = !quoted;
    if (ch === ' ' && !quoted) {
      if (word) words.push(word);
      word = '';
    } else {
      word += ch;
    }
  }
  if (word) words.push(word);
  const args = new Map<string, string>();
  for (const w of words) {
    if (w.startsWith('"')) continue;
    const [key = '', value = ''] = w.split('=');
    args.set(key, value.replace(/^["']+|["']+$/g, ''));
  }
  return args;
}

/** Go's strconv.ParseInt with the error ignored, as NPD reads these flags: anything else is 0. */
function flag(args: ReadonlyMap<string, string>, key: string): number {
  const value = args.get(key) ?? '';
  return /^[+-]?\d+$/.test(value) ? Number(value) : 0;
}

export interface KernelModule {
  readonly name: string;
  /** Taint flags P (proprietary) or O (out of tree), from the last column of /proc/modules. */
  readonly thirdParty: boolean;
}

/** /proc/modules: "name size instances deps state offset [(taints)]". */
export function parseModules(text: string): KernelModule[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[0])
    .map((fields) => ({ name: fields[0] ?? '', thirdParty: /[PO]/.test(fields[6] ?? '') }));
}

/** The features NPD derives from the kernel command line and the loaded modules. */
export function osFeatureRows(
  args: ReadonlyMap<string, string>,
  modules: readonly KernelModule[],
  known: ReadonlySet<string>,
): [Labels, number][] {
  const integrity = flag(args, 'module.sig_enforce') === 1 && flag(args, 'loadpin.enabled') === 1;
  // GPU drivers are out of tree too, but NPD reports them as GPUSupport rather than as unknown.
  const gpu = modules.some((m) => m.name.includes('nvidia'));
  const unknown = modules.filter((m) => !m.name.includes('nvidia') && m.thirdParty && !known.has(m.name));
  return [
    [{ os_feature: 'KTD' }, flag(args, 'csm.enabled')],
    [{ os_feature: 'UnifiedCgroupHierarchy' }, flag(args, 'systemd.unified_cgroup_hierarchy')],
    [{ os_feature: 'KernelModuleIntegrity' }, integrity ? 1 : 0],
    unknown.length > 0
      ? [{ os_feature: 'UnknownModules', value: unknown.map((m) => m.name).join(',') }, 1]
      : [{ os_feature: 'UnknownModules' }, 0],
    [{ os_feature: 'GPUSupport' }, gpu ? 1 : 0],
  ];
}

/** known-modules.json: [{"moduleName": "..."}]. */
export function parseKnownModules(text: string): Set<string> {
  const list: unknown = JSON.parse(text);
  if (!Array.isArray(list)) throw new Error('expected a JSON array of {"moduleName": ...}');
  const names = list.map((entry: unknown) =>
    typeof entry === 'object' && entry !== null ? (entry as { moduleName?: unknown }).moduleName : undefined,
  );
  return new Set(names.filter((n): n is string => typeof n === 'string'));
}

/** As NPD: without the list every third-party module counts as unknown. The failure is still counted. */
async function readKnownModules(path: string, env: StatsEnv): Promise<Set<string>> {
  try {
    return parseKnownModules(await readText(path));
  } catch (err) {
    env.fail(new Error(`known modules ${path}: ${err instanceof Error ? err.message : String(err)}`));
    return new Set();
  }
}

/** NPD's os-feature collector: /proc/cmdline and /proc/modules against the known-modules list. */
export function createOsFeatureCollector(
  config: SystemStatsConfig,
  env: StatsEnv,
): StatsCollector | undefined {
  const m = sectionMetrics(env, config.osFeature.metrics, OS_FEATURE_SPECS);
  if (!m) return undefined;
  return {
    name: 'os-feature',
    async collect() {
      // The list first: its failure is recorded even when a /proc read below fails too.
      const known = await readKnownModules(config.osFeature.knownModulesPath, env);
      const [cmdline, modules] = await Promise.all([
        readText(join(env.proc, 'cmdline')),
        readText(join(env.proc, 'modules')),
      ]);
      const rows = osFeatureRows(parseCmdline(cmdline), parseModules(modules), known);
      m.gauge('system/os_feature')?.replace(rows);
    },
    dispose: () => m.dispose(),
  };
}
