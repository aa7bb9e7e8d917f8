/**
 * A real systemd-journald for the journal tests, on machines whose PID 1 is not systemd: journald
 * runs in a private mount namespace with its own /run/systemd (its sockets and a drop-in config) and
 * /etc/machine-id, and writes persistent files below the host's /var/log/journal/<test machine id>,
 * which is what the DaemonSet mounts. Entries are written by systemd-cat inside that namespace from a
 * process placed in the service's cgroup (both the name=systemd and the unified hierarchy), so journald
 * records _SYSTEMD_UNIT as systemd does for a service's output; SYSLOG_IDENTIFIER comes from `-t`.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManagedProcess, run, sleep } from '../e2e/harness/processes.ts';

export const JOURNAL_ROOT = '/var/log/journal';
const JOURNALD = '/lib/systemd/systemd-journald';
// journald takes _SYSTEMD_UNIT from the unified hierarchy on a hybrid one, else from name=systemd.
const CGROUP_ROOTS = ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'].filter((r) => fs.existsSync(r));

/** Why this machine cannot run the test journald, or undefined when it can. */
export function testJournalUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount namespace, cgroups)';
  if (!fs.existsSync(JOURNALD)) return `no ${JOURNALD}`;
  if (fs.existsSync('/run/systemd/system')) return 'systemd is PID 1 here: its own journald owns the sockets';
  if (CGROUP_ROOTS.length === 0) return 'no name=systemd or unified cgroup hierarchy';
  return undefined;
}

// ReadKMsg=no: the node suite floods /dev/kmsg and the agent reads it itself. No rate limit, so a
// test that writes a burst gets every line; persistent storage without a flush request.
const DROP_IN = ['[Journal]', 'Storage=persistent', 'ReadKMsg=no', 'RateLimitIntervalSec=0', ''].join('\n');

function script(workDir: string, machineId: string): string {
  return [
    'set -e',
    'mount -t tmpfs -o mode=0755 tmpfs /run/systemd',
    'mkdir -p /run/systemd/journal /run/systemd/journald.conf.d',
    `cp ${path.join(workDir, 'journald.conf')} /run/systemd/journald.conf.d/npd-test.conf`,
    // journald opens /var/log/journal at start only once a flush was requested.
    'touch /run/systemd/journal/flushed',
    `printf '%s\\n' ${machineId} > ${path.join(workDir, 'machine-id')}`,
    `mount --bind ${path.join(workDir, 'machine-id')} /etc/machine-id`,
    `echo $$ > ${path.join(workDir, 'journald.pid')}`,
    `exec ${JOURNALD}`,
  ].join('\n');
}

export class TestJournal {
  readonly machineId = randomBytes(16).toString('hex');
  private readonly workDir: string;
  private proc: ManagedProcess | undefined;
  private pid = 0;
  /** Cgroup folders this harness made, to remove (deepest first) and nothing else. */
  private readonly made: string[] = [];

  constructor(workDir: string) {
    this.workDir = path.join(workDir, 'journald');
    fs.mkdirSync(this.workDir, { recursive: true });
    fs.writeFileSync(path.join(this.workDir, 'journald.conf'), DROP_IN);
    fs.writeFileSync(path.join(this.workDir, 'start.sh'), script(this.workDir, this.machineId));
  }

  /** Where journald writes this test's files. */
  get directory(): string {
    return path.join(JOURNAL_ROOT, this.machineId);
  }

  get running(): boolean {
    return this.proc !== undefined && !this.proc.exited;
  }

  async start(): Promise<void> {
    fs.mkdirSync('/run/systemd', { recursive: true });
    fs.mkdirSync(JOURNAL_ROOT, { recursive: true });
    const pidFile = path.join(this.workDir, 'journald.pid');
    fs.rmSync(pidFile, { force: true });
    this.proc = new ManagedProcess(
      'systemd-journald',
      ['unshare', '-m', '--propagation', 'private', 'sh', path.join(this.workDir, 'start.sh')],
      path.join(this.workDir, 'journald.log'),
    );
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !this.proc.exited && !this.ready(pidFile)) await sleep(100);
    if (!this.ready(pidFile)) throw new Error(`systemd-journald did not start: see ${this.proc.logFile}`);
    this.pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  }

  private ready(pidFile: string): boolean {
    return fs.existsSync(pidFile) && fs.existsSync(this.directory) && this.socketUp(pidFile);
  }

  private socketUp(pidFile: string): boolean {
    const pid = fs.readFileSync(pidFile, 'utf8').trim();
    return fs.existsSync(`/proc/${pid}/root/run/systemd/journal/stdout`);
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
    this.proc = undefined;
  }

  /** SIGUSR2: journald closes its files and starts new ones, as `journalctl --rotate` asks it to. */
  async rotate(): Promise<void> {
    const before = this.files().length;
    process.kill(this.pid, 'SIGUSR2');
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && this.files().length <= before) await sleep(100);
    if (this.files().length <= before) throw new Error('journald did not rotate');
  }

  files(): string[] {
    return fs.existsSync(this.directory)
      ? fs.readdirSync(this.directory).filter((f) => f.endsWith('.journal'))
      : [];
  }

  /**
   * One entry per message, as `<unit>`'s output under `identifier` (systemd-cat -t), priority `level`.
   * The writer joins the unit's cgroup first, so journald records _SYSTEMD_UNIT=<unit>.
   */
  async write(unit: string, identifier: string, messages: readonly string[], level = 'info'): Promise<void> {
    for (const root of CGROUP_ROOTS) {
      const leaf = path.join(root, 'system.slice', unit);
      const first = fs.mkdirSync(leaf, { recursive: true });
      if (first) this.made.push(...(first === leaf ? [leaf] : [first, leaf]));
    }
    const join = CGROUP_ROOTS.map((r) => `echo $$ > ${path.join(r, 'system.slice', unit, 'cgroup.procs')}`);
    // journald reads a stream's unit from its writer's cgroup when the lines arrive: a writer that
    // has already exited leaves the entries without _SYSTEMD_UNIT, so systemd-cat stays a second.
    const cmd = [...join, `(cat; sleep 1) | systemd-cat -t ${identifier} -p ${level}`].join('; ');
    const r = await run('nsenter', ['-t', String(this.pid), '-m', 'sh', '-c', cmd], {
      input: `${messages.join('\n')}\n`,
    });
    if (r.code !== 0) throw new Error(`systemd-cat exited ${r.code}: ${r.stderr}`);
  }

  /** Removes this test's journal files and the unit cgroups it made. */
  cleanup(): void {
    fs.rmSync(this.directory, { recursive: true, force: true });
    for (const dir of [...this.made].sort((a, b) => b.length - a.length)) fs.rmdirSync(dir);
    this.made.length = 0;
  }
}
