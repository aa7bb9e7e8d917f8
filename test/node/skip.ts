import * as fs from 'node:fs';

/** The node suite needs root (containerd, the kubelet's cgroups, /dev/kmsg) and the Debian tools. */
export function nodeSkip(): string | false {
  if (process.getuid?.() !== 0) return 'needs root';
  for (const bin of ['/usr/bin/containerd', '/usr/sbin/runc', '/usr/lib/cni/bridge', '/usr/bin/podman']) {
    if (!fs.existsSync(bin)) return `${bin} is missing (.ci/dev test installs it)`;
  }
  return false;
}
