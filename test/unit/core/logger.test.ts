import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { textLine } from '../../../src/core/log-text.ts';
import { createLogger, type LogFormat } from '../../../src/core/logger.ts';

function capture(format: LogFormat | undefined, isTTY = false) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', format, isTTY, write: (l) => lines.push(l) });
  return { logger, lines };
}

const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('production logger', () => {
  it('writes JSON with level names and RFC 3339 UTC times off a terminal', () => {
    const { logger, lines } = capture(undefined);
    logger.warn({ source: 'kernel-monitor' }, 'kmsg records lost');
    logger.debug('d');
    const [warn, debug] = lines.map((l) => JSON.parse(l));
    assert.equal(warn.level, 'warn');
    assert.equal(debug.level, 'debug');
    assert.match(warn.time, RFC3339_UTC);
    assert.ok(Math.abs(Date.parse(warn.time) - Date.now()) < 60_000, warn.time);
    assert.equal(warn.source, 'kernel-monitor');
    assert.equal(warn.msg, 'kmsg records lost');
  });

  it('writes one klog-like line per record with --log-format=text, and by default on a terminal', () => {
    for (const { logger, lines } of [capture('text'), capture(undefined, true)]) {
      logger.error({ err: new Error('boom\n  at x'), count: 3, ok: true, node: 'n 1' }, 'sink failed');
      assert.equal(lines.length, 1);
      const line = lines[0] as string;
      assert.match(line, /^E\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ npd\] "sink failed" /);
      assert.ok(line.endsWith(` err="boom\\n  at x" count=3 ok=true node="n 1"\n`), line);
      assert.equal(line.split('\n').length, 2, 'exactly one line');
    }
  });

  it('keeps JSON on a terminal when asked', () => {
    const { logger, lines } = capture('json', true);
    logger.info('x');
    assert.equal(JSON.parse(lines[0] as string).level, 'info');
  });
});

describe('textLine', () => {
  it('maps levels to klog letters and takes the time from the record, in UTC', () => {
    const rec = (level: string) =>
      JSON.stringify({ level, time: '2026-03-04T05:06:07.089Z', pid: 7, component: 'kmsg', msg: 'm' });
    assert.equal(textLine(rec('info')), 'I0304 05:06:07.089000       7 kmsg] "m"\n');
    assert.equal(textLine(rec('warn')).slice(0, 1), 'W');
    assert.equal(textLine(rec('fatal')).slice(0, 1), 'F');
    assert.equal(textLine(rec('debug')).slice(0, 1), 'I');
  });

  it('passes a line that is not JSON through unchanged', () => {
    assert.equal(textLine('not json'), 'not json\n');
  });
});
