import { z } from 'zod';
import {
  blockUsage,
  type Measure,
  measurePaths,
  realStatfs,
  type StatfsFn,
} from '../../host/procfs/statfs.ts';
import {
  byThreshold,
  mainRule,
  type ProbeCheck,
  type ProbeEnv,
  type ProbeKind,
  type ProbeSpec,
  unknown,
} from './kind.ts';

export const fsOptions = z.strictObject({
  /** Mount paths on the host, resolved below --host-root. */
  paths: z.array(z.string().startsWith('/', 'must be an absolute path')).min(1).default(['/']),
  percent: z.number().min(0).max(100).default(90),
});

export type FsOptions = z.infer<typeof fsOptions>;

/** Shared by the disk and inodes kinds: they differ only in what they measure. */
export function createFsCheck(
  spec: ProbeSpec<FsOptions>,
  env: ProbeEnv,
  what: { measure: Measure; noun: string; format: (n: number) => string },
  statfs: StatfsFn = realStatfs,
): ProbeCheck {
  const rule = mainRule(spec);
  return {
    rules: [rule],
    async check() {
      const { measured, skipped } = await measurePaths(
        env.paths.root,
        spec.options.paths,
        what.measure,
        statfs,
      );
      const skipNote = skipped.length > 0 ? `; skipped ${skipped.join(', ')}` : '';
      if (measured.length === 0) return [unknown(rule, `no ${what.noun} measured${skipNote}`)];
      const over = measured.filter((m) => m.percent >= spec.options.percent);
      const shown = over.length > 0 ? over : measured;
      const parts = shown.map(
        (m) => `${m.path} ${what.format(m.used)} of ${what.format(m.total)} (${m.percent}%)`,
      );
      const message = `${what.noun} ${over.length > 0 ? 'near full' : 'used'}: ${parts.join(', ')}${skipNote}`;
      return [byThreshold(rule, over.length > 0, message)];
    },
  };
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)}GiB`;
}

/** Disk space of configured mount paths, from statfs(2) (no df, no /proc/mounts). */
export const diskProbe: ProbeKind<FsOptions> = {
  kind: 'disk',
  options: fsOptions,
  defaults: () => ({
    condition: 'FilesystemSpaceLow',
    reason: 'FilesystemNearFull',
    healthyReason: 'FilesystemHasSpace',
    healthyMessage: 'file systems have free space',
  }),
  create: (spec, env) => createFsCheck(spec, env, { measure: blockUsage, noun: 'disk space', format: gib }),
};
