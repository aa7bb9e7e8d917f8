/**
 * The machine-wide lock every writer of /dev/kmsg floods takes (`flock /tmp/kmsg-bench.lock <cmd>`), so
 * two floods never overlap and no test reads another's lines. Node has no flock(2): a `flock` process
 * holds the lock for us and keeps it until its stdin closes, which also happens when this process dies.
 */
import { spawn } from 'node:child_process';

export const KMSG_LOCK = '/tmp/kmsg-bench.lock';

export interface KmsgLock {
  /** How long acquiring the lock waited for other holders. */
  readonly waitedMs: number;
  release(): Promise<void>;
}

export async function holdKmsgLock(path = KMSG_LOCK): Promise<KmsgLock> {
  const started = Date.now();
  // `cat` waits on the pipe from us: closing it (or our exit) ends cat and with it the lock.
  const child = spawn('flock', [path, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('error', reject);
    void exited.then((code) => reject(new Error(`flock ${path} exited ${code} before locking`)));
  });
  return {
    waitedMs: Date.now() - started,
    async release() {
      child.stdin.end();
      await exited;
    },
  };
}
