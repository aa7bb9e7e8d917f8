/**
 * Issue 40 sections 1 and 2: the kernel log's Xid events carry the Xid they report (code, bus id, and
 * the UUID the driver printed earlier in the boot), read by monitors/system-log/xid-occurrence.ts from
 * the shipped rules/gpu.yaml's `occurrence: xid` rules, never from the process name the line quotes;
 * then through the detector with the one-event-per-Xid stage beside an NVML monitor's events.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ProblemDetector } from '../../../src/agent/detector.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRegistry } from '../../../src/core/metrics.ts';
import type { ProblemEvent, Status } from '../../../src/core/types.ts';
import { XidOnce, xidOnceOutlet } from '../../../src/events/xid-once.ts';
import { ProblemMetrics } from '../../../src/metrics/problem-metrics.ts';
import { SystemLogMonitor } from '../../../src/monitors/system-log/monitor.ts';
import { systemLogConfigKind, validateLogMonitor } from '../../../src/monitors/system-log/schema.ts';
import { parseGpuIdentity, parseXid } from '../../../src/monitors/system-log/xid-occurrence.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import type { LinesHandler, LogSource } from '../../../src/sources/source.ts';
import { seriesValue } from '../../support/fake-node.ts';

const T0 = Date.UTC(2026, 0, 1);
const GPU_YAML = fileURLToPath(new URL('../../../rules/gpu.yaml', import.meta.url));
const UUID = 'GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3';

/** The real H200 records (shared fixture gpu-h200/driver-and-xid.kmsg, as the golden case holds them). */
const H200 = readFileSync(
  fileURLToPath(new URL('../../golden/cases/rules-gpu-h200/input.log', import.meta.url)),
  'utf8',
)
  .split('\n')
  .filter((l) => l.includes(';'))
  .map((l) => l.slice(l.indexOf(';') + 1));
const IDENTITY = H200.find((l) => l.startsWith('NVRM: GPU at ')) as string;
const XID31 = H200.find((l) => l.startsWith('NVRM: Xid (PCI:0000:00:06): 31,')) as string;
const XID43 = H200.find((l) => l.startsWith('NVRM: Xid (PCI:0000:00:06): 43,')) as string;

/** A program named after an Xid 79 that crashes: the kernel's segfault report quotes its file name. */
const SEGFAULT_79 =
  'NVRM: Xid (PCI:[4242]: segfault at 0 ip 0000000000401658 sp 00007ffd589c5780 error 6 in NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.[1658,401000+78000] likely on CPU 1 (core 1, socket 0)';

describe('parseXid and parseGpuIdentity: the driver’s own words', () => {
  it('reads the real H200 lines', () => {
    assert.deepEqual(parseXid(XID31), { code: 31, busId: '0000:00:06' });
    assert.deepEqual(parseXid(XID43), { code: 43, busId: '0000:00:06' });
    assert.deepEqual(parseGpuIdentity(IDENTITY), { busId: '0000:00:06', uuid: UUID });
  });

  it('reads the MIG form (NVIDIA’s A100 memory error doc) and the old form (NVIDIA’s Xid doc)', () => {
    const mig =
      'NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No';
    assert.deepEqual(parseXid(mig), { code: 94, busId: '0000:01:00' });
    assert.deepEqual(parseXid('NVRM: Xid (0000:03:00): 14, Channel 00000001'), {
      code: 14,
      busId: '0000:03:00',
    });
    assert.deepEqual(parseGpuIdentity('NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7'), {
      busId: '0000:03:00',
      uuid: 'GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7',
    });
  });

  it('reads nothing from look-alikes: the GSP rate-limit line, the serial number, the fallen-off-bus line', () => {
    // kernel_gsp.c _kgspRpcIncrementTimeoutCountAndRateLimitPrints(): names a GPU "at PCI:", no UUID.
    const rate =
      'NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:00:06 (printing 1 of every 5).  The GPU likely needs to be reset.';
    assert.equal(parseGpuIdentity(rate), undefined);
    assert.equal(parseGpuIdentity('NVRM: GPU Board Serial Number: 1654024032120'), undefined);
    assert.equal(parseXid('NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1474)'), undefined);
    assert.equal(parseXid(SEGFAULT_79), undefined);
  });
});

