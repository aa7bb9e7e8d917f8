import { join } from 'node:path';

/** Host paths, all below --host-root, so a container sees the host and tests see fixtures. */
export interface HostPaths {
  readonly root: string;
  readonly proc: string;
  readonly sys: string;
  readonly dev: string;
}

export function hostPaths(root: string): HostPaths {
  return { root, proc: join(root, 'proc'), sys: join(root, 'sys'), dev: join(root, 'dev') };
}
