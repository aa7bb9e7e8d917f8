import { basename, dirname, extname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import type { ConfigIssue } from '../../config/errors.ts';
import { formatPath } from '../../config/errors.ts';
import type { ConfigKind } from '../../config/load.ts';
import { deepFreeze, goDuration, isRecord, toConfigIssues } from '../../config/schema-kit.ts';
import { re2Pattern } from '../../rules/schema.ts';

/** NPD's metric IDs (pkg/util/metrics), by the config section that may enable them. */
export const STATS_METRIC_IDS = {
  cpu: [
    'cpu/runnable_task_count',
    'cpu/usage_time',
    'cpu/load_1m',
    'cpu/load_5m',
    'cpu/load_15m',
    'system/processes_total',
    'system/procs_running',
    'system/procs_blocked',
    'system/interrupts_total',
    'system/cpu_stat',
  ],
  disk: [
    'disk/io_time',
    'disk/weighted_io',
    'disk/avg_queue_len',
    'disk/operation_count',
    'disk/merged_operation_count',
    'disk/operation_bytes_count',
    'disk/operation_time',
    'disk/bytes_used',
    'disk/percent_used',
  ],
  host: ['host/uptime'],
  memory: [
    'memory/bytes_used',
    'memory/percent_used',
    'memory/anonymous_used',
    'memory/page_cache_used',
    'memory/unevictable_used',
    'memory/dirty_used',
  ],
  net: [
    'net/rx_bytes',
    'net/rx_packets',
    'net/rx_errors',
    'net/rx_dropped',
    'net/rx_fifo',
    'net/rx_frame',
    'net/rx_compressed',
    'net/rx_multicast',
    'net/tx_bytes',
    'net/tx_packets',
    'net/tx_errors',
    'net/tx_dropped',
    'net/tx_fifo',
    'net/tx_collisions',
    'net/tx_carrier',
    'net/tx_compressed',
  ],
  osFeature: ['system/os_feature'],
} as const;

export type StatsSection = keyof typeof STATS_METRIC_IDS;
export type MetricIdOf<S extends StatsSection> = (typeof STATS_METRIC_IDS)[S][number];
/** The metrics a section exports: NPD metric ID → Prometheus name. Unlisted IDs are not exported. */
export type MetricNames<S extends StatsSection> = Readonly<Partial<Record<MetricIdOf<S>, string>>>;

export interface SystemStatsConfig {
  readonly kind: 'system-stats';
  readonly file: string;
  /** NPD's system-stats JSON has no `source`; the file's base name stands in for logs and health. */
  readonly source: string;
  readonly invokeIntervalMs: number;
  /** As written; the monitor resolves it below the host root. */
  readonly procPath: string;
  readonly cpu: { readonly metrics: MetricNames<'cpu'> };
  readonly disk: {
    readonly metrics: MetricNames<'disk'>;
    readonly includeRootBlk: boolean;
    readonly includeAllAttachedBlk: boolean;
    /** Accepted and validated as NPD does, unused: block devices come from /sys/block, not lsblk. */
    readonly lsblkTimeoutMs: number;
  };
  readonly host: { readonly metrics: MetricNames<'host'> };
  readonly memory: { readonly metrics: MetricNames<'memory'> };
  /** `excludeInterfaceRegexp` is '' when every interface is reported. */
  readonly net: { readonly metrics: MetricNames<'net'>; readonly excludeInterfaceRegexp: string };
  /** `knownModulesPath` is resolved against the config file's directory, as NPD does. */
  readonly osFeature: { readonly metrics: MetricNames<'osFeature'>; readonly knownModulesPath: string };
}

const DEFAULT_KNOWN_MODULES = 'guestosconfig/known-modules.json';
const PROMETHEUS_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function metricsConfigs(section: StatsSection) {
  const known: readonly string[] = STATS_METRIC_IDS[section];
  return z
    .record(z.string(), z.strictObject({ displayName: z.string() }))
    .default({})
    .superRefine((configs, ctx) => {
      for (const id of Object.keys(configs)) {
        if (known.includes(id)) continue;
        ctx.addIssue({
          code: 'custom',
          path: [id],
          message: `unknown metric ID; one of: ${known.join(', ')}`,
        });
      }
    });
}

const statsSchema = z.strictObject({
  invokeInterval: goDuration.default(60_000),
  procPath: z.string().startsWith('/', 'must be an absolute path').default('/proc'),
  cpu: z.strictObject({ metricsConfigs: metricsConfigs('cpu') }).optional(),
  disk: z
    .strictObject({
      metricsConfigs: metricsConfigs('disk'),
      includeRootBlk: z.boolean().default(false),
      includeAllAttachedBlk: z.boolean().default(false),
      lsblkTimeout: goDuration.default(5_000),
    })
    .optional(),
  host: z.strictObject({ metricsConfigs: metricsConfigs('host') }).optional(),
  memory: z.strictObject({ metricsConfigs: metricsConfigs('memory') }).optional(),
  net: z
    .strictObject({ metricsConfigs: metricsConfigs('net'), excludeInterfaceRegexp: re2Pattern.default('') })
    .optional(),
  osFeature: z
    .strictObject({
      metricsConfigs: metricsConfigs('osFeature'),
      knownModulesConfigPath: z.string().min(1).optional(),
      // NPD's shipped file capitalises the key; Go's case-insensitive JSON decoding accepts it.
      KnownModulesConfigPath: z.string().min(1).optional(),
    })
    .optional(),
});

type ParsedStats = z.infer<typeof statsSchema>;
type Add = (path: PropertyKey[], message: string) => void;

/** Validates a system-stats-monitor config (NPD's JSON or our YAML) and returns it normalised and frozen. */
export function validateSystemStats(
  raw: unknown,
  file: string,
): { config?: SystemStatsConfig; issues: ConfigIssue[] } {
  const parsed = statsSchema.safeParse(raw);
  if (!parsed.success) return { issues: toConfigIssues(file, parsed.error) };
  const issues: ConfigIssue[] = [];
  crossCheck(parsed.data, (path, message) => issues.push({ file, path: formatPath(path), message }));
  if (issues.length > 0) return { issues };
  return { config: deepFreeze(normalise(parsed.data, file)), issues: [] };
}

/** NPD's own validation, plus Prometheus names that must be valid and distinct within the file. */
function crossCheck(v: ParsedStats, add: Add): void {
  if (v.invokeInterval <= 0) add(['invokeInterval'], 'must be above 0s');
  if (v.disk && v.disk.lsblkTimeout <= 0) add(['disk', 'lsblkTimeout'], 'must be above 0s');
  if (v.disk && v.disk.lsblkTimeout > v.invokeInterval) {
    add(['disk', 'lsblkTimeout'], 'must not be longer than invokeInterval (NPD rejects it)');
  }
  if (v.osFeature?.knownModulesConfigPath && v.osFeature.KnownModulesConfigPath) {
    add(['osFeature', 'KnownModulesConfigPath'], 'give knownModulesConfigPath only once');
  }
  const owners = new Map<string, string>();
  for (const section of Object.keys(STATS_METRIC_IDS) as StatsSection[]) {
    for (const [id, { displayName }] of Object.entries(v[section]?.metricsConfigs ?? {})) {
      if (displayName === '') continue;
      const path = [section, 'metricsConfigs', id, 'displayName'];
      const name = prometheusName(displayName);
      if (!PROMETHEUS_NAME.test(name)) {
        add(path, `"${displayName}" does not make a valid Prometheus metric name`);
        continue;
      }
      const owner = owners.get(name);
      if (owner) add(path, `exports the same Prometheus name "${name}" as ${owner}`);
      owners.set(name, id);
    }
  }
}

/** NPD's Prometheus exporter turns the displayName into the metric name by replacing `/` with `_`. */
export function prometheusName(displayName: string): string {
  return displayName.replaceAll('/', '_');
}

function names<S extends StatsSection>(
  configs: Readonly<Record<string, { displayName: string }>> | undefined,
): MetricNames<S> {
  const out: Record<string, string> = {};
  for (const [id, { displayName }] of Object.entries(configs ?? {})) {
    if (displayName !== '') out[id] = prometheusName(displayName);
  }
  return out as MetricNames<S>;
}

function normalise(v: ParsedStats, file: string): SystemStatsConfig {
  const modules =
    v.osFeature?.knownModulesConfigPath ?? v.osFeature?.KnownModulesConfigPath ?? DEFAULT_KNOWN_MODULES;
  return {
    kind: 'system-stats',
    file,
    source: basename(file, extname(file)),
    invokeIntervalMs: v.invokeInterval,
    procPath: v.procPath,
    cpu: { metrics: names<'cpu'>(v.cpu?.metricsConfigs) },
    disk: {
      metrics: names<'disk'>(v.disk?.metricsConfigs),
      includeRootBlk: v.disk?.includeRootBlk ?? false,
      includeAllAttachedBlk: v.disk?.includeAllAttachedBlk ?? false,
      lsblkTimeoutMs: v.disk?.lsblkTimeout ?? 5_000,
    },
    host: { metrics: names<'host'>(v.host?.metricsConfigs) },
    memory: { metrics: names<'memory'>(v.memory?.metricsConfigs) },
    net: {
      metrics: names<'net'>(v.net?.metricsConfigs),
      excludeInterfaceRegexp: v.net?.excludeInterfaceRegexp ?? '',
    },
    osFeature: {
      metrics: names<'osFeature'>(v.osFeature?.metricsConfigs),
      knownModulesPath: isAbsolute(modules) ? modules : join(dirname(file), modules),
    },
  };
}

/** The top-level keys of NPD's system-stats JSON, which has no `plugin` field to go by. */
const STATS_KEYS = ['cpu', 'disk', 'host', 'memory', 'net', 'osFeature', 'invokeInterval', 'procPath'];

export const systemStatsConfigKind: ConfigKind<SystemStatsConfig> = {
  kind: 'system-stats-monitor',
  plugins: [],
  matchesWithoutPlugin: (raw) => isRecord(raw) && STATS_KEYS.some((key) => key in raw),
  validate: validateSystemStats,
};
