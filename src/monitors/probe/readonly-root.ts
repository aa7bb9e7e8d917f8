import { randomBytes } from 'node:crypto';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { errorCode, errorMessage } from '../../core/errors.ts';
import { isReadOnly, type MountEntry, mountFor, parseMountinfo } from '../../host/procfs/mountinfo.ts';
import { readText } from '../../host/procfs/proc.ts';
import { byThreshold, mainRule, type ProbeKind } from './kind.ts';

const options = z.strictObject({
  paths: z
    .array(z.string().startsWith('/', 'must be an absolute path'))
    .min(1)
    .default(['/', '/var/lib/kubelet', '/var/lib/containerd']),
  /** Paths that are read-only by design, e.g. `/` on Container-Optimized OS or Flatcar's /usr. */
  ignore: z.array(z.string().startsWith('/', 'must be an absolute path')).default([]),
  /** Also create and delete a file in each path, which catches a read-only layer mountinfo cannot show. */
  writeTest: z.boolean().default(false),
});

export type ReadonlyRootOptions = z.infer<typeof options>;

/**
 * Read-only remounts of the paths a node needs, from the host's init mount table
 * (<host-root>/proc/1/mountinfo, not --host-proc: a container's own PID 1 has the container's mounts).
 * Unlike the kmsg "Remounting filesystem read-only" rule it clears by itself once the file system is
 * writable again.
 */
export const readonlyRootProbe: ProbeKind<ReadonlyRootOptions> = {
  kind: 'readonly-root',
  options,
  defaults: () => ({
    condition: 'ReadonlyRootFilesystem',
    reason: 'RootFilesystemIsReadOnly',
    healthyReason: 'RootFilesystemIsWritable',
    healthyMessage: 'node file systems are writable',
  }),
  create(spec, env) {
    const rule = mainRule(spec);
    const mountinfo = env.paths.initMountinfo;
    return {
      rules: [rule],
      async check(ctx) {
        const entries = parseMountinfo(await readText(mountinfo, ctx.signal));
        const problems = readOnlyPaths(entries, spec.options);
        if (spec.options.writeTest) {
          for (const path of spec.options.paths) {
            if (spec.options.ignore.includes(path) || problems.some((p) => p.startsWith(`${path} `)))
              continue;
            const failure = await writeProbe(join(env.paths.root, path));
            if (failure) problems.push(`${path} (${failure})`);
          }
        }
        const checked = spec.options.paths.filter((p) => !spec.options.ignore.includes(p)).join(', ');
        const message = problems.length > 0 ? `read-only: ${problems.join(', ')}` : `writable: ${checked}`;
        return [byThreshold(rule, problems.length > 0, message)];
      },
    };
  },
};

function readOnlyPaths(entries: readonly MountEntry[], o: ReadonlyRootOptions): string[] {
  const out: string[] = [];
  const reported = new Set<MountEntry>();
  for (const path of o.paths) {
    if (o.ignore.includes(path)) continue;
    const mount = mountFor(entries, path);
    // A path without a mount of its own lives on its parent's; report each mount once.
    if (!mount || reported.has(mount) || !isReadOnly(mount)) continue;
    reported.add(mount);
    out.push(`${path} (${mount.fsType} ${mount.source} on ${mount.mountPoint})`);
  }
  return out;
}

/**
 * Returns "write test: EROFS" when the file system refuses writes. A missing directory is fine; any
 * other failure (EACCES on a read-only hostPath mount of the agent) is a probe error, not a problem.
 */
async function writeProbe(dir: string): Promise<string | undefined> {
  const file = join(dir, `.npd-write-test-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(file, '', { flag: 'wx' });
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT') return undefined;
    if (code === 'EROFS') return 'write test: EROFS';
    throw new Error(`write test in ${dir}: ${errorMessage(err)}`);
  }
  await unlink(file).catch(() => undefined);
  return undefined;
}
