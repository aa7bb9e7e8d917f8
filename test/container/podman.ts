// The built image run with podman and runc, attached, so the test sees its log and exit code.
// crun refuses these machines' hybrid cgroup layout, and root here lacks CAP_SYS_RESOURCE, so podman's
// default rlimits cannot be set: explicit, lower ones are (/work/shared/reference/container-image.md).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { which } from '../deploy/sandbox.ts';
import { waitFor } from '../support/agent-process.ts';

export const IMAGE = process.env.NPD_IMAGE ?? 'localhost/node-problem-detector:ci';
export const RUNTIME_FLAGS = ['--runtime=runc', '--ulimit=nofile=20000:20000', '--ulimit=nproc=4096:4096'];

/** Why containers cannot run here, or false. A missing image is a failure, not a reason to skip. */
export function containerSkip(): string | false {
  if (process.platform !== 'linux') return 'Linux only';
  if (process.getuid?.() !== 0) return 'needs root (podman with host devices and mounts)';
  for (const cmd of ['podman', 'runc', 'skopeo']) if (!which(cmd)) return `${cmd} not found`;
  return false;
}

/** `entrypoint args...` (default: the image's ENTRYPOINT) in a throw-away container; its stdout. */
export function runImage(
  image: string,
  flags: readonly string[],
  entrypoint: string | undefined,
  args: readonly string[],
): string {
  const ep = entrypoint ? [`--entrypoint=${entrypoint}`] : [];
  return execFileSync(
    'podman',
    ['run', '--rm', '--pull=never', ...RUNTIME_FLAGS, ...flags, ...ep, image, ...args],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

export function imageExists(image = IMAGE): boolean {
  try {
    execFileSync('podman', ['image', 'exists', image], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface Container {
  readonly name: string;
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the exit code of `podman run`, which is the container's. */
  readonly exited: Promise<number | null>;
  /** What kubelet does to stop a pod: SIGTERM to PID 1, then the exit code (SIGKILL after `graceMs`). */
  terminate(graceMs: number): Promise<number | null>;
  remove(): void;
}

/** `rm: false` keeps the container after it exits, so `podman inspect` still reads its state. */
export function runContainer(
  flags: readonly string[],
  args: readonly string[],
  opts: { rm?: boolean } = {},
): Container {
  const name = `npd-ct-${randomBytes(4).toString('hex')}`;
  const rm = opts.rm === false ? [] : ['--rm'];
  const argv = ['run', ...rm, `--name=${name}`, '--pull=never', ...RUNTIME_FLAGS, ...flags, IMAGE, ...args];
  const child = spawn('podman', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const remove = () => {
    try {
      execFileSync('podman', ['rm', '--force', '--time=0', name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  };
  return {
    name,
    child,
    output: () => out,
    exited,
    async terminate(graceMs) {
      execFileSync('podman', ['kill', '--signal=TERM', name], { stdio: 'ignore' });
      const timer = setTimeout(remove, graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    remove,
  };
}

/** Waits until the container's status server answers at all. */
export async function waitForListener(c: Container, url: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      if (c.child.exitCode !== null) throw new Error(`container exited ${c.child.exitCode}`);
      return (await fetch(url)).status > 0;
    },
    timeoutMs,
    c.output,
  );
}

/** What `podman inspect` says of a container's state (run with `rm: false` to read it after exit). */
export interface ContainerState {
  readonly status: string;
  readonly pid: number;
  readonly oomKilled: boolean;
  readonly exitCode: number;
  readonly restarts: number;
}

export function inspectState(name: string): ContainerState {
  const out = execFileSync('podman', ['inspect', '--format=json', name], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [c] = JSON.parse(out) as {
    State: { Status: string; Pid: number; OOMKilled: boolean; ExitCode: number };
    RestartCount?: number;
  }[];
  if (!c) throw new Error(`podman inspect ${name}: no such container`);
  const s = c.State;
  return {
    status: s.Status,
    pid: s.Pid,
    oomKilled: s.OOMKilled,
    exitCode: s.ExitCode,
    restarts: c.RestartCount ?? 0,
  };
}
