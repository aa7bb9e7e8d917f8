/**
 * `npm run test:gpu` on this machine (test/gpu/README.md): the dry run exercises every step but the CUDA
 * fault (the fake NVML with 8 GPUs, a FIFO as /dev/kmsg, the H200's real Xid records and NVML events);
 * its negative control writes nothing and must fail; and a machine without NVML says so and passes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { REPO } from '../support/agent-process.ts';

const RUNNER = join(REPO, 'test', 'gpu', 'run.ts');

/** Runs the script as `npm run test:gpu` does: plain node, no tsx (it must run where node_modules is not). */
function runGpuTest(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`test:gpu did not end within 240 s:\n${out}`));
    }, 240_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

// The kit (agent bundle, probe, native addons) once for the file, so each test runs as on a GPU machine.
before(() => {
  execFileSync(process.execPath, ['--import', 'tsx', join(REPO, 'test', 'gpu', 'kit.ts')], {
    cwd: REPO,
    stdio: 'ignore',
  });
});

/** The lines of one Xid's block in the table. */
function xidBlock(out: string, xid: number): string {
  const start = out.indexOf(`-- Xid ${xid}:`);
  assert.ok(start >= 0, `no block for Xid ${xid}:\n${out}`);
  return out.slice(start, out.indexOf('\n--', start + 1));
}

test('test:gpu dry run: the agent sees Xid 31 and 43 through the kernel log and NVML, and the table shows every part', async () => {
  const { code, out } = await runGpuTest(['--dry-run', '--gpus=8', '--no-build']);
  assert.equal(code, 0, out);
  for (const xid of [31, 43]) {
    const block = xidBlock(out, xid);
    assert.match(block, /kernel log +SEEN /, block);
    assert.match(block, /NVML +SEEN +1 XidCriticalError event/, block);
    // One event per Xid: exactly one path's report is the event, the other's the dropped duplicate.
    assert.equal(block.match(/first \(evidence/g)?.length, 1, block);
  }
  // Xid 31 reaches the agent through the kernel log first, Xid 43 through NVML first: both orders.
  assert.match(xidBlock(out, 31), /kernel log +SEEN +event NVRMXid31 first \(evidence kmsg\/kernel\)/);
  assert.match(xidBlock(out, 31), /NVML +SEEN .*dropped as the Xid the kernel log reported first/);
  assert.match(xidBlock(out, 43), /NVML +SEEN .*event NVRMXid43 first \(evidence nvml\//);
  assert.match(
    xidBlock(out, 43),
    /kernel log +SEEN +matched NVRMXid43; dropped as the Xid NVML reported first/,
  );
  assert.match(out, /-- \/conditions\n {3}GPUUnhealthy +False/);
  assert.match(out, /npd_gpu_xid_total\{code="31"\} 1\n/);
  assert.match(out, /npd_gpu_xid_total\{code="43"\} 1\n/);
  assert.match(out, /NVML GPUs 8, on the PCI bus 8/);
  assert.match(out, /GPU 7 NVIDIA H200 00000000:00:0d\.0/i);
  assert.match(out, /== PASS: 2 Xid\(s\) made, each seen by the agent/);
});

test('test:gpu dry run, negative control: when the stand-in writes no record and no event, the run fails', async () => {
  const { code, out } = await runGpuTest(['--dry-run=silent', '--gpus=1', '--wait-seconds=2', '--no-build']);
  assert.equal(code, 1, out);
  assert.match(xidBlock(out, 31), /kernel log +NOT SEEN/);
  assert.match(xidBlock(out, 31), /NVML +NOT SEEN/);
  assert.match(out, /== FAIL: the agent saw Xid 31, 43 through neither the kernel log nor NVML/);
});

test('test:gpu without NVML (no libnvidia-ml.so.1 here): says so and exits 0', async () => {
  const missing = '/nonexistent/libnvidia-ml.so.1';
  const { code, out } = await runGpuTest(['--no-build'], { NPD_GPU_NVML_LIBRARY: missing });
  assert.equal(code, 0, out);
  assert.match(out, /test:gpu: no NVIDIA GPU here \(no_library: \/nonexistent\/libnvidia-ml\.so\.1: /);
  assert.doesNotMatch(out, /-- Xid/);
});
