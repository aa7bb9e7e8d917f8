/**
 * Issue 38 build item 3: each problem a log monitor raises carries its evidence (core/evidence.ts): the
 * monitor's source, its plugin and how far the text that raised it is trusted. The conditions and the
 * events of the shipped rules, through the monitor as the agent builds it, on a fake clock; each flag
 * case has its control, a match the flag was not needed for, which keeps its plain trust.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import type { Evidence } from '../../../src/core/evidence.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { LogLine, Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { withFileWriters, withJournalWriters } from '../../../src/monitors/system-log/untrusted.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';

const T0 = Date.UTC(2026, 0, 1);
const RULES = fileURLToPath(new URL('../../../rules/', import.meta.url));
const BTRFS = 'BTRFS: error (device sda1) in btrfs_commit_transaction:2505: errno=-5 IO failure';
const SMART = 'Device: /dev/sda [SAT], FAILED SMART self-check. BACK UP DATA NOW!';
const SMARTD = { transport: 'stdout', unit: 'smartd.service', uid: '0', comm: 'smartd' };

interface Flags {
  readonly trustQuotedText?: boolean;
  readonly trustJournalWriters?: boolean;
  readonly trustFileWriters?: boolean;
}

function load(file: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file: `${RULES}${file}` }], [systemLogConfigKind]);
  return loaded?.config as LogMonitorConfig;
}

/** The monitor over `config` as systemLogMonitorType builds it (the writer flags applied to the config). */
function setup(config: LogMonitorConfig, flags: Flags = {}) {
  const clock = new FakeClock(T0);
  const registry = createRegistry();
  let push: LinesHandler = () => {};
  const source: LogSource = {
    start: (onLines) => {
      push = onLines;
    },
    stop: async () => {},
    health: () => ({ up: true, healthy: true }),
  };
  const deps = { clock, registry, problemMetrics: new ProblemMetrics(registry), ...flags };
  const flagged = withFileWriters(
    withJournalWriters(config, flags.trustJournalWriters),
    flags.trustFileWriters,
  );
  const monitor = new SystemLogMonitor(flagged, source, deps);
  const statuses: Status[] = [];
  void monitor.start((s) => statuses.push(s));
  return {
    line(message: string, more: Partial<LogLine> = {}) {
      clock.advance(1000);
      push([{ timestamp: clock.now(), message, ...more }]);
    },
    condition: (type: string) => statuses.at(-1)?.conditions.find((c) => c.type === type),
    event: (reason: string) => statuses.flatMap((s) => s.events).find((e) => e.reason === reason),
  };
}

/** The kernel's segfault report of a program whose file is `name` (as system-log-quoted.test.ts). */
function segfault(name: string): string {
  return `${name.slice(0, 15)}[4242]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in ${name}[1658,401000+78000] likely on CPU 1 (core 1, socket 0)`;
}

describe('kmsg evidence', () => {
  it('readonly.yaml: the kernel line raises ReadonlyFilesystem with kmsg/kernel, on the condition and its event', () => {
    const config = load('readonly.yaml');
    const h = setup(config);
    assert.equal(h.condition('ReadonlyFilesystem')?.evidence, undefined, 'the default has none');
    h.line(BTRFS);
    const kernel: Evidence = { source: config.source, plugin: 'kmsg', trust: 'kernel' };
    assert.equal(h.condition('ReadonlyFilesystem')?.status, 'True');
    assert.deepEqual(h.condition('ReadonlyFilesystem')?.evidence, kernel);
    assert.deepEqual(h.event('FilesystemIsReadOnly')?.evidence, kernel);
    assert.equal(h.event('FilesystemIsReadOnly')?.reason, 'FilesystemIsReadOnly', 'reason stays NPD');
  });

  it('--trust-quoted-text: a segfault report named after the problem raises it as trusted-by-flag', () => {
    const config = load('readonly.yaml');
    const h = setup(config, { trustQuotedText: true });
    h.line(segfault('BTRFS: error (device sda1) in btrfs_commit_transaction:1: errno=-5 IO failure'));
    assert.equal(h.condition('ReadonlyFilesystem')?.status, 'True', "NPD's matching, as the flag says");
    assert.deepEqual(h.condition('ReadonlyFilesystem')?.evidence, {
      source: config.source,
      plugin: 'kmsg',
      trust: 'trusted-by-flag',
      flag: '--trust-quoted-text',
    });
  });

  it('--trust-quoted-text control: the real line, and a rule matched outside the quoted name, stay kernel', () => {
    const config = load('readonly.yaml');
    const h = setup(config, { trustQuotedText: true });
    h.line(BTRFS);
    assert.equal(h.condition('ReadonlyFilesystem')?.evidence?.trust, 'kernel');
    // The hung task's name is quoted, but TaskHung matches the kernel's own words around it.
    const k = setup(load('kernel.yaml'), { trustQuotedText: true });
    k.line('INFO: task docker:20744 blocked for more than 120 seconds.');
    assert.deepEqual(k.event('TaskHung')?.evidence, {
      source: 'kernel-monitor',
      plugin: 'kmsg',
      trust: 'kernel',
    });
  });
});

