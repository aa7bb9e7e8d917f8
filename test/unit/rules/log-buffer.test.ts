import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogLine } from '../../../src/core/types.ts';
import { LogBuffer } from '../../../src/rules/log-buffer.ts';
import { compilePattern } from '../../../src/rules/pattern.ts';
import { Prefilter } from '../../../src/rules/prefilter.ts';

function bufferOf(size: number, messages: readonly string[]): { buffer: LogBuffer; lines: LogLine[] } {
  const buffer = new LogBuffer(size);
  const lines = messages.map((message, i) => ({ timestamp: 1000 + i, message }));
  for (const l of lines) buffer.push(l);
  return { buffer, lines };
}

const messagesOf = (lines: readonly LogLine[] | undefined) => lines?.map((l) => l.message);

describe('LogBuffer', () => {
  it('rejects a size below 1 and matches nothing when empty', () => {
    assert.throws(() => new LogBuffer(0), RangeError);
    assert.equal(new LogBuffer(3).match(compilePattern('.*')), undefined);
    assert.equal(new LogBuffer(3).newest(), undefined);
  });

  it('requires a match to reach the end of the newest line', () => {
    const { buffer } = bufferOf(10, ['EXT4-fs error on sda', 'something else']);
    assert.equal(buffer.match(compilePattern('EXT4-fs error .*')), undefined);
    buffer.push({ timestamp: 9, message: 'EXT4-fs error on sdb' });
    const m = buffer.match(compilePattern('EXT4-fs error .*'));
    assert.deepEqual(messagesOf(m?.lines), ['EXT4-fs error on sdb']);
    assert.equal(m?.match.groups[0], 'EXT4-fs error on sdb');
    assert.equal(buffer.match(compilePattern('EXT4-fs error')), undefined);
  });

  it('matches a multi-line pattern and returns every overlapping line, oldest first', () => {
    const { buffer, lines } = bufferOf(10, ['noise', 'first part', 'middle', 'last part']);
    const m = buffer.match(compilePattern('first part\\nmiddle\\nlast part'));
    assert.deepEqual(m?.lines, lines.slice(1));
    const partial = buffer.match(compilePattern('part\\nmiddle\\nlast part'));
    assert.deepEqual(messagesOf(partial?.lines), ['first part', 'middle', 'last part']);
  });

  it('forgets lines beyond its size, so a pattern spans at most bufferSize lines', () => {
    const { buffer } = bufferOf(2, ['a1', 'b2', 'c3']);
    assert.equal(buffer.match(compilePattern('a1\\nb2\\nc3')), undefined);
    assert.deepEqual(messagesOf(buffer.match(compilePattern('b2\\nc3'))?.lines), ['b2', 'c3']);
    assert.deepEqual(messagesOf(buffer.match(compilePattern('(?s).*'))?.lines), ['b2', 'c3']);
    assert.equal(buffer.newest()?.message, 'c3');
  });

  it('lets a rule whose tail consumes newlines match again on later pushes, as NPD does', () => {
    const { buffer } = bufferOf(10, ['start (x', 'y']);
    const p = compilePattern('start \\([^)]*');
    assert.deepEqual(messagesOf(buffer.match(p)?.lines), ['start (x', 'y']);
    buffer.push({ timestamp: 5, message: 'z' });
    assert.deepEqual(messagesOf(buffer.match(p)?.lines), ['start (x', 'y', 'z']);
  });

  it('anchors a top-level alternation as a whole (NPD PR #1338)', () => {
    const { buffer } = bufferOf(10, ['foo bar']);
    assert.equal(buffer.match(compilePattern('foo|baz')), undefined);
    assert.ok(buffer.match(compilePattern('baz|bar')));
  });

  it('handles kmsg messages that carry continuation lines', () => {
    const { buffer } = bufferOf(10, ['older', 'usb 1-1: disconnect\n SUBSYSTEM=usb\n DEVICE=c189:1']);
    const m = buffer.match(compilePattern('disconnect\\n SUBSYSTEM=usb\\n DEVICE=\\S+'));
    assert.deepEqual(messagesOf(m?.lines), ['usb 1-1: disconnect\n SUBSYSTEM=usb\n DEVICE=c189:1']);
  });

  // NPD (log_buffer.go) counts lines back from the end with `total > len(log)-start-1`, so the "\n"
  // separating two lines belongs to the line after it: a match that starts on a separator does not
  // include the line before it.
  it('does not count the line before a match that starts on the line separator', {}, () => {
    const { buffer } = bufferOf(10, ['abc', 'xyz']);
    assert.deepEqual(messagesOf(buffer.match(compilePattern('\\nxyz'))?.lines), ['xyz']);
    const { buffer: b2 } = bufferOf(10, ['a', '', 'b']);
    assert.deepEqual(messagesOf(b2.match(compilePattern('\\n\\nb'))?.lines), ['', 'b']);
  });
});