describe('the rule marker occurrence: xid', () => {
  const config = (occurrence: unknown) => ({
    plugin: 'kmsg',
    rules: [{ type: 'temporary', reason: 'NVRMXid', pattern: 'NVRM: Xid .*', occurrence }],
  });

  it('is refused with any other value, naming the file and the field; xid loads', () => {
    const { issues } = validateLogMonitor(config('nvml'), 'gpu.yaml');
    assert.deepEqual(
      issues.map((i) => [i.file, i.path]),
      [['gpu.yaml', 'rules[0].occurrence']],
    );
    const ok = validateLogMonitor(config('xid'), 'gpu.yaml');
    assert.deepEqual(ok.issues, []);
    assert.equal(ok.config?.rules[0]?.occurrence, 'xid');
  });
});

/** rules/gpu.yaml's monitor over a source the test pushes kmsg records into. */
function gpuMonitor(opts: { trustQuotedText?: boolean; emit?: (s: Status) => void } = {}) {
  const [loaded] = loadConfigs([{ file: GPU_YAML }], [systemLogConfigKind]);
  const config = loaded?.config as LogMonitorConfig;
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
  const monitor = new SystemLogMonitor(config, source, {
    clock,
    registry,
    problemMetrics: new ProblemMetrics(registry),
    trustQuotedText: opts.trustQuotedText,
  });
  const statuses: Status[] = [];
  void monitor.start((s) => {
    statuses.push(s);
    opts.emit?.(s);
  });
  return {
    clock,
    source: config.source,
    records(...messages: string[]) {
      clock.advance(6);
      push(messages.map((message) => ({ timestamp: clock.now(), message })));
    },
    events: () => statuses.flatMap((s) => s.events),
    condition: () => statuses.at(-1)?.conditions.find((c) => c.type === 'GPUUnhealthy'),
    unparsed: (rule: string) =>
      seriesValue(registry, 'npd_gpu_xid_unparsed_total', { source: config.source, rule }),
  };
}

describe('rules/gpu.yaml: the Xid an event reports', () => {
  it('names the GPU by bus id and, after the driver’s identity record, by UUID (real H200 boot)', () => {
    const m = gpuMonitor();
    m.records(...H200);
    const events = m.events();
    assert.deepEqual(
      events.map((e) => [e.reason, e.occurrence]),
      [
        ['NVRMXid31', { kind: 'xid', code: 31, busId: '0000:00:06', uuid: UUID }],
        ['NVRMXid43', { kind: 'xid', code: 43, busId: '0000:00:06', uuid: UUID }],
      ],
    );
    assert.equal(events[0]?.message, `${XID31}; uuid=${UUID}`);
  });

  it('gives the identity record no event; without it the Xid has its bus id only and the driver’s message', () => {
    const m = gpuMonitor();
    m.records(IDENTITY);
    assert.deepEqual(m.events(), []);
    const alone = gpuMonitor();
    alone.records(XID43);
    assert.deepEqual(alone.events()[0]?.occurrence, { kind: 'xid', code: 43, busId: '0000:00:06' });
    assert.equal(alone.events()[0]?.message, XID43);
  });

  it('puts the UUID on GPUUnhealthy’s message, and the occurrence on the Xid event only', async () => {
    const m = gpuMonitor();
    const xid79 =
      "NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
    m.records(IDENTITY, xid79);
    assert.equal(m.condition()?.status, 'True');
    assert.equal(m.condition()?.message, `${xid79}; uuid=${UUID}`);
    const withOccurrence = m.events().filter((e) => e.occurrence !== undefined);
    assert.deepEqual(
      withOccurrence.map((e) => e.reason),
      ['NVRMXid79'],
    );
    assert.equal(await m.unparsed('NVRMXid79'), 0);
  });

  it('reads the code and GPU before the process name: a name imitating an Xid 79 is no occurrence of it', () => {
    // comm holds 15 bytes; the kmsg source quotes up to 60 characters after name= all the same.
    for (const name of ['NVRM: Xid (PCI:', 'NVRM: Xid (PCI:0000:3b:00): 79']) {
      const m = gpuMonitor();
      m.records(IDENTITY, `NVRM: Xid (PCI:0000:00:06): 31, pid=544, name=${name}, channel 0x0000000a`);
      assert.deepEqual(
        m.events().map((e) => [e.reason, e.occurrence]),
        [['NVRMXid31', { kind: 'xid', code: 31, busId: '0000:00:06', uuid: UUID }]],
      );
    }
  });

  it('makes no occurrence from a crashing file named after Xid 79, even where --trust-quoted-text fires the rule', async () => {
    const m = gpuMonitor();
    m.records(SEGFAULT_79);
    assert.deepEqual(m.events(), []);
    const flagged = gpuMonitor({ trustQuotedText: true });
    flagged.records(SEGFAULT_79);
    const fired = flagged.events().find((e) => e.reason === 'NVRMXid79');
    assert.ok(fired, 'the flag lets the rule fire, as NPD would');
    assert.equal(fired.occurrence, undefined);
    assert.equal(await flagged.unparsed('NVRMXid79'), 1);
  });

  it('learns no UUID from a file name quoted in another kernel report (control: the real record does)', () => {
    const forged = 'NVRM: GPU at PCI:0000:00:06: GPU-00000000-0000-0000-0000-000000000000';
    const m = gpuMonitor();
    m.records(`process '${forged}' started with executable stack`, XID43);
    assert.equal(m.events()[0]?.occurrence?.uuid, undefined);
    const real = gpuMonitor();
    real.records(IDENTITY, XID43);
    assert.equal(real.events()[0]?.occurrence?.uuid, UUID);
  });
});

