/**
 * Every NVML check's answer per GPU, through the agent's own code: the koffi binding (nvmlLoader), the
 * monitor's start-up (startNvml) and one poll of every check the NVML config enables (runChecks), with
 * the options the agent validated from the same file. Prints one JSON object (ProbeReport) and exits 0,
 * also when there is no library or no GPU (that is its answer). kit.ts bundles it into gpu-probe.mjs so
 * it runs where node_modules is not.
 *
 *   node gpu-probe.mjs <nvml config> [<host root>]
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { NvmlError } from '../../src/host/nvml/api.ts';
import { nvmlLoader } from '../../src/host/nvml/binding.ts';
import { hostPaths } from '../../src/host/paths.ts';
import { GPU_CHECKS } from '../../src/monitors/gpu/checks/index.ts';
import { startNvml } from '../../src/monitors/gpu/enumerate.ts';
import { nvidiaGpusOnBus } from '../../src/monitors/gpu/pci-bus.ts';
import { CheckStates, runChecks, type Slot } from '../../src/monitors/gpu/poller.ts';
import { validateGpuMonitor } from '../../src/monitors/gpu/schema.ts';
import type { ProbeReport, ProbeSlot } from './probe-report.ts';

function toSlot(s: Slot): ProbeSlot {
  return {
    check: s.check,
    gpu: s.gpu?.index ?? null,
    findings: s.result.findings.map((f) => ({ severity: f.severity, reason: f.reason, message: f.message })),
    gauges: s.result.gauges ?? {},
    ...(s.result.error ? { error: s.result.error.message } : {}),
  };
}

function probe(configFile: string, root: string): ProbeReport {
  const { config, issues } = validateGpuMonitor(
    parse(readFileSync(configFile, 'utf8')),
    configFile,
    GPU_CHECKS,
  );
  if (!config) return { state: 'failed', why: issues.map((i) => `${i.path}: ${i.message}`).join('; ') };
  const paths = hostPaths(root);
  const nvml = nvmlLoader(config.library)();
  if (nvml instanceof Error) return { state: 'no_library', why: `${config.library}: ${nvml.message}` };
  const onBus = nvidiaGpusOnBus(paths.sys);
  const start = startNvml(nvml, onBus?.length);
  if (start.kind === 'no_gpu') return { state: 'no_gpu', why: start.why };
  if (start.kind === 'failed') return { state: 'failed', why: start.error.message };
  const driver = nvml.driverVersion();
  const checks = GPU_CHECKS.filter((c) => config.checks[c.name]?.enabled === true).map((check) => ({
    check,
    options: config.checks[check.name]?.options,
  }));
  const poll = runChecks({
    nvml,
    checks,
    gpus: start.gpus,
    now: Date.now(),
    paths,
    states: new CheckStates(),
  });
  nvml.shutdown();
  return {
    state: 'ready',
    driver: driver instanceof NvmlError ? driver.message : driver,
    onBus: onBus?.length ?? null,
    gpus: start.gpus.map((g) => ({ index: g.index, busId: g.busId, uuid: g.uuid, name: g.name })),
    lost: start.lost.map((g) => g.index),
    disabled: GPU_CHECKS.filter((c) => config.checks[c.name]?.enabled !== true).map((c) => c.name),
    slots: poll.slots.map(toSlot),
  };
}

const [configFile, root = '/'] = process.argv.slice(2);
if (configFile === undefined) {
  console.error('usage: gpu-probe.mjs <nvml config> [<host root>]');
  process.exitCode = 64;
} else console.log(JSON.stringify(probe(configFile, root)));
