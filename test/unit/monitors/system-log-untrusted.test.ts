/**
 * What a line from an untrusted writer (LogLine.untrusted, set by the journald source) may still do in
 * the shipped rule files: at most an info event; every other match is counted and logged, sampled.
 * Each refusal has its control: the same line from the trusted writer still does what it did.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { createLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import { hostPaths } from '../../../src/host/paths.ts';
import type { Status } from '../../../src/core/types.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { systemLogMonitorType } from '../../../src/monitors/system-log/type.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';
import { seriesValue } from '../../support/fake-node.ts';

const T0 = Date.UTC(2026, 0, 1);
const RULES = fileURLToPath(new URL('../../../rules/', import.meta.url));
const WHY = '_TRANSPORT=syslog _SYSTEMD_UNIT=- _UID=65534 _COMM=logger _PID=441 fails trustedWriter';
const SMART = 'Device: /dev/sda [SAT], FAILED SMART self-check. BACK UP DATA NOW!';
const STARTED = 'Started kubelet.service - kubelet: The Kubernetes Node Agent.';
const STOPPING = 'Stopping kubelet.service - kubelet: The Kubernetes Node Agent...';

function setup(file: string) {
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
  const deps = { clock, registry, logger, problemMetrics: new ProblemMetrics(registry) };
  const monitor = new SystemLogMonitor(config, source, deps);
  const statuses: Status[] = [];
  void monitor.start((s) => statuses.push(s));
  const line = (message: string, untrusted?: string) => {
    clock.advance(1000);
    push([
      untrusted === undefined
        ? { timestamp: clock.now(), message }
        : { timestamp: clock.now(), message, untrusted },
    ]);
  };
  const condition = (type: string) => statuses.at(-1)?.conditions.find((c) => c.type === type)?.status;
  const events = () => statuses.flatMap((s) => s.events);
  const untrusted = (rule: string) =>
    seriesValue(registry, 'npd_log_lines_untrusted_total', { source: config.source, rule });
  const warnings = () => logged.filter((l) => String(l.msg).includes('untrusted writer'));
  return { line, condition, events, untrusted, warnings, clock };
}

describe('untrusted journal lines in the shipped rules', () => {
  it('smartd.yaml: a forged FAILED SMART line sets no DiskSMARTFailure and is counted; the real one does', async () => {
    const h = setup('smartd.yaml');
    assert.equal(await h.untrusted('SMARTSelfCheckFailed'), 0, 'the series exists before any match');
    h.line(SMART, WHY);
    h.line(SMART, WHY);
    assert.equal(h.condition('DiskSMARTFailure'), 'False');
    assert.deepEqual(h.events(), []);
    assert.equal(await h.untrusted('SMARTSelfCheckFailed'), 2);
    assert.equal(h.warnings().length, 1, 'logged once, sampled');
    assert.equal(h.warnings()[0]?.why, WHY);
    h.line(SMART);
    assert.equal(h.condition('DiskSMARTFailure'), 'True', 'control: the trusted writer still raises it');
    assert.equal(await h.untrusted('SMARTSelfCheckFailed'), 2);
  });

  it('systemd-counter.yaml: forged starts raise no FrequentKubeletRestart; real ones do', async () => {
    const h = setup('systemd-counter.yaml');
    for (let i = 0; i < 5; i++) h.line(STARTED, WHY);
    assert.equal(h.condition('FrequentKubeletRestart'), 'False');
    assert.equal(await h.untrusted('FrequentKubeletRestart'), 5);
    for (let i = 0; i < 5; i++) h.line(STARTED);
    assert.equal(h.condition('FrequentKubeletRestart'), 'True', 'control: five real starts');
  });

  it('systemd-counter.yaml: a forged "Stopping kubelet" cancels no real start of a loop', async () => {
    const h = setup('systemd-counter.yaml');
    for (let i = 0; i < 4; i++) h.line(STARTED);
    h.line(STOPPING, WHY);
    h.line(STARTED);
    assert.equal(h.condition('FrequentKubeletRestart'), 'True');
    assert.equal(await h.untrusted('FrequentKubeletRestart'), 1, 'the revert pattern matched: counted');
    // Control: the same Stopping line from PID 1 does cancel one start.
    const c = setup('systemd-counter.yaml');
    for (let i = 0; i < 4; i++) c.line(STARTED);
    c.line(STOPPING);
    c.line(STARTED);
    assert.equal(c.condition('FrequentKubeletRestart'), 'False');
  });

  it('systemd.yaml: a forged start failure gives no event; a forged start still gives its info event', async () => {
    const h = setup('systemd.yaml');
    const failed = 'Failed to start containerd.service - containerd container runtime.';
    h.line(failed, WHY);
    assert.deepEqual(h.events(), []);
    assert.equal(await h.untrusted('ContainerdStartFailed'), 1);
    h.line(STARTED, WHY);
    assert.deepEqual(
      h.events().map((e) => [e.reason, e.severity]),
      [['KubeletStart', 'info']],
    );
    assert.equal(await h.untrusted('KubeletStart'), undefined, 'an allowed rule has no refusal series');
    h.line(failed);
    assert.deepEqual(h.events().at(-1)?.reason, 'ContainerdStartFailed', 'control: PID 1 line');
    assert.equal(h.events().at(-1)?.severity, 'warn');
  });
});

describe('--trust-journal-writers (MonitorDeps.trustJournalWriters)', () => {
  function created(trustJournalWriters: boolean) {
    const [loaded] = loadConfigs([{ file: `${RULES}smartd.yaml` }], [systemLogConfigKind]);
    const seen: LogMonitorConfig[] = [];
    const source: LogSource = {
      start: () => {},
      stop: async () => {},
      health: () => ({ up: true, healthy: true }),
    };
    const type = systemLogMonitorType({
      kmsg: undefined,
      filelog: undefined,
      journald: (config) => {
        seen.push(config);
        return source;
      },
    });
    const registry = createRegistry();
    const deps = {
      clock: new FakeClock(T0),
      registry,
      logger: createLogger({ write: () => {} }),
      paths: hostPaths('/'),
      problemMetrics: new ProblemMetrics(registry),
      trustJournalWriters,
    };
    const monitor = type.create(loaded?.config as LogMonitorConfig, deps) as SystemLogMonitor;
    return { seen, monitor, reloaded: loaded?.config as LogMonitorConfig };
  }

  it('gives the source trustedWriter any, and a reload of the same file keeps the reader', () => {
    const on = created(true);
    assert.equal(on.seen[0]?.trustedWriter, 'any');
    assert.equal(on.monitor.reconfigure(on.reloaded), true, 'the same reading after a reload');
    const off = created(false);
    assert.deepEqual(off.seen[0]?.trustedWriter, {
      _SYSTEMD_UNIT: ['smartd.service', 'smartmontools.service'],
      _UID: ['0'],
    });
    assert.equal(off.monitor.reconfigure(off.reloaded), true);
  });
});
