import assert from 'node:assert/strict';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import pino from 'pino';
import { FakeClock } from '../../../../src/core/clock.ts';
import type { LogLine, Status } from '../../../../src/core/types.ts';
import type { MonitorDeps } from '../../../../src/monitors/deps.ts';
import { SystemLogMonitor } from '../../../../src/monitors/system-log/monitor.ts';
import type { LogMonitorConfig } from '../../../../src/rules/config.ts';
import { createFilelogSource, type FilelogSourceOptions } from '../../../../src/sources/filelog/source.ts';
import { nodeTailFs, type TailFs } from '../../../../src/sources/filelog/tail-fs.ts';
import { HOUR, logConfig, MINUTE, makeDeps, metric, tempDir } from '../harness.ts';

const T0 = Date.UTC(2026, 0, 1, 12);
const ISO = {
  timestamp: '^(\\S+) ',
  message: '^\\S+ (.*)$',
  timestampFormat: '2006-01-02T15:04:05.999999999Z07:00',
};
const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();
const line = (offsetMs: number, text: string) => `${at(offsetMs)} ${text}\n`;

interface Setup {
  readonly config?: Partial<LogMonitorConfig>;
  readonly opts?: FilelogSourceOptions;
  readonly clock?: FakeClock;
  readonly deps?: (d: MonitorDeps) => MonitorDeps;
}

function setup(t: TestContext, s: Setup = {}) {
  const root = tempDir(t);
  const logPath = '/var/log/app/test.log';
  const path = join(root, logPath);
  mkdirSync(dirname(path), { recursive: true });
  const clock = s.clock ?? new FakeClock(T0);
  const base = makeDeps(clock, root);
  const deps = s.deps ? s.deps(base) : base;
  const config = logConfig({ plugin: 'filelog', logPath, pluginConfig: ISO, lookbackMs: HOUR, ...s.config });
  const source = createFilelogSource(config, deps, {
    uptimeFs: { readFileSync: () => '1000000.00 1.00\n' },
    // Polling only, driven by the fake clock: every advance(250) is exactly one read.
    watch: null,
    pollIntervalMs: 250,
    rotateGraceMs: 1000,
    ...s.opts,
  });
  t.after(() => source.stop());
  const lines: LogLine[] = [];
  return {
    root,
    path,
    clock,
    deps,
    config,
    source,
    lines,
    start: () => source.start((batch) => lines.push(...batch)),
    poll: (times = 1) => clock.advance(250 * times),
    messages: () => lines.map((l) => l.message),
    metric: (name: string, labels?: Record<string, string>) => metric(base.registry, name, labels),
  };
}

const ev = (event: string) => ({ source: 'test-monitor', event });
const dropped = (reason: string) => ({ source: 'test-monitor', reason });

