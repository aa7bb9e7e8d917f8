/**
 * NPD compatibility of the shipped rule set: NPD's own system-log-monitor JSON files load unchanged,
 * and each gives the same replay results as our YAML equivalent on the lines NPD's rules cover. Our
 * YAML files are supersets: the lines NPD misses are in npd-misses.test.ts, and the log-counter
 * replacements in npd-counters.test.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigs } from '../../../../src/config/load.ts';
import { systemLogConfigKind } from '../../../../src/monitors/system-log/schema.ts';
import { type ReplayRecord, replay } from '../../../../src/replay/replay.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { compilePattern } from '../../../../src/rules/pattern.ts';
import { lines, NPD_DIR, npd, ours, ROOT, rawJson, START } from './support.ts';

function matchesAnyRule(config: LogMonitorConfig, message: string): boolean {
  return config.rules.some((r) => compilePattern(r.pattern).exec(message) !== undefined);
}

/** The reasons and condition types an NPD config can produce: our extra rules are left out. */
function vocabulary(config: LogMonitorConfig): { reasons: Set<string>; types: Set<string> } {
  const reasons = new Set([...config.rules.map((r) => r.reason), ...config.conditions.map((c) => c.reason)]);
  return { reasons, types: new Set(config.conditions.map((c) => c.type)) };
}

function restrict(records: readonly ReplayRecord[], config: LogMonitorConfig): ReplayRecord[] {
  const { reasons, types } = vocabulary(config);
  return records.filter((r) => (r.kind === 'condition' ? types.has(r.type) : reasons.has(r.reason)));
}

const SYSTEM_LOG_FILES = readdirSync(NPD_DIR)
  .filter((f) => f.endsWith('.json'))
  .filter((f) => rawJson(f).plugin !== 'custom')
  .sort();

describe('NPD shipped system-log-monitor configs', () => {
  it('are all present', () => {
    assert.deepEqual(SYSTEM_LOG_FILES, [
      'abrt-adaptor.json',
      'disk-log-message-filelog.json',
      'docker-monitor-filelog.json',
      'docker-monitor.json',
      'kernel-monitor-filelog.json',
      'kernel-monitor.json',
      'readonly-monitor.json',
      'systemd-monitor.json',
    ]);
  });

  for (const file of SYSTEM_LOG_FILES) {
    it(`${file} loads unchanged with the system-log kind`, () => {
      const raw = rawJson(file);
      const [loaded] = loadConfigs([{ file: join(NPD_DIR, file) }], [systemLogConfigKind]);
      assert.equal(loaded?.kind, 'system-log-monitor');
      const config = loaded?.config as LogMonitorConfig;
      assert.equal(config.plugin, raw.plugin);
      assert.equal(config.source, raw.source);
      assert.deepEqual(
        config.rules.map((r) => [r.type, r.condition, r.reason, r.pattern]),
        (raw.rules as Record<string, unknown>[]).map((r) => [r.type, r.condition, r.reason, r.pattern]),
      );
      assert.deepEqual(
        config.conditions.map((c) => [c.type, c.reason, c.message]),
        (raw.conditions as Record<string, unknown>[]).map((c) => [c.type, c.reason, c.message]),
      );
    });
  }
});

/**
 * Lines in the wording NPD's rules were written for, plus lines they do not cover; only the covered
 * ones are compared (the rest are in the golden cases and in npd-misses.test.ts).
 */
