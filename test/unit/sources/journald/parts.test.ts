import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectJournalDirectory, journalctlArgs } from '../../../../src/sources/journald/args.ts';
import { MAX_MESSAGE_BYTES, parseJournalEntry } from '../../../../src/sources/journald/entry.ts';
import { LineSplitter, type SplitLine } from '../../../../src/sources/lines.ts';

describe('journalctlArgs', () => {
  it('follows JSON with --all from the start time, with both matches', () => {
    const args = journalctlArgs({
      directory: '/var/log/journal',
      identifier: 'kubelet',
      unit: 'kubelet.service',
      sinceMs: 1_750_000_000_999,
    });
    assert.deepEqual(args, [
      '--follow',
      '--merge',
      '--output=json',
      '--output-fields=MESSAGE',
      '--all',
      '--no-pager',
      '--quiet',
      '--directory=/var/log/journal',
      '--since=@1750000000',
      'SYSLOG_IDENTIFIER=kubelet',
      '_SYSTEMD_UNIT=kubelet.service',
    ]);
  });

  it('resumes after a cursor instead of --since', () => {
    const args = journalctlArgs({
      directory: '/j',
      afterCursor: 's=1;i=2',
      sinceMs: 5000,
      identifier: 'kernel',
    });
    assert.ok(args.includes('--after-cursor=s=1;i=2'));
    assert.ok(!args.some((a) => a.startsWith('--since')));
    assert.ok(!args.some((a) => a.startsWith('_SYSTEMD_UNIT')));
    assert.equal(args.at(-1), 'SYSLOG_IDENTIFIER=kernel');
  });
});

describe('detectJournalDirectory', () => {
  const probe = (dirs: Record<string, string[]>) => ({ list: (p: string) => dirs[p] });

  it('prefers a non-empty persistent journal, under the host root', () => {
    const found = detectJournalDirectory(
      '/host',
      '',
      probe({ '/host/var/log/journal': ['abc'], '/host/run/log/journal': [] }),
    );
    assert.deepEqual(found, { path: '/host/var/log/journal' });
  });

  it('uses the volatile journal when the persistent one is empty or missing (NPD #621)', () => {
    const found = detectJournalDirectory(
      '/',
      '',
      probe({ '/var/log/journal': [], '/run/log/journal': ['m'] }),
    );
    assert.equal('path' in found && found.path, '/run/log/journal');
    const viaStockPath = detectJournalDirectory(
      '/',
      '/var/log/journal/',
      probe({ '/run/log/journal': ['m'] }),
    );
    assert.equal('path' in viaStockPath && viaStockPath.path, '/run/log/journal');
  });

  it('falls back to an empty persistent directory, and reports when there is none', () => {
    assert.deepEqual(detectJournalDirectory('/', '', probe({ '/var/log/journal': [] })), {
      path: '/var/log/journal',
    });
    const missing = detectJournalDirectory('/', '', probe({}));
    assert.ok(
      'missing' in missing && /neither \/var\/log\/journal nor \/run\/log\/journal/.test(missing.missing),
    );
  });

  it('honours an explicit logPath without falling back', () => {
    const p = probe({ '/r/srv/journal': [], '/r/var/log/journal': ['x'] });
    assert.deepEqual(detectJournalDirectory('/r', '/srv/journal', p), { path: '/r/srv/journal' });
    const missing = detectJournalDirectory('/r', '/nope', p);
    assert.deepEqual(missing, { missing: 'journal directory /r/nope does not exist' });
  });
});

describe('parseJournalEntry', () => {
  const base = { __CURSOR: 'c1', __REALTIME_TIMESTAMP: '1750000000123456' };

  it('reads the cursor, the millisecond timestamp and the trimmed message', () => {
    const e = parseJournalEntry(JSON.stringify({ ...base, MESSAGE: '  hello \n' }));
    assert.deepEqual(e, { cursor: 'c1', timestamp: 1_750_000_000_123, message: 'hello', truncated: false });
  });

  it('decodes byte-array messages and takes the first of repeated fields', () => {
    const bytes = [...Buffer.from('\u001b[31mred\u001b[0m é')];
    assert.equal(
      (parseJournalEntry(JSON.stringify({ ...base, MESSAGE: bytes })) as { message: string }).message,
      '\u001b[31mred\u001b[0m é',
    );
    const repeated = parseJournalEntry(JSON.stringify({ ...base, MESSAGE: ['first', 'second'] }));
    assert.equal((repeated as { message: string }).message, 'first');
  });

  it('treats a null (unfetched) message as empty', () => {
    assert.equal(
      (parseJournalEntry(JSON.stringify({ ...base, MESSAGE: null })) as { message: string }).message,
      '',
    );
  });

  it('cuts messages to 16 KiB on a character boundary', () => {
    const long = `${'a'.repeat(MAX_MESSAGE_BYTES - 1)}é and more`;
    const e = parseJournalEntry(JSON.stringify({ ...base, MESSAGE: long }));
    assert.ok(!(e instanceof Error));
    assert.equal(e.truncated, true);
    assert.equal(e.message, 'a'.repeat(MAX_MESSAGE_BYTES - 1));
    const exact = parseJournalEntry(JSON.stringify({ ...base, MESSAGE: 'é'.repeat(MAX_MESSAGE_BYTES / 2) }));
    assert.equal((exact as { truncated: boolean }).truncated, false);
  });

  it('rejects lines that are not journal entries', () => {
    assert.match((parseJournalEntry('{"MESSAGE":') as Error).message, /invalid JSON/);
    assert.match((parseJournalEntry('[1]') as Error).message, /not a JSON object/);
    assert.match((parseJournalEntry('{"__REALTIME_TIMESTAMP":"1"}') as Error).message, /__CURSOR/);
    assert.match(
      (parseJournalEntry('{"__CURSOR":"c","__REALTIME_TIMESTAMP":"x"}') as Error).message,
      /REALTIME/,
    );
  });
});

describe('LineSplitter', () => {
  const texts = (lines: SplitLine[]) => lines.map((l) => l.text);

  it('holds a partial line until its newline, across chunks and split characters', () => {
    const s = new LineSplitter(100);
    const out: SplitLine[] = [];
    const bytes = Buffer.from('one\r\ntwo é\nthr');
    s.push(bytes.subarray(0, 9), out); // ends inside the two-byte "é"
    s.push(bytes.subarray(9), out);
    assert.deepEqual(texts(out), ['one', 'two é']);
    assert.equal(s.pendingBytes, 3);
    s.push(Buffer.from('ee\n'), out);
    assert.deepEqual(texts(out), ['one', 'two é', 'three']);
    assert.equal(s.flush(), undefined);
  });

  it('bounds a long line and flags it, then carries on with the next', () => {
    const s = new LineSplitter(8);
    const out: SplitLine[] = [];
    s.push(Buffer.from('0123456789abc'), out);
    assert.equal(s.pendingBytes, 8);
    s.push(Buffer.from('def\nok\n'), out);
    assert.deepEqual(out, [
      { text: '01234567', truncated: true },
      { text: 'ok', truncated: false },
    ]);
  });

  it('flushes the incomplete tail on request', () => {
    const s = new LineSplitter(8);
    const out: SplitLine[] = [];
    s.push(Buffer.from('a\nbc'), out);
    assert.deepEqual(s.flush(), { text: 'bc', truncated: false });
    assert.equal(s.pendingBytes, 0);
  });
});
