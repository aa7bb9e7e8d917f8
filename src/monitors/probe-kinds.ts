import type { ProbeKind } from '../probes/kind.ts';
import { conntrackProbe } from './probe-conntrack.ts';
import { containerdProbe } from './probe-containerd.ts';
import { diskProbe } from './probe-disk.ts';
import { fdProbe } from './probe-fd.ts';
import { inodesProbe } from './probe-inodes.ts';
import { inotifyProbe } from './probe-inotify.ts';
import { kubeletProbe } from './probe-kubelet.ts';
import { ntpProbe } from './probe-ntp.ts';
import { pidsProbe } from './probe-pids.ts';
import { psiProbe } from './probe-psi.ts';
import { readonlyRootProbe } from './probe-readonly-root.ts';
import { systemdProbe } from './probe-systemd.ts';

/** Each kind is typed by its own options; the list holds them with the options erased. */
function erase<O>(kind: ProbeKind<O>): ProbeKind {
  return kind as unknown as ProbeKind;
}

/** Every built-in probe kind, in one explicit list. */
export function probeKinds(): readonly ProbeKind[] {
  return [
    erase(systemdProbe),
    erase(containerdProbe),
    erase(kubeletProbe),
    erase(ntpProbe),
    erase(fdProbe),
    erase(pidsProbe),
    erase(conntrackProbe),
    erase(diskProbe),
    erase(inodesProbe),
    erase(readonlyRootProbe),
    erase(inotifyProbe),
    erase(psiProbe),
  ];
}
