import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { parseReplayInput } from '../../../src/replay/parse-input.ts';
import { replay } from '../../../src/replay/replay.ts';
import type { LogMonitorConfig } from '../../../src/rules/config.ts';
import { logConfig } from '../sources/harness.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('FakeClock.jumpTo (the replay clock)', () => {
  it('fires a timer due inside a jump once, at the time jumped to, and never runs backwards', () => {
    const clock = new FakeClock(T0);
    const fired: number[] = [];
    const tick = () => {
      fired.push(clock.now());
      clock.setTimeout(tick, 1000);
    };
    clock.setTimeout(tick, 1000);
    const cancelled = clock.setTimeout(() => fired.push(-1), 10);
    cancelled.cancel();
    clock.jumpTo(T0 + 500);
    assert.deepEqual(fired, []);
    clock.jumpTo(T0 + 3_600_000);
    assert.deepEqual(fired, [T0 + 3_600_000]);
    clock.jumpTo(T0);
    assert.equal(clock.now(), T0 + 3_600_000);
    clock.jumpTo(T0 + 3_601_000);
    assert.deepEqual(fired, [T0 + 3_600_000, T0 + 3_601_000]);
  });
});

const kubelet: LogMonitorConfig = logConfig({
  plugin: 'journald',
  pluginConfig: { source: 'kubelet' },
  source: 'kubelet-monitor',
  skipList: ['ignore me'],
  conditions: [{ type: 'KubeletBroken', reason: 'OK', message: 'fine', clearAfterMs: 10_000 }],
  rules: [{ type: 'permanent', condition: 'KubeletBroken', reason: 'Broken', pattern: 'broken.*' }],
});

function journal(entries: readonly Record<string, string>[]): string {
  return entries
    .map((e, i) => JSON.stringify({ __REALTIME_TIMESTAMP: String((T0 + i * 1000) * 1000), ...e }))
    .join('\n');
}

describe('replay drives the system-log monitor', () => {
  it('applies the journald matches as journalctl does: a missing field does not match', () => {
    const text = journal([
      { SYSLOG_IDENTIFIER: 'dockerd', MESSAGE: 'broken by another daemon' },
      { MESSAGE: 'broken without an identifier' },
      { SYSLOG_IDENTIFIER: 'kubelet', MESSAGE: 'broken kubelet' },
    ]);
    const out = replay([kubelet], parseReplayInput(text, 'journal-json', T0).lines, T0);
    const conditions = out.filter((r) => r.kind === 'condition');
    assert.deepEqual(
      conditions.map((r) => [r.status, r.message]),
      [['True', 'broken kubelet']],
    );
  });

  it('filters nothing on lines that did not come from a journal', () => {
    const out = replay([kubelet], parseReplayInput('broken plain line\n', 'plain', T0).lines, T0);
    assert.deepEqual(
      out.filter((r) => r.kind === 'condition').map((r) => r.message),
      ['broken plain line'],
    );
  });

  it('skips skipList lines and clears on the monitor tick that follows clearAfter', () => {
    const lines = [
      { timestamp: T0 + 1000, message: 'broken but ignore me' },
      { timestamp: T0 + 2000, message: 'broken once' },
      { timestamp: T0 + 5000, message: 'unrelated' },
      { timestamp: T0 + 30_000, message: 'unrelated, later' },
    ];
    const out = replay([kubelet], lines, T0);
    assert.deepEqual(
      out.filter((r) => r.kind === 'condition').map((r) => [r.status, r.message, r.timestamp]),
      [
        ['True', 'broken once', '2026-01-01T00:00:02Z'],
        ['False', 'fine', '2026-01-01T00:00:30Z'],
      ],
    );
  });
});
