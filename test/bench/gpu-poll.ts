/**
 * The NVML monitor's CPU per poll, in this process: one poll is runChecks over every check the default
 * NVML config enables, on every GPU, as the monitor's poll cycle runs it (src/monitors/gpu/poller.ts),
 * through the production koffi binding loaded with the fake NVML (test/support/fake-nvml). The fake
 * re-reads its state file on every call, which a real NVML does not: the NVML calls a poll makes are
 * counted and one call's cost in the fake is measured alone, so the monitor's own share can be told apart.
 */
import type { Nvml } from '../../src/host/nvml/api.ts';
import { nvmlLoader } from '../../src/host/nvml/binding.ts';
import { hostPaths } from '../../src/host/paths.ts';
import { GPU_CHECKS } from '../../src/monitors/gpu/checks/index.ts';
import { startNvml } from '../../src/monitors/gpu/enumerate.ts';
import { CheckStates, runChecks } from '../../src/monitors/gpu/poller.ts';
import { validateGpuMonitor } from '../../src/monitors/gpu/schema.ts';
import { fakeNvmlHarness } from '../support/fake-nvml/harness.ts';

export interface PollCost {
  readonly gpus: number;
  readonly checks: readonly string[];
  readonly polls: number;
  /** CPU (user + system) per poll, µs. */
  readonly cpuUsPerPoll: number;
  /** Wall time per poll, µs. */
  readonly wallUsPerPoll: number;
  readonly callsPerPoll: number;
  /** CPU per NVML call answered by the fake alone (nvmlDeviceGetCount_v2), µs. */
  readonly fakeCallUs: number;
}

/** The binding with every method call counted (the calls a poll makes, whatever the checks are). */
function counted(nvml: Nvml): { nvml: Nvml; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(nvml, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls += 1;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { nvml: proxy, calls: () => calls };
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** CPU µs per call of the cheapest NVML call, answered by the fake (its state file read included). */
function fakeCallCost(nvml: Nvml, n: number): number {
  for (let i = 0; i < 200; i++) nvml.deviceCount();
  const c0 = cpuUs();
  for (let i = 0; i < n; i++) nvml.deviceCount();
  return (cpuUs() - c0) / n;
}

/** Polls `polls` times (after 20 unmeasured) over `gpus` healthy fake H200s. */
export function pollCost(gpus: number, polls: number): PollCost {
  const fake = fakeNvmlHarness();
  try {
    fake.state({ count: gpus });
    const loaded = nvmlLoader(fake.library)();
    if (loaded instanceof Error) throw loaded;
    const start = startNvml(loaded, gpus);
    if (start.kind !== 'ready') throw new Error(`fake NVML did not start: ${JSON.stringify(start)}`);
    const { config } = validateGpuMonitor({ plugin: 'nvml' }, 'bench', GPU_CHECKS);
    if (!config) throw new Error('the default NVML config did not validate');
    const checks = GPU_CHECKS.filter((c) => config.checks[c.name]?.enabled).map((check) => ({
      check,
      options: config.checks[check.name]?.options,
    }));
    const { nvml, calls } = counted(loaded);
    const states = new CheckStates();
    // This machine's real sysfs: the device-count check's scan of /sys/bus/pci/devices is part of a poll.
    const paths = hostPaths('/');
    const poll = () => runChecks({ nvml, checks, gpus: start.gpus, now: Date.now(), paths, states });
    for (let i = 0; i < 20; i++) poll();
    const [c0, w0, k0] = [cpuUs(), performance.now(), calls()];
    for (let i = 0; i < polls; i++) poll();
    const [c1, w1, k1] = [cpuUs(), performance.now(), calls()];
    const fakeCallUs = fakeCallCost(loaded, 5000);
    loaded.shutdown();
    return {
      gpus,
      checks: checks.map((c) => c.check.name),
      polls,
      cpuUsPerPoll: (c1 - c0) / polls,
      wallUsPerPoll: ((w1 - w0) * 1000) / polls,
      callsPerPoll: (k1 - k0) / polls,
      fakeCallUs,
    };
  } finally {
    fake.close();
  }
}
