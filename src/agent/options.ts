import { type FlagSpec, type ParsedFlags, parseFlags } from '../config/flag-parser.ts';
import type { LogFormat } from '../core/logger.ts';
import { validatePersistConfig } from '../events/persist/config.ts';
import { parseTaintRules, type TaintRule } from '../taints/spec.ts';
import {
  CONDITION_FLAGS,
  type ConditionOptions,
  checkTaintedConditions,
  conditionOptions,
} from './condition-options.ts';
import { DIAGNOSTICS_FLAGS, type DiagnosticsOptions, diagnosticsOptions } from './diagnostics-options.ts';
import { B, D, type FlagReader, I, IGNORED, L, S } from './flag-specs.ts';
import { GPU_FLAGS, type GpuOptions, gpuOptions } from './gpu-options.ts';
import { checkListen, toDuration, toNumber, toProcRoot } from './flag-values.ts';
import { KLOG_FLAGS } from './klog-flags.ts';
import { EVENT_SINK_FLAGS, type EventSinkOptions, eventSinkOptions } from './sink-options.ts';

/** Agent options: NPD's flags with NPD's defaults (npd.md §1.5), plus ours. */
export interface Options extends EventSinkOptions, ConditionOptions, DiagnosticsOptions, GpuOptions {
  readonly systemLogMonitors: readonly string[];
  readonly customPluginMonitors: readonly string[];
  readonly systemStatsMonitors: readonly string[];
  readonly probeMonitors: readonly string[];
  readonly gpuMonitors: readonly string[];
  readonly enableK8sExporter: boolean;
  readonly apiserverOverride: string;
  readonly kubeconfig: string;
  readonly heartbeatPeriodMs: number;
  readonly writeEvents: boolean;
  readonly updateNodeConditions: boolean;
  readonly eventNamespace: string;
  readonly eventsApi: 'core' | 'events.k8s.io';
  readonly apiTimeoutMs: number;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly nodeName: string;
  readonly address: string;
  readonly port: number;
  readonly prometheusAddress: string;
  readonly prometheusPort: number;
  readonly hostRoot: string;
  /** --host-proc, resolved: where the global /proc files are read (default <host-root>/proc). */
  readonly hostProc: string;
  readonly shutdownGraceMs: number;
  readonly configReloadMs: number;
  /** --trust-quoted-text: match the names and commands kernel and daemon lines quote, as NPD does. */
  readonly trustQuotedText: boolean;
  /** --trust-journal-writers: every journal entry a config selects is evidence, as NPD takes it. */
  readonly trustJournalWriters: boolean;
  /** --trust-file-writers: every line a filelog config reads is evidence, as NPD takes it. */
  readonly trustFileWriters: boolean;
  /** --taint-on-condition; empty (the default) keeps the agent report-only. */
  readonly taintOnCondition: readonly TaintRule[];
  /** --log-format; undefined picks text on a terminal and JSON otherwise. */
  readonly logFormat: LogFormat | undefined;
  readonly version: boolean;
  readonly help: boolean;
}

