/**
 * NPD compatibility of the shipped rule set: NPD's own system-log-monitor JSON files load unchanged,
 * and each gives the same replay results as our YAML equivalent on the lines NPD's rules cover. Our
 * YAML files are supersets; the lines NPD misses are listed with the fix that catches them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigs } from '../../../src/config/load.ts';
import { systemLogConfigKind } from '../../../src/config/log-monitor-schema.ts';
import type { LogMonitorConfig } from '../../../src/config/types.ts';
import type { ReplayLine } from '../../../src/replay/parse-input.ts';
import { type ReplayRecord, replay } from '../../../src/replay/replay.ts';
import { compilePattern } from '../../../src/rules/pattern.ts';
import { parseGoDuration } from '../../../src/util/duration.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const NPD_DIR = join(ROOT, 'test', 'fixtures', 'npd-config');
const START = Date.UTC(2026, 0, 1);

function load(file: string): LogMonitorConfig {
  const [loaded] = loadConfigs([{ file }], [systemLogConfigKind]);
  assert.ok(loaded, file);
  return loaded.config as LogMonitorConfig;
}
const npd = (name: string) => load(join(NPD_DIR, name));
const ours = (name: string) => load(join(ROOT, 'rules', name));

function durationMs(text: string | undefined): number {
  const ms = parseGoDuration(text ?? '');
  assert.ok(typeof ms === 'number', String(ms));
  return ms;
}

function rawJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(NPD_DIR, name), 'utf8')) as Record<string, unknown>;
}

/** One line per second, so frequency windows and event order are deterministic. */
function lines(messages: readonly string[]): ReplayLine[] {
  return messages.map((message, i) => ({ timestamp: START + i * 1000, message }));
}

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
 * ones are compared (the rest are in the golden cases and in the "NPD misses" table below).
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

const PAIRS: { npd: string; ours: string; input: readonly string[] }[] = [
  { npd: 'kernel-monitor.json', ours: 'kernel.yaml', input: KERNEL_SAMPLES },
  { npd: 'readonly-monitor.json', ours: 'readonly.yaml', input: KERNEL_SAMPLES },
  // filelog after NPD's message extraction ("kernel: \[.*\] (.*)"), so the same kernel messages
  { npd: 'kernel-monitor-filelog.json', ours: 'kernel.yaml', input: KERNEL_SAMPLES },
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
  {
    // Replay does not run filelog's message extraction, so NPD's rule sees whole lines here; on a real
    // node it never matches (see the test at the end).
    npd: 'disk-log-message-filelog.json',
    ours: 'disk.yaml',
    input: [
      'Jan  5 03:12:44 node-1 smartd[812]: Device: /dev/sda [SAT], 8 Currently unreadable (pending) sectors',
      'Jan  5 04:12:44 node-1 smartd[812]: Device: /dev/sdb [SAT], 128 Currently unreadable (pending) sectors',
      'Jan  5 04:12:44 node-1 smartd[812]: Device: /dev/sdb [SAT], 136 Offline uncorrectable sectors',
    ],
  },
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
      const expected = replay([theirs], covered, START);
      assert.ok(expected.length > 0);
      assert.deepEqual(restrict(replay([mine], covered, START), theirs), expected);
    });
  }
});

/** Real lines NPD's shipped configs miss, and the YAML rule that catches each. */
const NPD_MISSES: { npd: string; ours: string; reason: string; line: string; why: string }[] = [
  {
    npd: 'systemd-monitor.json',
    ours: 'systemd.yaml',
    reason: 'KubeletStart',
    line: 'Started kubelet: The Kubernetes Node Agent.',
    why: 'systemd 249 names units by Description only (kubeadm packages)',
  },
  {
    npd: 'systemd-monitor.json',
    ours: 'systemd.yaml',
    reason: 'KubeletStart',
    line: 'Started Kubernetes Kubelet.',
    why: 'Amazon Linux EKS AMI Description',
  },
  {
    npd: 'docker-monitor.json',
    ours: 'docker.yaml',
    reason: 'DockerContainerStartupFailure',
    line: 'time="2026-01-01T00:03:00Z" level=error msg="Handler for POST /v1.24/containers/8d1e4c3b2a19/start returned error: OCI runtime start failed: container process is already dead: unknown"',
    why: "the journal MESSAGE ends with logrus' closing quote",
  },
  {
    npd: 'docker-monitor.json',
    ours: 'docker.yaml',
    reason: 'CorruptDockerImage',
    line: 'time="2026-01-01T00:01:00Z" level=error msg="Not continuing with pull after error: failed to register layer: rename /var/lib/docker/image/overlay2/layerdb/tmp/write-set-491823049 /var/lib/docker/image/overlay2/layerdb/sha256/6b5ca7b5f1c5: directory not empty"',
    why: 'Docker without the v1-registry fallback has no "Error trying v2 registry" prefix',
  },
  {
    npd: 'kernel-monitor.json',
    ours: 'kernel.yaml',
    reason: 'UnregisterNetDevice',
    line: 'unregister_netdevice: waiting for flannel.1 to become free. Usage count = 2',
    why: '\\w+ does not match interface names with dots',
  },
];

