import type { ProbeKind } from '../probes/kind.ts';
import { inodeUsage } from '../probes/statfs.ts';
import { createFsCheck, type FsOptions, fsOptions } from './probe-disk.ts';

/** Inode exhaustion of configured mount paths: "no space left on device" with free blocks. */
export const inodesProbe: ProbeKind<FsOptions> = {
  kind: 'inodes',
  options: fsOptions,
  defaults: () => ({
    condition: 'FilesystemInodePressure',
    reason: 'InodesNearExhaustion',
    healthyReason: 'InodesAvailable',
    healthyMessage: 'file systems have free inodes',
  }),
  create: (spec, env) => createFsCheck(spec, env, { measure: inodeUsage, noun: 'inodes', format: String }),
};
