/**
 * Issue 38 item 1 as it really happens: a program run as uid 65534 crashes in a file it named after a
 * GPU failure, the kernel prints its segfault report on the real /dev/kmsg, and the agent's kmsg source
 * with the shipped gpu.yaml raises nothing and counts the discarded match. Control: the real kernel
 * wording, written to /dev/kmsg as root with the same marker, raises GPUUnhealthy.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { silentLogger } from '../../../../src/core/logger.ts';
import { createRegistry } from '../../../../src/core/metrics.ts';
import type { Status } from '../../../../src/core/types.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { ProblemMetrics } from '../../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { createKmsgSource } from '../../../../src/sources/kmsg/source.ts';
import { seriesValue } from '../../../support/fake-node.ts';

const DEVICE = '/dev/kmsg';
const GPU_RULES = fileURLToPath(new URL('../../../../rules/gpu.yaml', import.meta.url));
const CRASH = 'int main(void) { *(volatile int *)0 = 1; return 0; }\n';

/** Why the attack cannot be run here, probed rather than guessed. */
function unusableReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (setpriv to uid 65534, writing /dev/kmsg)';
  try {
    closeSync(openSync(DEVICE, constants.O_RDONLY | constants.O_NONBLOCK));
    closeSync(openSync(DEVICE, constants.O_WRONLY));
  } catch (err) {
    return `${DEVICE} not readable and writable here: ${(err as Error).message}`;
  }
  if (readFileSync('/proc/sys/debug/exception-trace', 'utf8').trim() !== '1')
    return 'debug.exception-trace is off: the kernel prints no segfault report';
  for (const tool of ['gcc', 'setpriv']) if (spawnSync(tool, ['--version']).status !== 0) return `no ${tool}`;
  return undefined;
}

/** A static program that writes to address 0, copied to `name` in a directory uid 65534 can enter. */
function crashingProgram(dir: string, name: string): string {
  writeFileSync(join(dir, 'crash.c'), CRASH);
  const built = spawnSync('gcc', ['-static', '-O0', '-o', join(dir, 'crash'), join(dir, 'crash.c')]);
  assert.equal(built.status, 0, `gcc: ${built.stderr}`);
  const path = join(dir, name);
  copyFileSync(join(dir, 'crash'), path);
  chmodSync(path, 0o755);
  chmodSync(dir, 0o755);
  return path;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}

it('a segfault report of an unprivileged program named after Xid 79 raises no GPUUnhealthy', async (t) => {
  const reason = unusableReason();
  if (reason) {
    t.skip(reason);
    return;
  }
  const marker = randomBytes(6).toString('hex');
  const text = `NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus. m${marker}`;
  const dir = mkdtempSync(join(tmpdir(), 'npd-quoted-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const program = crashingProgram(dir, text);

  const [loaded] = loadConfigs([{ file: GPU_RULES }], [systemLogConfigKind]);
  // New records only: nothing another test left in the ring takes part.
  const config = { ...(loaded?.config as LogMonitorConfig), lookbackMs: 0 };
  const registry = createRegistry();
  const logger = silentLogger();
  const source = createKmsgSource(config, { clock: systemClock, logger, registry, paths: hostPaths('/') });
  const monitor = new SystemLogMonitor(config, source, {
    clock: systemClock,
    registry,
    logger,
    problemMetrics: new ProblemMetrics(registry),
  });
  const statuses: Status[] = [];
  await monitor.start((s) => statuses.push(s));
  t.after(() => monitor.stop());
  assert.ok(await until(() => monitor.health().up && monitor.health().healthy, 5000), 'the reader is up');
  await sleep(200);
  const gpu = () => statuses.at(-1)?.conditions.find((c) => c.type === 'GPUUnhealthy')?.status;
  const untrusted = async () => {
    let n = 0;
    for (const rule of ['NVRMXid79', 'NvidiaXID79Error'])
      n +=
        (await seriesValue(registry, 'npd_log_lines_untrusted_total', { source: config.source, rule })) ?? 0;
    return n;
  };

  const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', program]);
  assert.equal(run.signal, 'SIGSEGV', 'the program crashed as uid 65534');
  // Both Xid 79 rules of gpu.yaml (the event NVRMXid79 and the condition NvidiaXID79Error) matched the report as read.
  assert.ok(await until(async () => (await untrusted()) >= 2, 10_000), 'the discarded matches were counted');
  assert.equal(gpu(), 'False', 'no GPUUnhealthy from the segfault report');
  assert.deepEqual(
    statuses.flatMap((s) => s.events).filter((e) => e.message.includes(marker)),
    [],
  );

  writeFileSync(DEVICE, `<3>${text}\n`);
  assert.ok(await until(() => gpu() === 'True', 10_000), 'control: the real kernel wording raises it');
  assert.equal(await untrusted(), 2);
});