describe('lines NPD misses', () => {
  for (const miss of NPD_MISSES) {
    it(`${miss.ours} catches ${miss.reason}: ${miss.why}`, () => {
      const input = lines([miss.line]);
      const reasonsOf = (c: LogMonitorConfig) => replay([c], input, START).map((r) => r.reason);
      assert.ok(!reasonsOf(npd(miss.npd)).includes(miss.reason), 'NPD matches after all');
      assert.ok(reasonsOf(ours(miss.ours)).includes(miss.reason));
    });
  }

  it('disk.yaml keeps the sector count that NPD’s filelog message regex cuts off', () => {
    const line =
      'Jan  5 04:12:44 node-1 smartd[812]: Device: /dev/sdb [SAT], 128 Currently unreadable (pending) sectors';
    const extract = (config: LogMonitorConfig) => filelogMessage(line, config.pluginConfig.message as string);
    const theirs = npd('disk-log-message-filelog.json');
    const mine = ours('disk.yaml');
    assert.equal(extract(theirs), 'Currently unreadable (pending) sectors');
    assert.equal(
      compilePattern(theirs.rules[0]?.pattern as string).exec(extract(theirs) as string),
      undefined,
    );
    assert.equal(extract(mine), 'Device: /dev/sdb [SAT], 128 Currently unreadable (pending) sectors');
    assert.ok(compilePattern(mine.rules[0]?.pattern as string).exec(extract(mine) as string));
    // the message regex still filters the rest of /var/log/messages out, as NPD's does
    assert.equal(
      filelogMessage(
        'Jan  5 04:12:45 node-1 systemd[1]: Started Session 4 of User core.',
        mine.pluginConfig.message as string,
      ),
      undefined,
    );
  });
});

/**
 * NPD's filelog translator: the message is the last submatch of pluginConfig.message (the whole match
 * when the regex has no group), found anywhere in the line. `(re).*` anchored at the end finds the same
 * leftmost match, since `.*` to the end of a line always succeeds.
 */
function filelogMessage(line: string, messageRegex: string): string | undefined {
  const m = compilePattern(`((?:${messageRegex})).*`).exec(line);
  if (!m) return undefined;
  const submatches = m.groups.slice(1);
  return submatches[submatches.length - 1] ?? '';
}

/**
 * NPD's log-counter custom-plugin configs (plugin "custom", loaded by the custom-plugin kind) and the
 * native frequency rules that replace them: same condition, reason, count and window.
 */
const COUNTERS: {
  npd: string;
  ours: string;
  samples: Record<string, { pattern: string; revert?: string }>;
}[] = [
  {
    npd: 'kernel-monitor-counter.json',
    ours: 'kernel-counter.yaml',
    samples: {
      FrequentUnregisterNetDevice: {
        pattern: 'unregister_netdevice: waiting for eth0 to become free. Usage count = 1',
      },
    },
  },
  {
    npd: 'docker-monitor-counter.json',
    ours: 'docker-counter.yaml',
    samples: {
      CorruptDockerOverlay2: {
        pattern:
          'Handler for GET /v1.41/containers/3f6b9a2c1d7e/json returned error: readlink /var/lib/docker/overlay2/l/QX3ZK7Y2MNVH4JKL5P6R7T8W9A: invalid argument',
      },
    },
  },
  {
    npd: 'systemd-monitor-counter.json',
    ours: 'systemd-counter.yaml',
    samples: {
      FrequentKubeletRestart: {
        pattern: 'Started kubelet.service - kubelet: The Kubernetes Node Agent.',
        revert: 'Stopping kubelet.service - kubelet: The Kubernetes Node Agent...',
      },
      FrequentDockerRestart: {
        pattern: 'Starting docker.service - Docker Application Container Engine...',
        revert: 'Stopping docker.service - Docker Application Container Engine...',
      },
      FrequentContainerdRestart: {
        pattern: 'Starting containerd.service - containerd container runtime...',
        revert: 'Stopping containerd.service - containerd container runtime...',
      },
    },
  },
];

describe('native frequency rules replace NPD’s log-counter configs', () => {
  for (const counter of COUNTERS) {
    it(`${counter.ours} replaces ${counter.npd}`, () => {
      const raw = rawJson(counter.npd);
      assert.equal(raw.plugin, 'custom');
      const mine = ours(counter.ours);
      assert.equal(mine.source, raw.source);
      assert.deepEqual(
        mine.conditions.map((c) => [c.type, c.reason, c.message]),
        (raw.conditions as Record<string, unknown>[]).map((c) => [c.type, c.reason, c.message]),
      );
      for (const npdRule of raw.rules as {
        condition: string;
        reason: string;
        path: string;
        args: string[];
      }[]) {
        assert.match(npdRule.path, /\/log-counter$/);
        const flag = (name: string) =>
          npdRule.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
        const rule = mine.rules.find((r) => r.condition === npdRule.condition);
        assert.ok(rule, `no rule for ${npdRule.condition}`);
        assert.equal(rule.type, 'permanent');
        assert.equal(rule.reason, npdRule.reason);
        assert.equal(rule.count, Number(flag('count')));
        assert.equal(rule.windowMs, durationMs(flag('lookback')));
        assert.ok(mine.lookbackMs >= (rule.windowMs ?? 0), 'lookback must cover the window after a restart');
        const delay = flag('delay');
        if (delay) assert.ok(mine.delayMs >= durationMs(delay));
        const sample = counter.samples[npdRule.condition];
        assert.ok(sample, `no sample for ${npdRule.condition}`);
        for (const [ourPattern, npdPattern, line] of [
          [rule.pattern, flag('pattern'), sample.pattern],
          [rule.revertPattern, flag('revert-pattern'), sample.revert],
        ]) {
          assert.equal(ourPattern === undefined, npdPattern === undefined);
          if (ourPattern === undefined || npdPattern === undefined || line === undefined) continue;
          assert.ok(compilePattern(npdPattern).exec(line), `NPD's pattern misses the sample "${line}"`);
          assert.ok(compilePattern(ourPattern).exec(line), `our pattern misses "${line}"`);
        }
      }
    });
  }
});