describe('journald evidence', () => {
  it("smartd.yaml: the entry that passed the file's trustedWriter list is listed-writer, with its writer", () => {
    const config = load('smartd.yaml');
    const h = setup(config);
    h.line(SMART, { writer: SMARTD });
    const listed = { source: config.source, plugin: 'journald', trust: 'listed-writer', writer: SMARTD };
    assert.equal(h.condition('DiskSMARTFailure')?.status, 'True');
    assert.deepEqual(h.condition('DiskSMARTFailure')?.evidence, listed);
    assert.deepEqual(h.event('SMARTSelfCheckFailed')?.evidence, listed);
  });

  it('an NPD-style config (trustedWriter system by default) says system-writer', () => {
    const config = { ...load('smartd.yaml'), trustedWriter: 'system' as const };
    const h = setup(config);
    h.line(SMART, { writer: SMARTD });
    assert.equal(h.condition('DiskSMARTFailure')?.evidence?.trust, 'system-writer');
  });

  it('--trust-journal-writers: the entry counts whoever wrote it, and says the flag let it', () => {
    const config = load('smartd.yaml');
    const h = setup(config, { trustJournalWriters: true });
    h.line(SMART);
    assert.equal(h.condition('DiskSMARTFailure')?.status, 'True');
    assert.deepEqual(h.condition('DiskSMARTFailure')?.evidence, {
      source: config.source,
      plugin: 'journald',
      trust: 'trusted-by-flag',
      flag: '--trust-journal-writers',
    });
  });

  it('systemd.yaml: an untrusted writer still gives its info event, marked untrusted-writer; PID 1 is listed-writer', () => {
    const config = load('systemd.yaml');
    const h = setup(config);
    const started = 'Started kubelet.service - kubelet: The Kubernetes Node Agent.';
    h.line(started, { untrusted: '_UID=65534 fails trustedWriter' });
    assert.deepEqual(h.event('KubeletStart')?.evidence, {
      source: config.source,
      plugin: 'journald',
      trust: 'untrusted-writer',
    });
    const c = setup(config);
    const pid1 = { transport: 'journal', unit: 'init.scope', uid: '0', comm: 'systemd' };
    c.line(started, { writer: pid1 });
    assert.equal(c.event('KubeletStart')?.evidence?.trust, 'listed-writer', 'control: the trusted writer');
  });
});

describe("a daemon's quoted text under --trust-quoted-text", () => {
  // A pod's command in containerd's line (system-log-quoted.test.ts), and containerd's own wording.
  const FORGED = String.raw`time="2026-01-01T00:00:05Z" level=error msg="StartContainer for \"4f1c2a\" failed" error="failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"failed to load plugin io.containerd.grpc.v1.cri x\": executable file not found in $PATH: unknown"`;
  const REAL =
    'time="2026-01-01T00:00:06Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" error="invalid plugin config: `systemd_cgroup` only works for runtime io.containerd.runtime.v1.linux"';
  const CONTAINERD = { transport: 'stdout', unit: 'containerd.service', uid: '0', comm: 'containerd' };

  it('containerd.yaml: the command raises ContainerdCRIUnavailable as trusted-by-flag, its writer kept', () => {
    const config = load('containerd.yaml');
    const h = setup(config, { trustQuotedText: true });
    h.line(FORGED, { writer: CONTAINERD });
    assert.equal(h.condition('ContainerdCRIUnavailable')?.status, 'True');
    assert.deepEqual(h.condition('ContainerdCRIUnavailable')?.evidence, {
      source: config.source,
      plugin: 'journald',
      trust: 'trusted-by-flag',
      writer: CONTAINERD,
      flag: '--trust-quoted-text',
    });
  });

  it("control: containerd's own line is system-writer under the flag too", () => {
    const config = load('containerd.yaml');
    const h = setup(config, { trustQuotedText: true });
    h.line(REAL, { writer: CONTAINERD });
    assert.deepEqual(h.condition('ContainerdCRIUnavailable')?.evidence, {
      source: config.source,
      plugin: 'journald',
      trust: 'system-writer',
      writer: CONTAINERD,
    });
  });
});

describe('filelog evidence', () => {
  /** readonly.yaml's rules over a file, as a copy that trusts its file's writers would have them. */
  function fileConfig(trustedWriter?: 'any'): LogMonitorConfig {
    const { trustedWriter: _, ...base } = load('readonly.yaml');
    const pluginConfig = { timestamp: '^.{15}', message: 'kernel: (.*)', timestampFormat: 'Jan _2 15:04:05' };
    const config = { ...base, plugin: 'filelog' as const, source: 'readonly-file', pluginConfig };
    return trustedWriter === undefined ? config : { ...config, trustedWriter };
  }

  it("trustedWriter any: a file's line is file evidence, whoever wrote the file", () => {
    const h = setup(fileConfig('any'));
    h.line(BTRFS);
    assert.deepEqual(h.condition('ReadonlyFilesystem')?.evidence, {
      source: 'readonly-file',
      plugin: 'filelog',
      trust: 'file',
    });
  });

  it('--trust-file-writers: the config that did not opt in raises it, and says the flag let it', () => {
    const h = setup(fileConfig(), { trustFileWriters: true });
    h.line(BTRFS);
    assert.equal(h.condition('ReadonlyFilesystem')?.status, 'True');
    assert.deepEqual(h.condition('ReadonlyFilesystem')?.evidence, {
      source: 'readonly-file',
      plugin: 'filelog',
      trust: 'trusted-by-flag',
      flag: '--trust-file-writers',
    });
  });

  it("disk.yaml (no opt-in): the file's line gives its info event, marked untrusted-writer", () => {
    const config = load('disk.yaml');
    const h = setup(config);
    h.line(SMART);
    assert.equal(h.event('SMARTSelfCheckFailed')?.severity, 'info');
    assert.deepEqual(h.event('SMARTSelfCheckFailed')?.evidence, {
      source: config.source,
      plugin: 'filelog',
      trust: 'untrusted-writer',
    });
  });
});
