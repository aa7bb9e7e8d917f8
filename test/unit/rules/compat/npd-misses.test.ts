/**
 * Real lines NPD's shipped system-log-monitor configs miss, each caught by our YAML equivalent, and
 * the sector count NPD's filelog message regex cuts off.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replay } from '../../../../src/replay/replay.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { compilePattern } from '../../../../src/rules/pattern.ts';
import { lines, npd, ours, START } from './support.ts';

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

  it("disk.yaml keeps smartd's failed health self-check from a syslog file, not the incapable drive", () => {
    const mine = ours('disk.yaml');
    const extract = (line: string) => filelogMessage(line, mine.pluginConfig.message as string);
    const rule = mine.rules.find((r) => r.reason === 'SMARTSelfCheckFailed');
    assert.ok(rule);
    const failed = extract(
      'Jan  5 05:12:44 node-1 smartd[812]: Device: /dev/sdd [SAT], FAILED SMART self-check. BACK UP DATA NOW!',
    );
    assert.equal(failed, 'Device: /dev/sdd [SAT], FAILED SMART self-check. BACK UP DATA NOW!');
    assert.ok(compilePattern(rule.pattern).exec(failed as string));
    assert.equal(
      extract('Jan  5 05:12:44 node-1 smartd[812]: Device: /dev/sda, not capable of SMART self-check'),
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
