import { join } from 'node:path';
import { REPO } from '../support/agent-process.ts';

/** What kit.ts builds and run.ts runs: the agent's bundle, the probe and their native addons. */
export const KIT = join(REPO, '.cache', 'gpu-kit');
/** The GPU configuration test:gpu runs the agent with (issue 40): kernel-log rules and the NVML monitor. */
export const KERNEL_RULES = join(REPO, 'rules', 'gpu.yaml');
export const NVML_CONFIG = join(REPO, 'rules', 'gpu-nvml.yaml');