export const FLAGS: readonly FlagSpec[] = [
  L('config.system-log-monitor', 'System log monitor config files, comma separated'),
  L('config.custom-plugin-monitor', 'Custom plugin monitor config files, comma separated'),
  L('config.system-stats-monitor', 'System stats monitor config files, comma separated'),
  L('config.probe-monitor', 'Built-in probe monitor config files (no host binaries needed), comma separated'),
  L('config.gpu-monitor', 'NVIDIA GPU health from NVML (plugin nvml) config files, comma separated'),
  ...GPU_FLAGS,
  L('system-log-monitors', 'Deprecated alias of --config.system-log-monitor'),
  L('custom-plugin-monitors', 'Deprecated alias of --config.custom-plugin-monitor'),
  B('enable-k8s-exporter', 'Report conditions and events to the API server', true),
  S('apiserver-override', 'API server URI, e.g. https://host:443?inClusterConfig=false&auth=/kubeconfig'),
  S('kubeconfig', 'Path to a kubeconfig (default $KUBECONFIG, then in-cluster config)'),
  D('apiserver-wait-timeout', 'Accepted for NPD compatibility; monitors never wait for the API server', '5m'),
  D('apiserver-wait-interval', 'Accepted for NPD compatibility', '5s'),
  D('k8s-exporter-heartbeat-period', 'Re-send node conditions at least this often', '5m'),
  B('k8s-exporter-write-events', 'Write Event objects', true),
  B('k8s-exporter-update-node-conditions', 'Patch node conditions', true),
  S('event-namespace', 'Namespace of Events ("" means default)'),
  S('events-api', 'Events API: core (core/v1, like NPD) or events.k8s.io (EventSeries)', 'core'),
  D('api-request-timeout', 'Timeout of every API request', '10s'),
  ...EVENT_SINK_FLAGS,
  {
    name: 'kube-api-qps',
    kind: 'float',
    help: 'Client-side API request rate limit (<0: none)',
    default: '500',
  },
  I('kube-api-burst', 'Client-side API request burst', 500),
  S('hostname-override', 'Node name (default $NODE_NAME, then the hostname)'),
  S('address', 'Bind address of /healthz, /readyz and /conditions', '127.0.0.1'),
  I('port', 'Port of /healthz, /readyz and /conditions; 0 disables', 20256),
  S('prometheus-address', 'Bind address of /metrics', '127.0.0.1'),
  I('prometheus-port', 'Port of /metrics; 0 disables', 20257),
  S('host-root', 'Where the host file system is mounted (/proc, /sys, /dev/kmsg are read below it)', '/'),
  S(
    'host-proc',
    "Where the kernel-wide /proc files are read (default <host-root>/proc); the host's mount table stays <host-root>/proc/1/mountinfo",
  ),
  D('shutdown-grace-period', 'How long SIGTERM waits for queued events and a last condition sync', '10s'),
  D('config-reload-period', 'How often config files are checked for changes (hot reload); 0 disables', '10s'),
  B(
    'trust-quoted-text',
    "Let rules match the process and file names kernel lines quote and the pods' commands containerd and kubelet lines quote, as NPD does (docs/rules.md)",
    false,
  ),
  B(
    'trust-journal-writers',
    "Take every journal entry a journald config selects as evidence, whoever wrote it, as NPD does: overrides each config's trustedWriter (docs/rules.md)",
    false,
  ),
  B(
    'trust-file-writers',
    "Take every line a filelog config reads as evidence, whoever wrote it, as NPD does: NPD's JSON filelog configs raise conditions again (docs/rules.md)",
    false,
  ),
  L(
    'taint-on-condition',
    'Taint the Node while a condition is True: <ConditionType>=<key>:<Effect>, repeatable (off by default)',
  ),
  ...CONDITION_FLAGS,
  ...DIAGNOSTICS_FLAGS,
  S(
    'log-format',
    'Log format: json (one JSON record a line) or text (one klog-like line); default text on a terminal, json otherwise',
  ),
  B('version', 'Print the version and exit', false),
  B('help', 'Print this help and exit', false),
  IGNORED('exporter.stackdriver', 'string', 'Not supported; accepted so NPD manifests start'),
  ...KLOG_FLAGS,
];

export interface ParsedOptions {
  readonly options: Options;
  readonly positional: readonly string[];
  readonly errors: readonly string[];
  readonly ignored: readonly string[];
}

export function parseOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  hostname: string,
): ParsedOptions {
  const parsed = parseFlags(argv, FLAGS);
  const errors = [...parsed.errors];
  const options = readOptions(flagReader(parsed.values, errors), env, hostname);
  validatePersistConfig(options, errors);
  checkListen(options, errors);
  const ignored = FLAGS.filter((f) => f.ignored && parsed.values.has(f.name)).map((f) => f.name);
  return { options, positional: parsed.positional, errors, ignored };
}

function flagReader(values: ParsedFlags['values'], errors: string[]): FlagReader {
  const get = (name: string): string => {
    const v = values.get(name);
    const spec = FLAGS.find((f) => f.name === name);
    return typeof v === 'string' ? v : (spec?.default ?? '');
  };
  return {
    errors,
    get,
    list: (name) => {
      const v = values.get(name);
      return Array.isArray(v) ? v : [];
    },
    num: (name) => toNumber(name, get(name), errors),
    dur: (name) => toDuration(name, get(name), errors),
  };
}

