import type { GpuCheck } from '../check.ts';
import { deviceCountCheck } from './device-count.ts';
import { eccCheck } from './ecc.ts';
import { fabricCheck } from './fabric.ts';
import { inforomCheck } from './inforom.ts';
import { nvlinkCheck } from './nvlink.ts';
import { pcieCheck } from './pcie.ts';
import { recoveryActionCheck } from './recovery-action.ts';
import { retiredPagesCheck } from './retired-pages.ts';
import { rowRemapCheck } from './row-remap.ts';
import { throttleCheck } from './throttle.ts';

/**
 * Every polled GPU check, in the order the monitor runs them and names their findings (the first fatal
 * finding's reason is GPUUnhealthy's). One check per file; add a new one here.
 */
export const GPU_CHECKS: readonly GpuCheck[] = [
  deviceCountCheck,
  eccCheck,
  rowRemapCheck,
  retiredPagesCheck,
  recoveryActionCheck,
  nvlinkCheck,
  fabricCheck,
  pcieCheck,
  throttleCheck,
  inforomCheck,
];
