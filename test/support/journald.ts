/**
 * A real systemd-journald for the journal tests, on machines whose PID 1 is not systemd: journald
 * runs in a private mount namespace with its own /run/systemd (its sockets and a drop-in config) and
 * /etc/machine-id, and writes persistent files below the host's /var/log/journal/<test machine id>,
 * which is what the DaemonSet mounts. Entries are written by systemd-cat inside that namespace from a
 * process placed in the service's cgroup (both the name=systemd and the unified hierarchy), so journald
 * records _SYSTEMD_UNIT as systemd does for a service's output; SYSLOG_IDENTIFIER comes from `-t`.
 *
 * Options for a journal of several boots with kernel lines, away from the host's files: `hostRoot`
 * bind-mounts <hostRoot>/var/log over /var/log inside the namespace; start({ bootId }) bind-mounts a
 * file over /proc/sys/kernel/random/boot_id, which journald stamps as _BOOT_ID (it takes the field
 * from there, never from a client); `kernel` binds a FIFO over /dev/kmsg with ReadKMsg=yes, so
 * writeKernel()'s records arrive as the kernel's, _TRANSPORT=kernel, which no client can set either.
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

// ReadKMsg=no: the node suite floods /dev/kmsg and the agent reads it itself; with `kernel`, journald
// reads the FIFO bound over /dev/kmsg in its namespace, never the real one. No rate limit, so a test
// that writes a burst gets every line; persistent storage without a flush request.
function dropIn(kernel: boolean): string {
  const kmsg = kernel ? 'ReadKMsg=yes' : 'ReadKMsg=no';
  return ['[Journal]', 'Storage=persistent', kmsg, 'RateLimitIntervalSec=0', ''].join('\n');
}

export interface TestJournalOptions {
  /** Write the journal below <hostRoot>/var/log/journal instead of the host's /var/log/journal. */
  readonly hostRoot?: string;
  /** Read kernel records from a FIFO over /dev/kmsg, written by writeKernel(). */
  readonly kernel?: boolean;
}

function script(workDir: string, machineId: string, opts: TestJournalOptions): string {
  const file = (name: string) => path.join(workDir, name);
  return [
    'set -e',
    'mount -t tmpfs -o mode=0755 tmpfs /run/systemd',
    'mkdir -p /run/systemd/journal /run/systemd/journald.conf.d',
    `cp ${file('journald.conf')} /run/systemd/journald.conf.d/npd-test.conf`,
    // journald opens /var/log/journal at start only once a flush was requested.
    'touch /run/systemd/journal/flushed',
    `printf '%s\\n' ${machineId} > ${file('machine-id')}`,
    `mount --bind ${file('machine-id')} /etc/machine-id`,
    ...(opts.hostRoot ? [`mount --bind ${path.join(opts.hostRoot, 'var', 'log')} /var/log`] : []),
    `if [ -f ${file('boot_id')} ]; then mount --bind ${file('boot_id')} /proc/sys/kernel/random/boot_id; fi`,
    ...(opts.kernel
      ? [`[ -p ${file('kmsg')} ] || mkfifo ${file('kmsg')}`, `mount --bind ${file('kmsg')} /dev/kmsg`]
      : []),
    `echo $$ > ${file('journald.pid')}`,
    // journald logs to /dev/kmsg by default: opening the FIFO for that would wait for a reader forever.
    `${opts.kernel ? 'SYSTEMD_LOG_TARGET=console ' : ''}exec ${JOURNALD}`,
  ].join('\n');
}

export class TestJournal {
  readonly machineId = randomBytes(16).toString('hex');
  private readonly workDir: string;
  private readonly opts: TestJournalOptions;
  private proc: ManagedProcess | undefined;
  private pid = 0;
  /** The next /dev/kmsg sequence number: journald drops records below the one it expects. */
  private kernelSeq = 0;
  /** Kernel records journald has taken, over all starts. */
  private kernelWritten = 0;
  /** Cgroup folders this harness made, to remove (deepest first) and nothing else. */
  private readonly made: string[] = [];

