import { NVML, type Nvml, NvmlError } from '../../../../src/host/nvml/api.ts';
import type { CheckContext, CheckResult, Gpu, GpuCheck } from '../../../../src/monitors/gpu/check.ts';

/**
 * The checks' tests call check.run() with an Nvml that implements only the calls the check makes; any
 * other call throws, so a test also proves which NVML calls a check depends on.
 */
export function stubNvml(calls: Partial<Nvml>): Nvml {
  return new Proxy(calls, {
    get(target, prop) {
      const fn = (target as Record<string | symbol, unknown>)[prop];
      if (fn === undefined) throw new Error(`unexpected NVML call ${String(prop)}`);
      return fn;
    },
  }) as Nvml;
}

/** The H200 of gpu.md section 0 (fixtures/gpu-h200/nvml.json). */
export const H200: Gpu = {
  index: 0,
  handle: { index: 0 },
  uuid: 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3',
  busId: '00000000:00:06.0',
  name: 'NVIDIA H200',
};

export function nvmlError(call: string, code: number): NvmlError {
  const text = Object.entries(NVML).find(([, c]) => c === code)?.[0] ?? 'Unknown Error';
  return new NvmlError(call, code, text);
}

/** Runs a check once for the H200 with the check's defaults unless options are given. */
export function runCheck<O, S>(
  check: GpuCheck<O, S>,
  nvml: Nvml,
  options: O,
  state: S = check.initialState(),
  now = 0,
): CheckResult {
  const ctx: CheckContext<O> = { nvml, options, now };
  return check.run(ctx, H200, state);
}

/** The GPU names every message must carry: its index, its PCI address and its UUID. */
export function namesTheGpu(message: string): boolean {
  return message.includes('GPU 0') && message.includes('00:06') && message.includes(H200.uuid);
}