function readOptions(f: FlagReader, env: NodeJS.ProcessEnv, hostname: string): Options {
  const monitors = monitorOptions(f);
  const eventsApi = f.get('events-api');
  if (eventsApi !== 'core' && eventsApi !== 'events.k8s.io')
    f.errors.push('--events-api must be core or events.k8s.io');
  // Never used, but a malformed value is still an error.
  f.dur('apiserver-wait-timeout');
  f.dur('apiserver-wait-interval');
  const taints = parseTaintRules(f.list('taint-on-condition'));
  f.errors.push(...taints.errors);
  const conditions = conditionOptions(f);
  checkTaintedConditions(taints.rules, conditions.extraConditions, f.errors);
  return {
    ...monitors,
    ...apiOptions(f, env, eventsApi),
    ...eventSinkOptions(f, env),
    nodeName: f.get('hostname-override') || env.NODE_NAME || hostname,
    address: f.get('address'),
    port: f.num('port'),
    prometheusAddress: f.get('prometheus-address'),
    prometheusPort: f.num('prometheus-port'),
    hostRoot: f.get('host-root'),
    hostProc: toProcRoot(f.get('host-proc'), f.get('host-root'), f.errors),
    shutdownGraceMs: f.dur('shutdown-grace-period'),
    configReloadMs: f.dur('config-reload-period'),
    trustQuotedText: f.get('trust-quoted-text') === 'true',
    trustJournalWriters: f.get('trust-journal-writers') === 'true',
    trustFileWriters: f.get('trust-file-writers') === 'true',
    taintOnCondition: taints.rules,
    ...conditions,
    ...diagnosticsOptions(f),
    ...gpuOptions(f),
    logFormat: logFormat(f),
    version: f.get('version') === 'true',
    help: f.get('help') === 'true',
  };
}

function logFormat(f: FlagReader): LogFormat | undefined {
  const v = f.get('log-format');
  if (v === 'json' || v === 'text') return v;
  if (v !== '') f.errors.push(`--log-format must be json or text, not "${v}"`);
  return undefined;
}

type MonitorOptions = Pick<
  Options,
  'systemLogMonitors' | 'customPluginMonitors' | 'systemStatsMonitors' | 'probeMonitors' | 'gpuMonitors'
>;

function monitorOptions(f: FlagReader): MonitorOptions {
  return {
    systemLogMonitors: aliased(
      f.list('config.system-log-monitor'),
      f.list('system-log-monitors'),
      'system-log-monitor',
      f.errors,
    ),
    customPluginMonitors: aliased(
      f.list('config.custom-plugin-monitor'),
      f.list('custom-plugin-monitors'),
      'custom-plugin-monitor',
      f.errors,
    ),
    systemStatsMonitors: f.list('config.system-stats-monitor'),
    probeMonitors: f.list('config.probe-monitor'),
    gpuMonitors: f.list('config.gpu-monitor'),
  };
}

type ApiOptions = Pick<
  Options,
  | 'enableK8sExporter'
  | 'apiserverOverride'
  | 'kubeconfig'
  | 'heartbeatPeriodMs'
  | 'writeEvents'
  | 'updateNodeConditions'
  | 'eventNamespace'
  | 'eventsApi'
  | 'apiTimeoutMs'
  | 'kubeApiQps'
  | 'kubeApiBurst'
>;

function apiOptions(f: FlagReader, env: NodeJS.ProcessEnv, eventsApi: string): ApiOptions {
  return {
    enableK8sExporter: f.get('enable-k8s-exporter') === 'true',
    apiserverOverride: f.get('apiserver-override'),
    kubeconfig: f.get('kubeconfig') || env.KUBECONFIG || '',
    heartbeatPeriodMs: f.dur('k8s-exporter-heartbeat-period'),
    writeEvents: f.get('k8s-exporter-write-events') === 'true',
    updateNodeConditions: f.get('k8s-exporter-update-node-conditions') === 'true',
    eventNamespace: f.get('event-namespace'),
    eventsApi: eventsApi === 'events.k8s.io' ? 'events.k8s.io' : 'core',
    apiTimeoutMs: f.dur('api-request-timeout'),
    kubeApiQps: f.num('kube-api-qps'),
    kubeApiBurst: f.num('kube-api-burst'),
  };
}

/** NPD panics when a deprecated alias is combined with its replacement; we report it instead. */
function aliased(current: string[], deprecated: string[], name: string, errors: string[]): string[] {
  if (current.length > 0 && deprecated.length > 0) {
    errors.push(`--config.${name} and its deprecated alias cannot be combined`);
  }
  return [...new Set([...current, ...deprecated])];
}

export function helpText(): string {
  const lines = FLAGS.filter((f) => !f.ignored).map((f) => {
    const def = f.default !== undefined && f.default !== '' ? ` (default ${f.default})` : '';
    return `  --${f.name.padEnd(38)} ${f.help}${def}`;
  });
  return [
    'Usage: node-problem-detector [flags]',
    '       node-problem-detector replay --config FILE... [--format kmsg|plain|journal-json] [--boot-time T] LOG|-',
    '       node-problem-detector seal --node NODE --key KEY < url   (a NodeDiagnostic sealedUploadURL)',
    '',
    'Flags:',
    ...lines,
  ].join('\n');
}
