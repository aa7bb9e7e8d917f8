import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { pageOutFileMappings, readOnlyFileRanges } from '../../../src/host/clib/page-out.ts';

const MAPS = [
  '00400000-00600000 r--p 00000000 fd:01 1234   /usr/bin/node',
  '00600000-02000000 r-xp 00200000 fd:01 1234   /usr/bin/node',
  '02000000-02100000 rw-p 01c00000 fd:01 1234   /usr/bin/node',
  '7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ',
  '7f0000100000-7f0000200000 r-xp 00000000 fd:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6',
  '7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]',
  '7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]',
  '',
].join('\n');

describe('page-out of read-only file mappings', () => {
  it('takes read-only file-backed ranges only: no writable, anonymous or [special] mapping', () => {
    const got = readOnlyFileRanges(MAPS).map((r) => [r.start.toString(16), r.length.toString(16)]);
    assert.deepEqual(got, [
      ['400000', '200000'],
      ['600000', '1a00000'],
      ['7f0000100000', '100000'],
    ]);
  });

  it('advises MADV_PAGEOUT (21) on each and counts the refusals', () => {
    const calls: number[] = [];
    const refused = pageOutFileMappings((_s, _l, advice) => {
      calls.push(advice);
      return calls.length === 2 ? -1 : 0;
    }, MAPS);
    assert.deepEqual(calls, [21, 21, 21]);
    assert.equal(refused, 1);
  });

  it('parses this process own maps: the node binary is among the ranges', () => {
    const ranges = readOnlyFileRanges(readFileSync('/proc/self/maps', 'utf8'));
    assert.ok(ranges.length > 2, `${ranges.length} ranges`);
  });
});
