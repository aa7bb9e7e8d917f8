/**
 * Issue 38 items 1 and 2 in the shipped rules: text a kernel record or a daemon line quotes from user
 * space (a crashing program's name, a pod's command) raises nothing and is counted in
 * npd_log_lines_untrusted_total, logged once per rule; each has its control, the real line from the
 * kernel or the daemon, which still raises the condition. The monitor classifies the lines by its
 * plugin, as in the agent; --trust-quoted-text gives NPD's matching back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';
import { seriesValue } from '../../support/fake-node.ts';

const T0 = Date.UTC(2026, 0, 1);
const RULES = fileURLToPath(new URL('../../../rules/', import.meta.url));

function setup(file: string, trustQuotedText?: boolean) {
  const [loaded] = loadConfigs([{ file: `${RULES}${file}` }], [systemLogConfigKind]);
  const config = loaded?.config as LogMonitorConfig;
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  const logged: Record<string, unknown>[] = [];
  const logger = createLogger({ format: 'json', write: (l) => logged.push(JSON.parse(l)) });
  let push: LinesHandler = () => {};
  const source: LogSource = {
    start: (onLines) => {
      push = onLines;
    },
    stop: async () => {},
    health: () => ({ up: true, healthy: true }),
  };
  const monitor = new SystemLogMonitor(config, source, {
    clock,
    registry,
    logger,
    problemMetrics: new ProblemMetrics(registry),
    trustQuotedText,
  });
  const statuses: Status[] = [];
  void monitor.start((s) => statuses.push(s));
  return {
    line(message: string) {
      clock.advance(1000);
      push([{ timestamp: clock.now(), message }]);
    },
    condition: (type: string) => statuses.at(-1)?.conditions.find((c) => c.type === type),
    events: () => statuses.flatMap((s) => s.events),
    untrusted: (rule: string) =>
      seriesValue(registry, 'npd_log_lines_untrusted_total', { source: config.source, rule }),
    warnings: () => logged.filter((l) => String(l.msg).includes('quotes from user space')),
  };
}

/** The kernel's segfault report of a program whose file is `name` (comm: its first 15 bytes). */
function segfault(name: string): string {
  return `${name.slice(0, 15)}[4242]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in ${name}[1658,401000+78000] likely on CPU 1 (core 1, socket 0)`;
}

interface Case {
  readonly file: string;
  readonly name: string;
  readonly real: string;
  /** The condition the real line raises; none for an event rule (then the event is looked for). */
  readonly type?: string;
  readonly rule: string;
  /** Rules of that reason in the file (an event rule and a condition rule each count). */
  readonly rules: number;
}

const KERNEL: readonly Case[] = [
  {
    file: 'kernel.yaml',
    name: 'Kernel panic - not syncing: Fatal exception',
    real: 'Kernel panic - not syncing: Fatal exception',
    rule: 'KernelPanic',
    rules: 1,
  },
  {
    file: 'readonly.yaml',
    name: 'BTRFS: error (device sda1) in btrfs_commit_transaction:1: errno=-5 IO failure',
    real: 'BTRFS: error (device sda1) in btrfs_commit_transaction:2505: errno=-5 IO failure',
    type: 'ReadonlyFilesystem',
    rule: 'FilesystemIsReadOnly',
    rules: 1,
  },
  {
    file: 'gpu.yaml',
    name: 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.',
    real: 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.',
    type: 'GPUUnhealthy',
    rule: 'NvidiaXID79Error',
    rules: 1,
  },
  {
    file: 'hardware.yaml',
    name: 'nvme nvme0: Removing after probe failure status: -19',
    real: 'nvme nvme0: Removing after probe failure status: -19',
    type: 'NVMeControllerFailed',
    rule: 'NVMeControllerDisabled',
    rules: 1,
  },
];