describe('filelog source', () => {
  it('reads from the start, drops lines older than the start time, then follows appends', async (t) => {
    const h = setup(t);
    writeFileSync(h.path, line(-2 * HOUR, 'too old') + line(-MINUTE, 'recent'));
    h.start();
    h.poll();
    assert.deepEqual(h.lines, [{ timestamp: T0 - MINUTE, message: 'recent' }]);
    appendFileSync(h.path, line(1000, 'appended'));
    h.poll();
    assert.deepEqual(h.messages(), ['recent', 'appended']);
    assert.equal(await h.metric('npd_log_lines_dropped_total', dropped('before_start')), 1);
    assert.equal(await h.metric('npd_log_lines_read_total'), 3);
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('holds a half-written line until its newline', (t) => {
    const h = setup(t);
    writeFileSync(h.path, `${line(1, 'first')}${at(2)} second ha`);
    h.start();
    h.poll(3);
    assert.deepEqual(h.messages(), ['first']);
    appendFileSync(h.path, 'lf done\n');
    h.poll();
    assert.deepEqual(h.messages(), ['first', 'second half done']);
  });

  it('follows rename rotation: the old file is drained, the new one read from its start', async (t) => {
    const h = setup(t);
    writeFileSync(h.path, line(1, 'a1') + line(2, 'a2'));
    h.start();
    h.poll();
    renameSync(h.path, `${h.path}.1`);
    appendFileSync(`${h.path}.1`, line(3, 'a3 written after the rename'));
    writeFileSync(h.path, line(4, 'b1') + line(5, 'b2'));
    h.poll();
    appendFileSync(`${h.path}.1`, line(6, 'a4 the writer had not reopened yet'));
    appendFileSync(h.path, line(7, 'b3'));
    h.poll();
    assert.deepEqual(h.messages(), [
      'a1',
      'a2',
      'a3 written after the rename',
      'b1',
      'b2',
      'a4 the writer had not reopened yet',
      'b3',
    ]);
    assert.equal(await h.metric('npd_log_file_events_total', ev('rename')), 1);
  });

  it('follows copytruncate, also when the file regrew past the old offset before the next read', async (t) => {
    const h = setup(t);
    writeFileSync(h.path, line(1, 'c1') + line(2, 'c2'));
    h.start();
    h.poll();
    copyFileSync(h.path, `${h.path}.1`);
    truncateSync(h.path, 0);
    appendFileSync(h.path, line(3, 'c3'));
    h.poll();
    truncateSync(h.path, 0);
    appendFileSync(h.path, line(4, 'd1 longer than everything before it') + line(5, 'd2'));
    h.poll();
    assert.deepEqual(h.messages(), ['c1', 'c2', 'c3', 'd1 longer than everything before it', 'd2']);
    assert.equal(await h.metric('npd_log_file_events_total', ev('truncate')), 2);
  });

  it('waits for a file that does not exist yet, unhealthy meanwhile', (t) => {
    const h = setup(t);
    h.start();
    h.poll(4);
    assert.deepEqual(h.source.health(), {
      up: true,
      healthy: false,
      detail: `waiting for ${h.path}: it does not exist`,
    });
    writeFileSync(h.path, line(1, 'finally'));
    h.poll();
    assert.deepEqual(h.messages(), ['finally']);
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
  });

  it('after a delete, waits for the file again and reads the new one from the start', async (t) => {
    const h = setup(t);
    writeFileSync(h.path, line(1, 'before'));
    h.start();
    h.poll();
    rmSync(h.path);
    h.poll();
    assert.equal(h.source.health().healthy, false);
    writeFileSync(h.path, line(2, 'after'));
    h.poll();
    assert.deepEqual(h.messages(), ['before', 'after']);
    assert.equal(await h.metric('npd_log_file_events_total', ev('delete')), 1);
  });

  it('reads a Dec 31 kern.log line on Jan 1 in the old year (NPD stock kernel config)', (t) => {
    const newYear = new Date(2027, 0, 1, 0, 0, 5).getTime();
    const h = setup(t, {
      clock: new FakeClock(newYear),
      config: {
        pluginConfig: {
          timestamp: '^.{15}',
          message: 'kernel: \\[.*\\] (.*)',
          timestampFormat: 'Jan _2 15:04:05',
        },
      },
    });
    writeFileSync(
      h.path,
      'Dec 31 23:59:59 node1 kernel: [ 1234.567] Out of memory: Killed process 42 (x)\n' +
        'Jan  1 00:00:01 node1 kernel: [ 1236.001] after midnight\n',
    );
    h.start();
    h.poll();
    assert.deepEqual(h.lines, [
      {
        timestamp: new Date(2026, 11, 31, 23, 59, 59).getTime(),
        message: 'Out of memory: Killed process 42 (x)',
      },
      { timestamp: new Date(2027, 0, 1, 0, 0, 1).getTime(), message: 'after midnight' },
    ]);
  });

  it('counts unparsable lines and warns at most once a minute, with a count', async (t) => {
    const logged: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        logged.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const h = setup(t, { deps: (d) => ({ ...d, logger: pino({ level: 'warn' }, sink) }) });
    writeFileSync(h.path, `${'garbage line\n'.repeat(100)}\n${line(1, 'good')}`);
    h.start();
    h.poll();
    h.clock.advance(MINUTE);
    appendFileSync(h.path, 'one more bad line\n');
    h.poll();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(h.messages(), ['good']);
    assert.equal(await h.metric('npd_log_lines_unparsable_total'), 101);
    assert.equal(await h.metric('npd_log_lines_dropped_total', dropped('empty')), 1);
    const warnings = logged.filter((l) => l.msg === 'log lines do not match the timestamp/message config');
    assert.deepEqual(
      warnings.map((w) => w.count),
      [1, 100],
    );
    assert.match(String(warnings[0]?.reason), /no timestamp|does not parse/);
  });

  it('leaves skipList to SystemLogMonitor', async (t) => {
    const h = setup(t, {
      config: {
        skipList: ['noise'],
        // This file's lines are evidence (issue 38: log files name no writer unless a config says so).
        trustedWriter: 'any',
        rules: [{ type: 'temporary', reason: 'OOMKilling', pattern: '.*Out of memory.*' }],
      },
    });
    const monitor = new SystemLogMonitor(h.config, h.source, h.deps);
    const statuses: Status[] = [];
    await monitor.start((s) => statuses.push(s));
    t.after(() => monitor.stop());
    writeFileSync(h.path, line(1, 'noise: Out of memory') + line(2, 'Out of memory: Killed process 1'));
    h.poll();
    assert.equal(await h.metric('npd_log_lines_read_total'), 2, 'the source delivers both lines');
    assert.equal(await h.metric('npd_log_lines_skipped_total'), 1, 'the monitor skips one');
    const events = statuses.flatMap((s) => s.events).filter((e) => e.reason === 'OOMKilling');
    assert.deepEqual(
      events.map((e) => e.message),
      ['Out of memory: Killed process 1'],
    );
  });

  it('retries a failing read with backoff and resumes at the same offset', async (t) => {
    const real = nodeTailFs();
    let failReads = 0;
    const fs: TailFs = {
      ...real,
      readSync: (fd, buffer, length, position) => {
        if (failReads > 0) {
          failReads--;
          throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
        }
        return real.readSync(fd, buffer, length, position);
      },
    };
    const h = setup(t, { opts: { fs } });
    writeFileSync(h.path, line(1, 'r1'));
    h.start();
    h.poll();
    failReads = 2;
    appendFileSync(h.path, line(2, 'r2'));
    h.poll();
    assert.equal(h.source.health().healthy, false);
    assert.match(h.source.health().detail ?? '', /EIO/);
    h.clock.advance(999);
    assert.deepEqual(h.messages(), ['r1']);
    h.clock.advance(1 + 2000);
    assert.deepEqual(h.messages(), ['r1', 'r2']);
    assert.deepEqual(h.source.health(), { up: true, healthy: true });
    assert.equal(await h.metric('npd_log_file_events_total', ev('read_error')), 2);
  });

  it('refuses configs that can never work', (t) => {
    const root = tempDir(t);
    const deps = makeDeps(new FakeClock(T0), root);
    const make = (c: Partial<LogMonitorConfig>) => () =>
      createFilelogSource(logConfig({ plugin: 'filelog', logPath: '/x.log', pluginConfig: ISO, ...c }), deps);
    assert.throws(make({ logPath: '' }), /needs logPath/);
    assert.throws(make({ pluginConfig: { ...ISO, timestamp: '(' } }), /pluginConfig.timestamp: invalid RE2/);
    assert.throws(make({ pluginConfig: { ...ISO, timestampFormat: '2006.002' } }), /day of year/);
    assert.throws(make({ pluginConfig: { ...ISO, message: '' } }), /pluginConfig.message is required/);
  });
});