const KERNEL_SAMPLES = [
  // NPD's kernel log samples (test/kernel_log_generator/problems)
  ...readFileSync(join(ROOT, 'test', 'golden', 'cases', 'kernel-npd-samples', 'input.log'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== ''),
  // the kernel-monitor.json rules those samples do not exercise
  'EXT4-fs error (device sda1): ext4_find_entry:1455: inode #2: comm ls: reading directory lblock 0',
  'EXT4-fs warning (device sda1): ext4_dx_add_entry:2231: Directory (ino: 131074) index full, reach max htree level :2',
  'Buffer I/O error on dev sda1, logical block 0, async page read',
  'XFS (dm-0): Corruption of in-memory data detected.  Shutting down filesystem',
  'EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x4f2e1 offset:0x0 grain:32 syndrome:0x0 - area:DRAM err_code:0001:0090 socket:0 ha:0 channel_mask:2 rank:1)',
  '{1}[Hardware Error]: event severity: corrected',
  '{2}[Hardware Error]: event severity: recoverable',
  '{3}[Hardware Error]: event severity: fatal',
];

/** `normal`: reasons NPD emits as Warning and ours as Normal events, on purpose (docs/rules.md). */
/**
 * `dropped`: reasons ours does not give on purpose. DockerHung matches the hung task's own name, which
 * any process chooses (docs/rules.md, "Who wrote the text"); NPD's kmsg config counts it as untrusted
 * in replay as well, its filelog config (no quoted spans in a file) still raises it.
 */
const PAIRS: {
  npd: string;
  ours: string;
  input: readonly string[];
  normal?: readonly string[];
  dropped?: readonly string[];
}[] = [
  { npd: 'kernel-monitor.json', ours: 'kernel.yaml', input: KERNEL_SAMPLES },
  { npd: 'readonly-monitor.json', ours: 'readonly.yaml', input: KERNEL_SAMPLES },
  // filelog after NPD's message extraction ("kernel: \[.*\] (.*)"), so the same kernel messages
  { npd: 'kernel-monitor-filelog.json', ours: 'kernel.yaml', input: KERNEL_SAMPLES, dropped: ['DockerHung'] },
  {
    npd: 'docker-monitor.json',
    ours: 'docker.yaml',
    input: [
      'time="2026-01-01T00:00:01Z" level=info msg="Loading containers: done."',
      'time="2026-01-01T00:01:00Z" level=error msg="Error trying v2 registry: failed to register layer: rename /var/lib/docker/image/overlay/layerdb/tmp/layer-372719126 /var/lib/docker/image/overlay/layerdb/sha256/a3ed95caeb02: directory not empty"',
      'time="2026-01-01T00:02:00Z" level=error msg="Handler for GET /v1.41/containers/3f6b9a2c1d7e/json returned error: readlink /var/lib/docker/overlay2/l/QX3ZK7Y2MNVH4JKL5P6R7T8W9A: invalid argument"',
      'time="2026-01-01T00:02:01Z" level=error msg="Handler for GET /v1.41/containers/3f6b9a2c1d7e/json returned error: readlink /var/lib/docker/overlay2/l/QX3ZK7Y2MNVH4JKL5P6R7T8W9A: invalid argument"',
      // the message as docker-monitor-filelog.json extracts it from /var/log/docker.log
      'Handler for POST /v1.24/containers/8d1e4c3b2a19/start returned error: OCI runtime start failed: container process is already dead: unknown',
    ],
  },
  {
    npd: 'docker-monitor-filelog.json',
    ours: 'docker.yaml',
    input: [
      'Loading containers: done.',
      'Error trying v2 registry: failed to register layer: rename /var/lib/docker/image/overlay/layerdb/tmp/layer-372719126 /var/lib/docker/image/overlay/layerdb/sha256/a3ed95caeb02: directory not empty',
      'Handler for GET /v1.41/containers/3f6b9a2c1d7e/json returned error: readlink /var/lib/docker/overlay2/l/QX3ZK7Y2MNVH4JKL5P6R7T8W9A: invalid argument',
    ],
  },
  {
    npd: 'systemd-monitor.json',
    ours: 'systemd.yaml',
    // One start is information, not a problem: Normal events here, NPD's reasons and messages.
    normal: ['KubeletStart', 'DockerStart', 'ContainerdStart'],
    input: [
      'Started Kubernetes kubelet.',
      'Started kubelet.service.',
      'Started kubelet.service - Kubernetes kubelet.',
      'Started kubelet.service - kubelet: The Kubernetes Node Agent.',
      'Starting Docker Application Container Engine...',
      'Starting docker.service...',
      'Starting docker.service - Docker Application Container Engine...',
      'Started docker.service - Docker Application Container Engine.',
      'Starting containerd container runtime...',
      'Starting containerd.service...',
      'Starting containerd.service - containerd container runtime...',
      'Stopping containerd.service - containerd container runtime...',
    ],
  },
  {
    npd: 'abrt-adaptor.json',
    ours: 'abrt.yaml',
    input: [
      '[🡕] Process 17653 (miniterm.py) of user 1000 encountered an uncaught BrokenPipeError exception',
      'Process 4242 (nginx) crashed in ngx_http_process_request_line()',
      '[🡕] System encountered a non-fatal error in ??()',
      'System encountered a fatal error in sysrq_handle_crash()',
      'Display server Xorg crash in OsAbort()',
      'Deleting problem directory Python3-2026-01-01-00:00:05-3292 (dup of Python3-2025-12-30-14:26:21-17653)',
    ],
  },
  // Not disk.yaml ≡ disk-log-message-filelog.json: disk.yaml gives info events, not NPD's conditions,
  // on purpose (a log file records no writer; docs/rules.md "Who wrote a log file line"). Its events
  // are in the rules-disk golden case, and npd-misses.test.ts compares the message extraction.
];

describe('our YAML gives NPD results on the lines NPD covers', () => {
  for (const pair of PAIRS) {
    it(`${pair.ours} ≡ ${pair.npd}`, () => {
      const theirs = npd(pair.npd);
      const mine = ours(pair.ours);
      assert.equal(mine.source, theirs.source);
      assert.equal(mine.plugin === 'filelog', theirs.plugin === 'filelog' && pair.npd.startsWith('disk'));
      for (const c of theirs.conditions) {
        assert.deepEqual(
          mine.conditions.find((m) => m.type === c.type),
          c,
          `condition ${c.type} differs`,
        );
      }
      const covered = lines(pair.input.filter((m) => matchesAnyRule(theirs, m)));
      // every NPD rule is exercised by at least one covered line
      for (const rule of theirs.rules) {
        const p = compilePattern(rule.pattern);
        assert.ok(
          covered.some((l) => p.exec(l.message)),
          `no sample line for NPD rule ${rule.reason}`,
        );
      }
      const expected = replay([theirs], covered, START)
        .filter((r) => !pair.dropped?.includes(r.reason))
        .map((r) => (r.kind === 'event' && pair.normal?.includes(r.reason) ? { ...r, type: 'Normal' } : r));
      assert.ok(expected.length > 0);
      assert.deepEqual(restrict(replay([mine], covered, START), theirs), expected);
    });
  }
});
