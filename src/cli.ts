import { readdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { Agent, type AgentDeps } from './agent/agent.ts';
import { helpText, type Options, type ParsedOptions, parseOptions } from './agent/options.ts';
import { monitorTypes } from './agent/registry.ts';
import { checkOwners } from './conditions/owners.ts';
import { ConfigError } from './config/errors.ts';
import { type LoadedConfig, loadConfigs } from './config/load.ts';
import { systemClock } from './core/clock.ts';
import { StartError } from './core/errors.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { createRegistry } from './core/metrics.ts';
import { GIT_COMMIT, VERSION, VERSION_LINE } from './core/version.ts';
import { runSeal } from './diagnostics/seal-command.ts';
import { runFleet } from './fleet/command.ts';
import { libcMallocTrim } from './host/clib/malloc-trim.ts';
import { libcWaitpid, Pid1Reaper } from './host/clib/pid1-reaper.ts';
import { runReplay } from './replay/command.ts';

interface ConfigFile {
  readonly file: string;
  readonly kind?: string;
}

/**
 * Rules the agent runs when no --config.* flag is given: the DaemonSet's (deploy/base), so a node
 * run by hand detects what a deployed one does. The DaemonSet runs probes-daemonset.yaml, the pod
 * variant of probes.yaml; test/deploy/manifests-daemonset.test.ts keeps the two lists in step.
 */
export const DEFAULT_RULES = [
  'kernel.yaml',
  'readonly.yaml',
  'hardware.yaml',
  'storage.yaml',
  'network.yaml',
  'probes.yaml',
];

export interface Cli {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly rulesDir: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly readStdin: () => string;
}

export type Outcome =
  | { readonly exit: number }
  | { readonly agent: Agent; readonly logger: Logger; readonly graceMs: number };

/** Everything main.ts does except exiting: parse, validate, then either answer or start the agent. */
export async function run(cli: Cli): Promise<Outcome> {
  const io = { stdout: cli.out, stderr: cli.err, readStdin: cli.readStdin };
  if (cli.argv[0] === 'replay') return { exit: runReplay(cli.argv.slice(1), io) };
  if (cli.argv[0] === 'seal') return { exit: runSeal(cli.argv.slice(1), io) };
  if (cli.argv[0] === 'fleet') {
    const fleetIo = { stdout: cli.out, stderr: cli.err, env: cli.env, clock: systemClock };
    return { exit: await runFleet(cli.argv.slice(1), fleetIo) };
  }
  const parsed = parseOptions(cli.argv, cli.env, hostname());
  const early = exitEarly(cli, parsed);
  if (early) return early;
  const files = configFiles(parsed.options, cli.rulesDir);
  const load = configLoader(files);
  const configs = loadOrReport(cli, load);
  if (!configs) return { exit: 2 };
  return startAgent(cli, parsed, configs, reloadSpec(parsed.options, files, load));
}

/** Bad flags, --help and --version answer without loading any config. */
function exitEarly(cli: Cli, parsed: ParsedOptions): Outcome | undefined {
  if (parsed.errors.length > 0 || parsed.positional.length > 0) {
    const extra = parsed.positional.map((p) => `unexpected argument: ${p}`);
    cli.err(`${[...parsed.errors, ...extra].join('\n')}\n\n${helpText()}\n`);
    return { exit: 2 };
  }
  if (parsed.options.help) return answer(cli, helpText());
  if (parsed.options.version) return answer(cli, VERSION_LINE);
  return undefined;
}

/** Shared by startup and hot reload, so a reload is held to the same checks. */
function configLoader(files: readonly ConfigFile[]): () => LoadedConfig[] {
  return () => {
    const loaded = loadConfigs(
      files,
      monitorTypes().map((t) => t.configKind),
    );
    const { issues } = checkOwners(loaded);
    if (issues.length > 0) throw new ConfigError(issues);
    return loaded;
  };
}

function loadOrReport(cli: Cli, load: () => LoadedConfig[]): LoadedConfig[] | undefined {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    cli.err(`invalid configuration:\n${err.message}\n`);
    return undefined;
  }
}

function reloadSpec(
  options: Options,
  files: readonly ConfigFile[],
  load: () => LoadedConfig[],
): AgentDeps['reload'] {
  return options.configReloadMs > 0
    ? { files: files.map((f) => f.file), load, intervalMs: options.configReloadMs }
    : undefined;
}

async function startAgent(
  cli: Cli,
  parsed: ParsedOptions,
  configs: LoadedConfig[],
  reload: AgentDeps['reload'],
): Promise<Outcome> {
  const logger = createLogger({ level: cli.env.LOG_LEVEL, format: parsed.options.logFormat });
  warnIgnored(logger, parsed.ignored);
  const registry = createRegistry();
  if (process.pid === 1) await startReaper(registry, logger);
  const agent = new Agent({
    options: parsed.options,
    configs,
    types: monitorTypes(),
    clock: systemClock,
    registry,
    logger,
    version: VERSION,
    commit: GIT_COMMIT,
    reload,
    mallocTrim: libcMallocTrim,
  });
  try {
    await agent.start();
  } catch (err) {
    if (!(err instanceof StartError)) throw err;
    await agent.stop(0);
    cli.err(`${err.message}\n`);
    return { exit: 2 };
  }
  return { agent, logger, graceMs: parsed.options.shutdownGraceMs };
}

/** One warning for all of them: a klog args list is a dozen flags, and each is harmless. */
function warnIgnored(logger: Logger, ignored: readonly string[]): void {
  if (ignored.length === 0) return;
  logger.warn(
    { flags: ignored.map((f) => `--${f}`) },
    'flags accepted for NPD compatibility and ignored: logs go to stdout as --log-format says, level from LOG_LEVEL',
  );
}

/** As PID 1 (no tini in front) the agent must reap the orphans its plugins leave behind. */
async function startReaper(registry: Registry, logger: Logger): Promise<void> {
  const waitpid = await libcWaitpid();
  if (!waitpid) {
    logger.warn(
      'running as PID 1 without waitpid (koffi unavailable): orphaned plugin children stay zombies',
    );
    return;
  }
  const fs = { readdir: (p: string) => readdir(p), readFile: (p: string, e: 'utf8') => readFile(p, e) };
  new Pid1Reaper({ clock: systemClock, registry, logger, fs, waitpid }).start();
}

function answer(cli: Cli, text: string): Outcome {
  cli.out(`${text}\n`);
  return { exit: 0 };
}

function configFiles(o: Options, rulesDir: string): ConfigFile[] {
  const flagged = [
    ...o.systemLogMonitors.map((file) => ({ file, kind: 'system-log-monitor' })),
    ...o.customPluginMonitors.map((file) => ({ file, kind: 'custom-plugin-monitor' })),
    ...o.systemStatsMonitors.map((file) => ({ file, kind: 'system-stats-monitor' })),
    ...o.probeMonitors.map((file) => ({ file, kind: 'probe-monitor' })),
    ...o.gpuMonitors.map((file) => ({ file, kind: 'gpu-monitor' })),
  ];
  if (flagged.length > 0) return flagged;
  return DEFAULT_RULES.map((name) => ({ file: join(rulesDir, name) }));
}
