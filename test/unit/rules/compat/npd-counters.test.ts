/**
 * NPD's log-counter custom-plugin configs and the native frequency rules in rules/ that replace them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration } from '../../../../src/gocompat/duration.ts';
import { compilePattern } from '../../../../src/rules/pattern.ts';
import { ours, rawJson } from './support.ts';

function durationMs(text: string | undefined): number {
  const ms = parseGoDuration(text ?? '');
  assert.ok(typeof ms === 'number', String(ms));
  return ms;
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