describe('a crashing program named after a kernel problem (issue 38 item 1)', () => {
  for (const c of KERNEL) {
    it(`${c.file}: the segfault report of "${c.name}" raises no ${c.type ?? c.rule}; the kernel's line does`, async () => {
      const h = setup(c.file);
      const raised = () =>
        c.type ? h.condition(c.type)?.status === 'True' : h.events().some((e) => e.reason === c.rule);
      h.line(segfault(c.name));
      h.line(segfault(c.name));
      assert.equal(raised(), false);
      assert.deepEqual(
        h.events().filter((e) => e.severity === 'warn'),
        [],
      );
      assert.equal(await h.untrusted(c.rule), 2 * c.rules, 'each discarded match is counted');
      assert.equal(h.warnings().filter((w) => w.rule === c.rule).length, 1, 'logged once per rule, sampled');
      h.line(c.real);
      assert.equal(raised(), true, 'control: the real kernel line raises it');
      assert.equal(await h.untrusted(c.rule), 2 * c.rules);
    });
  }

  it('kernel.yaml: a hung task is reported whatever its name, but "docker" as a name is no DockerHung', () => {
    const h = setup('kernel.yaml');
    h.line('INFO: task docker:20744 blocked for more than 120 seconds.');
    assert.deepEqual(
      h.events().map((e) => e.reason),
      ['TaskHung'],
    );
    assert.equal(h.condition('KernelDeadlock')?.status, 'False');
  });
});

const CONTAINERD_FORGED = String.raw`time="2026-01-01T00:00:05Z" level=error msg="StartContainer for \"4f1c2a\" failed" error="failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"failed to load plugin io.containerd.grpc.v1.cri x\": executable file not found in $PATH: unknown"`;
const CONTAINERD_REAL =
  'time="2026-01-01T00:00:06Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" error="invalid plugin config: `systemd_cgroup` only works for runtime io.containerd.runtime.v1.linux"';
const KUBELET_FORGED = String.raw`E0101 00:00:05.000000    1234 log.go:32] "StartContainer from runtime service failed" err="rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"PLEG is not healthy: pleg was last seen active 3m0s ago\": executable file not found in $PATH: unknown" containerID="4f1c2a"`;
const KUBELET_REAL =
  'E0101 00:00:06.000000    1234 kubelet.go:2373] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active 3m15.791311346s ago; threshold is 3m0s"';

describe("a pod's command inside containerd's and the kubelet's lines (issue 38 item 2)", () => {
  it("containerd.yaml: the command raises no ContainerdCRIUnavailable; containerd's own line does", async () => {
    const h = setup('containerd.yaml');
    h.line(CONTAINERD_FORGED);
    assert.equal(h.condition('ContainerdCRIUnavailable')?.status, 'False');
    assert.equal(await h.untrusted('ContainerdCRIPluginFailed'), 1);
    h.line(CONTAINERD_REAL);
    assert.equal(h.condition('ContainerdCRIUnavailable')?.status, 'True', 'control');
  });

  it("kubelet.yaml: the command raises no PLEGUnhealthy; the kubelet's own line does", async () => {
    const h = setup('kubelet.yaml');
    h.line(KUBELET_FORGED);
    assert.equal(h.condition('PLEGUnhealthy')?.status, 'False');
    assert.deepEqual(h.events(), []);
    assert.equal(await h.untrusted('PLEGNotHealthy'), 2, 'the event rule and the condition rule');
    h.line(KUBELET_REAL);
    assert.equal(h.condition('PLEGUnhealthy')?.status, 'True', 'control');
  });
});

describe('--trust-quoted-text', () => {
  it("gives NPD's matching back: the program's name raises the condition, and nothing is counted", async () => {
    const c = KERNEL.find((k) => k.file === 'gpu.yaml') as Case;
    const h = setup(c.file, true);
    h.line(segfault(c.name));
    assert.equal(h.condition('GPUUnhealthy')?.status, 'True');
    assert.equal(await h.untrusted(c.rule), 0);
  });
});