  constructor(workDir: string, opts: TestJournalOptions = {}) {
    this.workDir = path.join(workDir, 'journald');
    this.opts = opts;
    fs.mkdirSync(this.workDir, { recursive: true });
    fs.writeFileSync(path.join(this.workDir, 'journald.conf'), dropIn(opts.kernel === true));
    fs.writeFileSync(path.join(this.workDir, 'start.sh'), script(this.workDir, this.machineId, opts));
  }

  /** The folder holding the machine-id folders: the host's /var/log/journal, or the one below hostRoot. */
  get root(): string {
    return this.opts.hostRoot ? path.join(this.opts.hostRoot, JOURNAL_ROOT) : JOURNAL_ROOT;
  }

  /** Where journald writes this test's files. */
  get directory(): string {
    return path.join(this.root, this.machineId);
  }

  get running(): boolean {
    return this.proc !== undefined && !this.proc.exited;
  }

  /** journald's pid: `nsenter -t <it> -m` reaches its sockets (test/node/harness/unit-output.ts). */
  get namespacePid(): number {
    return this.pid;
  }

  /** bootId: the _BOOT_ID journald stamps on this run's entries (a UUID); the machine's own by default. */
  async start(opts: { bootId?: string } = {}): Promise<void> {
    fs.mkdirSync('/run/systemd', { recursive: true });
    fs.mkdirSync(this.root, { recursive: true });
    const bootFile = path.join(this.workDir, 'boot_id');
    if (opts.bootId) fs.writeFileSync(bootFile, `${opts.bootId}\n`);
    else fs.rmSync(bootFile, { force: true });
    // A new journald expects the sequence from 0 again (its seqnum file lives in its own /run).
    this.kernelSeq = 0;
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

  /** Sends journald a signal: SIGSTOP and SIGCONT make it a busy machine's journald that reads late. */
  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  /** SIGUSR2: journald closes its files and starts new ones, as `journalctl --rotate` asks it to. */
  async rotate(): Promise<void> {
    const before = this.files().length;
    this.signal('SIGUSR2');
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
   * The writer joins the unit's cgroup first, so journald records _SYSTEMD_UNIT=<unit>. Returns once
   * journald has stored every entry with that unit.
   */
  async write(unit: string, identifier: string, messages: readonly string[], level = 'info'): Promise<void> {
    for (const root of CGROUP_ROOTS) {
      const leaf = path.join(root, 'system.slice', unit);
      const first = fs.mkdirSync(leaf, { recursive: true });
      if (first) this.made.push(...(first === leaf ? [leaf] : [first, leaf]));
    }
    const match = [`_SYSTEMD_UNIT=${unit}`, `SYSLOG_IDENTIFIER=${identifier}`];
    const before = await this.stored(match);
    const release = path.join(this.workDir, `release-${randomBytes(4).toString('hex')}`);
    const join = CGROUP_ROOTS.map((r) => `echo $$ > ${path.join(r, 'system.slice', unit, 'cgroup.procs')}`);
    // journald reads a stream's unit from its writer's /proc when it takes the first line, however
    // late that is on a busy machine: a writer gone by then leaves entries without _SYSTEMD_UNIT. So
    // the stream stays open until journald has stored them all, then the release file ends it.
    const hold = `while [ ! -e ${release} ]; do sleep 0.05; done`;
    const cmd = [...join, `(cat; ${hold}) | systemd-cat -t ${identifier} -p ${level}`].join('; ');
    const writer = run('nsenter', ['-t', String(this.pid), '-m', 'sh', '-c', cmd], {
      input: `${messages.join('\n')}\n`,
    });
    try {
      await this.waitForStored(match, before + messages.length, `${unit} entries`, writer);
    } finally {
      fs.writeFileSync(release, '');
    }
    const r = await writer;
    fs.rmSync(release, { force: true });
    if (r.code !== 0) throw new Error(`systemd-cat exited ${r.code}: ${r.stderr}`);
  }

  /**
   * One entry from an unprivileged process, as any user on the node can write it: `logger -t
   * <identifier>` run as `uid` (setpriv), over the syslog socket or, with `native`, journald's own
   * protocol. journald stamps the sender's _UID and no service unit. Returns once it is stored.
   */
  async writeAs(uid: number, identifier: string, message: string, native = false): Promise<void> {
    const match = [`SYSLOG_IDENTIFIER=${identifier}`, `_UID=${uid}`];
    const before = await this.stored(match);
    const as = ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
    const via = native ? ['--journald'] : ['--socket-errors=on', '-u', '/run/systemd/journal/dev-log'];
    const input = native ? `SYSLOG_IDENTIFIER=${identifier}\nMESSAGE=${message}\n` : undefined;
    const args = [...as, 'logger', ...via, ...(native ? [] : ['-t', identifier, message])];
    const writer = run('nsenter', ['-t', String(this.pid), '-m', ...args], input ? { input } : {});
    await this.waitForStored(match, before + 1, `${identifier} entries of uid ${uid}`, writer);
  }

  /**
   * Kernel records through the FIFO journald reads as /dev/kmsg, at `level` (0 emerg .. 7 debug).
   * journald reads one record per read(), so each is written once journald has stored the one before.
   */
  async writeKernel(messages: readonly string[], level = 6): Promise<void> {
    if (!this.opts.kernel) throw new Error('TestJournal was made without { kernel: true }');
    for (const message of messages) {
      // /dev/kmsg's record: "<level>,<seq>,<usec since boot>,<flags>;<text>" (Documentation/ABI/testing/dev-kmsg).
      const usec = this.kernelSeq * 1000 + 1_000_000;
      // Non-blocking: with no journald holding the FIFO open the write fails instead of hanging.
      const fd = fs.openSync(
        path.join(this.workDir, 'kmsg'),
        fs.constants.O_WRONLY | fs.constants.O_NONBLOCK,
      );
      try {
        fs.writeSync(fd, `${level},${this.kernelSeq++},${usec},-;${message}\n`);
      } finally {
        fs.closeSync(fd);
      }
      this.kernelWritten++;
      await this.waitForStored(['_TRANSPORT=kernel'], this.kernelWritten, 'kernel records');
    }
  }

  /** How many stored entries of this journal match every `FIELD=value` in `match`. */
  private async stored(match: readonly string[]): Promise<number> {
    const r = await run('journalctl', [`--directory=${this.directory}`, '--output=cat', ...match]);
    return r.stdout.split('\n').filter((l) => l !== '').length;
  }

  /** Waits until `count` entries match; a `writer` that exits non-zero meanwhile ends the wait. */
  private async waitForStored(
    match: readonly string[],
    count: number,
    what: string,
    writer?: Promise<{ code: number; stderr: string }>,
  ): Promise<void> {
    let failed: string | undefined;
    writer?.then(
      (r) => {
        if (r.code !== 0) failed = `exited ${r.code}: ${r.stderr}`;
      },
      (err: unknown) => {
        failed = String(err);
      },
    );
    const deadline = Date.now() + 15_000;
    for (;;) {
      const stored = await this.stored(match);
      if (stored >= count) return;
      if (failed) throw new Error(`the writer of ${what} ${failed}`);
      if (Date.now() > deadline) throw new Error(`journald stored ${stored} of ${count} ${what}`);
      await sleep(20);
    }
  }

  /** Removes this test's journal files and the unit cgroups it made. */
  cleanup(): void {
    fs.rmSync(this.directory, { recursive: true, force: true });
    for (const dir of [...this.made].sort((a, b) => b.length - a.length)) fs.rmdirSync(dir);
    this.made.length = 0;
  }
}
