/**
 * The real fault: xid-fault.py in its own process (the driver kills the CUDA context of the process that
 * faults, so each Xid gets a fresh one), bounded in time. It never resets or reconfigures the GPU.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** What xid-fault.py printed: how it made the fault, the CUDA error it got, the pid the driver names. */
export interface FaultOutcome {
  readonly xid: number;
  readonly way: string | null;
  readonly error: string | null;
  readonly pid: number | null;
  /** When the fault program started (epoch ms): NVML events after it belong to it. */
  readonly startedAt: number;
  /** Why no way ran, or why the program failed. */
  readonly unavailable?: readonly string[];
}

const SCRIPT = join(import.meta.dirname, 'xid-fault.py');

function parseOutcome(xid: number, startedAt: number, stdout: string, why: string): FaultOutcome {
  // The outcome line, wherever it is: a CUDA library may print on exit after it (a dead context's cleanup).
  for (const line of stdout.trim().split('\n').reverse()) {
    try {
      const o = JSON.parse(line) as Omit<FaultOutcome, 'startedAt'>;
      if (o.xid === xid) return { ...o, startedAt };
    } catch {
      // not the outcome line
    }
  }
  return { xid, way: null, error: null, pid: null, startedAt, unavailable: [why] };
}

/**
 * Runs `python3 xid-fault.py <xid>`; resolves whatever happens (a missing python3 is an outcome too).
 * Compiling with NVRTC or nvcc and the first CUDA context take seconds; `timeoutMs` keeps a hung driver
 * from hanging the run.
 */
export function makeXid(
  xid: 31 | 43,
  timeoutMs: number,
  python = process.env.PYTHON ?? 'python3',
): Promise<FaultOutcome> {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const child = spawn(python, [SCRIPT, String(xid)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(parseOutcome(xid, startedAt, '', `${python}: ${e.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const why = `xid-fault.py exited ${code ?? signal}: ${err.trim().slice(-500)}`;
      resolve(parseOutcome(xid, startedAt, out, why));
    });
  });
}