describe('rules/gpu.yaml: an NVLink5 Xid by its sub-code, after the process name too', () => {
  // A user's real line (leptonai/gpud kmsg_extended_test.go) names the process before the unit.
  const nonfatal = (name: string) =>
    `NVRM: Xid (PCI:0018:01:00): 145, pid=876767, name=${name}, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)`;

  it('sets GPUUnhealthy for a Fatal unit after pid and name (the real Nonfatal line, its severity Fatal)', () => {
    const m = gpuMonitor();
    m.records(nonfatal('ray::WorkerDict').replace(' Nonfatal ', ' Fatal '));
    assert.equal(m.condition()?.reason, 'NvidiaNVLinkError');
    const control = gpuMonitor();
    control.records(nonfatal('ray::WorkerDict'));
    assert.equal(control.condition()?.status, 'False');
  });

  it('takes no Fatal from a process name; --trust-quoted-text (NPD’s matching) would', () => {
    const forged = nonfatal('a, B Fatal XC0');
    const m = gpuMonitor();
    m.records(forged);
    assert.equal(m.condition()?.status, 'False');
    const flagged = gpuMonitor({ trustQuotedText: true });
    flagged.records(forged);
    assert.equal(flagged.condition()?.reason, 'NvidiaNVLinkError');
  });
});

describe('through the detector: one event per Xid beside the NVML monitor', () => {
  function agentPath() {
    const dispatched: [string, ProblemEvent][] = [];
    let detector: ProblemDetector | undefined;
    const m = gpuMonitor({ emit: (s) => detector?.onStatus(s, m) });
    const registry = createRegistry();
    const stage = new XidOnce({ clock: m.clock, registry });
    detector = new ProblemDetector({
      logger: silentLogger(),
      aggregated: new Set(),
      outlets: {
        conditions: [],
        events: [
          xidOnceOutlet(stage, [
            (s, es) => dispatched.push(...es.map((e) => [s, e] as [string, ProblemEvent])),
          ]),
        ],
      },
    });
    const nvml = (code: number): Status => ({
      source: 'nvml-gpu-monitor',
      conditions: [],
      events: [
        {
          severity: 'warn',
          timestamp: m.clock.now(),
          reason: `NVRMXid${code}`,
          message: `GPU 0 (0000:00:06, ${UUID}, NVIDIA H200): Xid ${code}`,
          occurrence: { kind: 'xid', code, busId: '0000:00:06', uuid: UUID },
        },
      ],
    });
    return { m, dispatched, nvml: (code: number) => detector?.onStatus(nvml(code), {}), registry };
  }

  it('posts the kernel log’s Xid 31 and drops NVML’s 6 ms later; NVML’s Xid 43 first, the kernel log’s dropped', async () => {
    const { m, dispatched, nvml, registry } = agentPath();
    m.records(IDENTITY, XID31);
    m.clock.advance(6);
    nvml(31);
    nvml(43);
    m.records(XID43);
    assert.deepEqual(
      dispatched.map(([s, e]) => [s, e.reason]),
      [
        ['gpu-monitor', 'NVRMXid31'],
        ['nvml-gpu-monitor', 'NVRMXid43'],
      ],
    );
    assert.equal(
      await seriesValue(registry, 'npd_gpu_xid_duplicates_total', { source: 'nvml-gpu-monitor' }),
      1,
    );
    assert.equal(await seriesValue(registry, 'npd_gpu_xid_duplicates_total', { source: 'gpu-monitor' }), 1);
  });

  it('with /dev/kmsg unreadable (no kernel-log lines), NVML’s Xids alone are posted', () => {
    const { dispatched, nvml } = agentPath();
    nvml(31);
    nvml(31);
    assert.deepEqual(
      dispatched.map(([s, e]) => [s, e.reason]),
      [
        ['nvml-gpu-monitor', 'NVRMXid31'],
        ['nvml-gpu-monitor', 'NVRMXid31'],
      ],
    );
  });
});
