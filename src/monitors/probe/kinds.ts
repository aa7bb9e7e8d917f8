import { apiserverProbe } from './apiserver.ts';
import { conntrackProbe } from './conntrack.ts';
import { containerdProbe } from './containerd.ts';
import { defaultRouteProbe } from './default-route.ts';
import { diskProbe } from './disk.ts';
import { dnsProbe } from './dns.ts';
import { fdProbe } from './fd.ts';
import { inodesProbe } from './inodes.ts';
import { inotifyProbe } from './inotify.ts';
import { interfacesProbe } from './interfaces.ts';
import type { ProbeKind } from './kind.ts';
import { kubeletProbe } from './kubelet.ts';
import { nicCountersProbe } from './nic-counters.ts';
import { ntpProbe } from './ntp.ts';
import { pidsProbe } from './pids.ts';
import { psiProbe } from './psi.ts';
import { readonlyRootProbe } from './readonly-root.ts';
import { sysctlProbe } from './sysctl.ts';
import { systemdProbe } from './systemd.ts';

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
    erase(interfacesProbe),
    erase(defaultRouteProbe),
    erase(sysctlProbe),
    erase(nicCountersProbe),
    erase(dnsProbe),
    erase(apiserverProbe),
  ];
}
