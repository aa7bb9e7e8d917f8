/**
 * A daemon's stdout and stderr connected to the test journald as a systemd service's are: the process
 * joins the cgroup system.slice/<unit> (name=systemd and, on a hybrid hierarchy, the unified one, where
 * journald reads _SYSTEMD_UNIT from), and systemd-cat, run inside journald's mount namespace where its
 * stream socket is, connects that socket as its stdout and stderr and execs the daemon, which nsenter
 * first takes back to this process's mount namespace (the kubelet's and runc's mounts must be the
 * host's). Every step execs, so the daemon keeps the pid journald sees as the stream's writer, as
 * systemd's ExecStart= with StandardOutput=journal does (systemd.exec(5)).
 *
 * Only while journald runs: a stream whose journald is gone makes the next write fail with EPIPE
 * (the kubelet, a Go program without a SIGPIPE handler, dies of it), so the daemon is started again
 * without this before the journal stops.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestJournal } from '../../support/journald.ts';

// The hierarchies journald reads a unit from (test/support/journald.ts has the same list).
const CGROUP_ROOTS = ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'].filter((r) => fs.existsSync(r));

export class UnitOutput {
  private readonly made: string[] = [];
  private readonly journal: TestJournal;
  readonly unit: string;
  readonly identifier: string;

  constructor(journal: TestJournal, unit: string, identifier: string) {
    this.journal = journal;
    this.unit = unit;
    this.identifier = identifier;
  }

  /** argv that runs `argv` as the unit's process, its output in the journal under `identifier`. */
  wrap(argv: readonly string[]): string[] {
    const leaves = CGROUP_ROOTS.map((r) => path.join(r, 'system.slice', this.unit));
    for (const leaf of leaves) {
      const first = fs.mkdirSync(leaf, { recursive: true });
      if (first) this.made.push(...(first === leaf ? [leaf] : [first, leaf]));
    }
    const join = leaves.map((l) => `echo $$ > ${path.join(l, 'cgroup.procs')}`).join('; ');
    const back = `--mount=/proc/${process.pid}/ns/mnt`;
    const cat = `systemd-cat -t ${this.identifier} -- nsenter ${back} -- "$@"`;
    const inJournal = `exec nsenter -t ${this.journal.namespacePid} -m -- ${cat}`;
    return ['sh', '-c', `${join}; ${inJournal}`, this.unit, ...argv];
  }

  /**
   * Moves what is left in the unit's cgroups (shims containerd started meanwhile, which outlive it) to
   * the root, where they were born before, and removes the cgroups this made. Call once the daemon runs
   * without wrap() again.
   */
  release(): void {
    for (const root of CGROUP_ROOTS) {
      const leaf = path.join(root, 'system.slice', this.unit);
      if (!fs.existsSync(leaf)) continue;
      const pids = fs.readFileSync(path.join(leaf, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      for (const pid of pids) {
        try {
          fs.writeFileSync(path.join(root, 'cgroup.procs'), pid);
        } catch (err) {
          // A process that exited meanwhile cannot be moved: ESRCH.
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      }
    }
    for (const dir of [...this.made].sort((a, b) => b.length - a.length)) {
      try {
        fs.rmdirSync(dir);
      } catch (err) {
        // system.slice may hold another unit's cgroup of a TestJournal writer: that one removes it.
        if (!['EBUSY', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
      }
    }
    this.made.length = 0;
  }
}
