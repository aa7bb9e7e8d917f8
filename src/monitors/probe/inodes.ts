import { inodeUsage } from '../../host/procfs/statfs.ts';
import { createFsCheck, type FsOptions, fsOptions } from './disk.ts';
import type { ProbeKind } from './kind.ts';

/** Inode exhaustion of configured mount paths: "no space left on device" with free blocks. */
export const inodesProbe: ProbeKind<FsOptions> = {
  kind: 'inodes',
  options: fsOptions,
  defaults: () => ({
    condition: 'FilesystemInodesLow',
    reason: 'InodesNearExhaustion',
    healthyReason: 'InodesAvailable',
    healthyMessage: 'file systems have free inodes',
  }),
  create: (spec, env) => createFsCheck(spec, env, { measure: inodeUsage, noun: 'inodes', format: String }),
};
