import { join } from 'node:path';

/**
 * Host paths below --host-root (the kernel-wide /proc files at --host-proc), so a container sees the
 * host and tests see fixtures.
 */
export interface HostPaths {
  readonly root: string;
  /**
   * Where the global /proc files are read (uptime, stat, sys/..., pressure/...): --host-proc. Without
   * hostPID a container's own /proc shows the same kernel-wide files as the host's, so the DaemonSet
   * mounts no host /proc, whose /proc/<pid>/root would lead into the host's file systems.
   */
  readonly proc: string;
  /**
   * The host's mount table: PID 1's mountinfo, always <root>/proc/1/mountinfo, because a container's
   * own /proc/1 is its own init. The DaemonSet mounts just this file from the host.
   */
  readonly initMountinfo: string;
  readonly sys: string;
  readonly dev: string;
}

/** `proc` defaults to <root>/proc, the host's /proc below the root (NPD's layout, tests' fixtures). */
export function hostPaths(root: string, proc = join(root, 'proc')): HostPaths {
  return {
    root,
    proc,
    initMountinfo: join(root, 'proc', '1', 'mountinfo'),
    sys: join(root, 'sys'),
    dev: join(root, 'dev'),
  };
}