describe('compilePattern lastLineOnly', () => {
  const SINGLE = [
    'Killed process \\d+ (.+) total-vm:\\d+kB.*',
    'task [\\S ]+:\\w+ blocked for more than \\w+ seconds\\.',
    '.*\\[Hardware Error\\]: event severity: fatal$',
    '(?i)remounting filesystem read-only',
    '\\bword\\b',
  ];
  const MULTI = [
    // Conservative: a \t escape could sit in a class range reaching \n, so escapes of controls go multi-line.
    'a\\tb',
    'a\\nb',
    'a\\sb',
    'a[^)]*',
    '(?s)a.*',
    '(?m)^a$',
    '^abc',
    '\\Aabc',
    'a\\Db',
    'a\\Wb',
    'a\\x0ab',
    'a\\x{A}b',
    'a\\012b',
    'a\\pCb',
    'a[[:space:]]b',
    'a[[:cntrl:]]b',
    'ab[[:ascii:]]cd',
    'a\\Cb',
    'a\nb',
  ];
  for (const p of SINGLE)
    it(`${JSON.stringify(p)} is evaluated on the newest line only`, () =>
      assert.equal(compilePattern(p).lastLineOnly, true));
  for (const p of MULTI)
    it(`${JSON.stringify(p)} is evaluated on the whole buffer`, () =>
      assert.equal(compilePattern(p).lastLineOnly, false));

  it('a class range that spans "\\n" can cross lines', {}, () => {
    assert.equal(compilePattern('[\\t-\\r]xyz').lastLineOnly, false);
    const { buffer } = bufferOf(10, ['abc', 'xyz']);
    assert.ok(buffer.match(compilePattern('[\\t-\\r]xyz')));
  });
});

describe('Prefilter', () => {
  const patterns = [
    compilePattern('EXT4-fs error .*'),
    compilePattern('Buffer I/O error .*'),
    compilePattern('(?i)oom-killer'),
    compilePattern('a\\nb'),
    compilePattern('\\d+'),
  ];
  const pf = new Prefilter(patterns);

  it('lets through the gated patterns whose literal occurs, and every ungated one', () => {
    assert.deepEqual(pf.candidates('EXT4-fs error x'), [true, false, true, true, true]);
    assert.deepEqual(pf.candidates('xx Buffer I/O error '), [false, true, true, true, true]);
    assert.deepEqual(pf.candidates('EXT4-fs error Buffer I/O error '), [true, true, true, true, true]);
    assert.deepEqual(pf.candidates('EXT4-fs error x'), [true, false, true, true, true], 'no state leaks');
  });

  it('drops only the gated patterns when no literal occurs', () => {
    // gated: case-sensitive literal and lastLineOnly. (?i), multi-line and literal-free patterns always run.
    assert.deepEqual(pf.candidates('nothing to see'), [false, false, true, true, true]);
  });

  it('escapes regex metacharacters in literals', () => {
    const p = new Prefilter([compilePattern('divide error: 0000 \\[#\\d+\\] SMP'), compilePattern('a.b')]);
    assert.deepEqual([...p.candidates('divide error: 0000 [#')], [true, true]);
    assert.deepEqual(p.candidates('divide error: 0000 x#'), [false, true]);
  });

  it('passes everything when no pattern has a literal', () => {
    const p = new Prefilter([compilePattern('\\d+'), compilePattern('.*')]);
    assert.deepEqual(p.candidates(''), [true, true]);
  });
});
