/**
 * The contract every LogSource keeps, whatever it reads: health answers before start (and says it is
 * not up), lines come oldest first, a batch is never empty, stop is idempotent, and nothing is
 * delivered after stop. Each source runs on what it reads in production: the kmsg reader on a model of
 * the kernel ring, journald through a journalctl child, filelog on a real file, replay from its feed.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../../../src/core/clock.ts';
import type { LogLine } from '../../../src/core/types.ts';
import { ReplayFeed } from '../../../src/replay/source.ts';
import { createFilelogSource } from '../../../src/sources/filelog/source.ts';
import { createJournaldSource } from '../../../src/sources/journald/source.ts';
import { createKmsgSource } from '../../../src/sources/kmsg/source.ts';
import type { LogSource } from '../../../src/sources/source.ts';
import { FakeKmsgDevice } from '../../support/fake-kmsg-device.ts';
import { HOUR, logConfig, makeDeps, tempDir, waitFor } from './harness.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const UPTIME = { readFileSync: () => '1000.00 1.00\n' };
/** filelog lines that start with an RFC 3339 timestamp. */
const RFC3339_LINES = {
  timestamp: '^(\\S+) ',
  message: '^\\S+ (.*)$',
  timestampFormat: '2006-01-02T15:04:05.999999999Z07:00',
};
const FAKE_JOURNALCTL = fileURLToPath(new URL('../../fixtures/journal/fake-journalctl.mjs', import.meta.url));

interface Subject {
  readonly source: LogSource;
  /** Appends lines, oldest first, where the source reads; `at` is each line's offset from T0 in ms. */
  write(lines: readonly { at: number; text: string }[]): void;
  /** Lets the source read what was written: fake time for polling, real time for child processes. */
  pump(): Promise<void>;
}

type Make = (t: TestContext) => Subject;

const fakeTime = (clock: FakeClock) => async () => {
  clock.advance(500);
  await sleep(5);
};

const SUBJECTS: Readonly<Record<string, Make>> = {
  kmsg(t) {
    const clock = new FakeClock(T0);
    const device = new FakeKmsgDevice();
    const config = logConfig({ plugin: 'kmsg', lookbackMs: HOUR });
    const source = createKmsgSource(config, makeDeps(clock, tempDir(t)), { device, fs: UPTIME });
    // Boot was 1000 s before T0; a record's timestamp is boot plus its usec.
    const write: Subject['write'] = (lines) => {
      for (const l of lines) device.write(l.text, { usec: (1_000_000 + l.at) * 1000 });
    };
    return { source, write, pump: fakeTime(clock) };
  },
  journald(t) {
    const root = tempDir(t);
    const dir = join(root, 'var/log/journal');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'entries.jsonl'), '');
    let n = 0;
    const config = logConfig({ plugin: 'journald', pluginConfig: { source: 'kubelet' }, lookbackMs: HOUR });
    const deps = makeDeps(new FakeClock(T0), root);
    const source = createJournaldSource(config, deps, { command: FAKE_JOURNALCTL, fs: UPTIME });
    const write: Subject['write'] = (lines) => {
      const entries = lines.map((l) =>
        JSON.stringify({
          __CURSOR: `c${n++}`,
          __REALTIME_TIMESTAMP: String((T0 + l.at) * 1000),
          SYSLOG_IDENTIFIER: 'kubelet',
          MESSAGE: l.text,
        }),
      );
      appendFileSync(join(dir, 'entries.jsonl'), entries.map((e) => `${e}\n`).join(''));
    };
    return { source, write, pump: () => sleep(50) };
  },
  filelog(t) {
    const root = tempDir(t);
    const clock = new FakeClock(T0);
    writeFileSync(join(root, 'app.log'), '');
    const config = logConfig({
      plugin: 'filelog',
      logPath: '/app.log',
      lookbackMs: HOUR,
      pluginConfig: RFC3339_LINES,
    });
    const source = createFilelogSource(config, makeDeps(clock, root), {
      uptimeFs: UPTIME,
      watch: null,
      pollIntervalMs: 250,
    });
    const write: Subject['write'] = (lines) => {
      const text = lines.map((l) => `${new Date(T0 + l.at).toISOString()} ${l.text}\n`).join('');
      appendFileSync(join(root, 'app.log'), text);
    };
    return { source, write, pump: fakeTime(clock) };
  },
  replay() {
    const feed = new ReplayFeed();
    const source = feed.source(logConfig({ plugin: 'kmsg' }));
    const write: Subject['write'] = (lines) => {
      for (const l of lines) feed.push({ timestamp: T0 + l.at, message: l.text });
    };
    return { source, write, pump: () => sleep(1) };
  },
};

function record(source: LogSource) {
  const batches: (readonly LogLine[])[] = [];
  source.start((lines) => batches.push(lines));
  return {
    batches,
    messages: () => batches.flat().map((l) => l.message),
  };
}

async function readUntil(subject: Subject, messages: () => string[], count: number): Promise<void> {
  await waitFor(
    async () => {
      await subject.pump();
      return messages().length >= count;
    },
    10_000,
    `${count} lines`,
  );
}

describe('LogSource contract', () => {
  it('covers every log source, replay included', () => {
    assert.deepEqual(Object.keys(SUBJECTS).sort(), ['filelog', 'journald', 'kmsg', 'replay']);
  });

  for (const [name, make] of Object.entries(SUBJECTS)) {
    describe(name, () => {
      it('answers health before start, and is not up', (t) => {
        const { source } = make(t);
        const health = source.health();
        assert.equal(health.up, false);
        assert.equal(typeof health.healthy, 'boolean');
      });

      it('delivers lines oldest first, never in an empty batch', async (t) => {
        const subject = make(t);
        t.after(() => subject.source.stop());
        const seen = record(subject.source);
        subject.write([
          { at: 1000, text: 'first line' },
          { at: 2000, text: 'second line' },
        ]);
        await readUntil(subject, seen.messages, 2);
        subject.write([{ at: 3000, text: 'third line' }]);
        await readUntil(subject, seen.messages, 3);
        assert.deepEqual(seen.messages(), ['first line', 'second line', 'third line']);
        const times = seen.batches.flat().map((l) => l.timestamp);
        assert.deepEqual(times, [T0 + 1000, T0 + 2000, T0 + 3000]);
        for (const batch of seen.batches) assert.ok(batch.length > 0, 'empty batch');
        assert.equal(subject.source.health().up, true);
      });

      it('stops idempotently and delivers nothing after stop', async (t) => {
        const subject = make(t);
        const seen = record(subject.source);
        subject.write([{ at: 1000, text: 'before stop' }]);
        await readUntil(subject, seen.messages, 1);
        await subject.source.stop();
        await subject.source.stop();
        subject.write([{ at: 2000, text: 'after stop' }]);
        for (let i = 0; i < 3; i++) await subject.pump();
        assert.deepEqual(seen.messages(), ['before stop']);
        assert.equal(subject.source.health().up, false);
      });
    });
  }
});
