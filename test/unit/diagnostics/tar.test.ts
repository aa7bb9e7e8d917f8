import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tarGz } from '../../../src/diagnostics/tar.ts';
import { eventLoopTurnsDuring } from '../../support/event-loop-turns.ts';

describe('tarGz', () => {
  it('is read back by the real tar, nested names and exact sizes included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-tar-'));
    const files = [
      { name: 'manifest.json', data: Buffer.from('{}\n') },
      { name: 'journal/kubelet.log', data: Buffer.from('x'.repeat(513)) },
      { name: 'empty.txt', data: Buffer.alloc(0) },
    ];
    writeFileSync(join(dir, 'b.tar.gz'), await tarGz(files, Date.UTC(2026, 0, 1)));
    const listing = execFileSync('tar', ['-tvzf', join(dir, 'b.tar.gz')], { encoding: 'utf8' });
    assert.match(listing, /-rw-r--r-- root\/root\s+513 2026-01-01 \S+ journal\/kubelet\.log/);
    execFileSync('tar', ['-xzf', join(dir, 'b.tar.gz'), '-C', dir]);
    for (const f of files) assert.deepEqual(readFileSync(join(dir, f.name)), f.data);
  });

  it('refuses a name ustar cannot hold', async () => {
    await assert.rejects(tarGz([{ name: 'x'.repeat(101), data: Buffer.alloc(0) }], 0), /name too long/);
  });

  it('compresses off the main thread: the event loop keeps turning meanwhile', async () => {
    const data = Buffer.alloc(8 << 20);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    const { result: gz, turns } = await eventLoopTurnsDuring(() => tarGz([{ name: 'big.bin', data }], 0));
    assert.ok(gz.length > 0);
    assert.ok(turns >= 2, `the event loop ran ${turns} times while compressing`);
  });
});
