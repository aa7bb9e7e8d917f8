import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootTimeMs, parseUptime, readUptimeMs, startTime } from '../../../src/sources/start-time.ts';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const MIN = 60_000;

describe('startTime', () => {
  it('derives boot time from uptime', () => {
    assert.equal(bootTimeMs(NOW, 90 * MIN), NOW - 90 * MIN);
  });

  it('is now − lookback when the node has been up longer', () => {
    assert.equal(startTime(NOW, 60 * MIN, 5 * MIN, 0), NOW - 5 * MIN);
  });

  it('never reaches before boot when lookback exceeds uptime', () => {
    assert.equal(startTime(NOW, 2 * MIN, 5 * MIN, 0), NOW - 2 * MIN);
  });

  it('skips the first delay after boot', () => {
    assert.equal(startTime(NOW, 2 * MIN, 5 * MIN, 30_000), NOW - 2 * MIN + 30_000);
  });

  it('lets lookback win over a delay that ends earlier', () => {
    assert.equal(startTime(NOW, 60 * MIN, 5 * MIN, 30_000), NOW - 5 * MIN);
  });

  it('starts at now with NPD defaults (lookback and delay 0)', () => {
    assert.equal(startTime(NOW, 60 * MIN, 0, 0), NOW);
  });

  it('can start in the future when the delay has not passed yet', () => {
    assert.equal(startTime(NOW, MIN, 0, 2 * MIN), NOW + MIN);
  });
});

describe('uptime', () => {
  it('parses /proc/uptime into whole milliseconds', () => {
    assert.equal(parseUptime('339.59 371.82\n'), 339_590);
    assert.equal(parseUptime('12'), 12_000);
  });

  it('rejects other formats', () => {
    for (const text of ['', 'abc 1', '-1.0 2', '1e3 2']) {
      assert.ok(parseUptime(text) instanceof Error, text);
    }
  });

  it('reads through the injected fs and path', () => {
    const paths: string[] = [];
    const fs = {
      readFileSync(path: string): string {
        paths.push(path);
        return '100.25 50.00\n';
      },
    };
    assert.equal(readUptimeMs(fs), 100_250);
    assert.equal(readUptimeMs(fs, '/host/proc/uptime'), 100_250);
    assert.deepEqual(paths, ['/proc/uptime', '/host/proc/uptime']);
  });

  it('returns a read failure as an error value', () => {
    const fs = {
      readFileSync(): string {
        throw new Error('ENOENT: no such file');
      },
    };
    const result = readUptimeMs(fs, '/nope');
    assert.ok(result instanceof Error);
    assert.match(result.message, /\/nope: ENOENT/);
  });
});
