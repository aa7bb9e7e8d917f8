/**
 * What a killed test run leaves behind (its kubelet's pods keep running, their volumes stay mounted):
 * found by the pods' cgroups and the test folders' mounts, and removed before a new node starts.
 * Only this suite runs a kubelet on the test machine, so every process under kubepods is its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../e2e/harness/processes.ts';

const KUBEPODS = '/sys/fs/cgroup/pids/kubepods';

function podProcesses(dir: string): number[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const here = fs.existsSync(path.join(dir, 'cgroup.procs'))
    ? fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
    : [];
  return [
    ...here,
    ...entries.filter((e) => e.isDirectory()).flatMap((e) => podProcesses(path.join(dir, e.name))),
  ];
}

/** Unmounts everything below `dir`, deepest first. */
export async function unmountUnder(dir: string): Promise<void> {
  const mounts = fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' ') ?? '')
    .filter((m) => m.startsWith(`${dir}/`))
    .reverse();
  for (const m of mounts) await run('umount', ['-l', m]);
}

export async function removeLeftovers(): Promise<void> {
  await run('pkill', ['-KILL', '-f', 'containerd-shim-runc-v2 -namespace k8s.io']);
  for (const pid of podProcesses(KUBEPODS)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const tmp = os.tmpdir();
  for (const d of fs.readdirSync(tmp).filter((n) => n.startsWith('npd-e2e-cp-'))) {
    if (fs.existsSync(path.join(tmp, d, 'kubelet'))) await unmountUnder(path.join(tmp, d));
  }
}
