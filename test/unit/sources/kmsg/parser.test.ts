import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compilePattern } from '../../../../src/rules/pattern.ts';
import {
  type KmsgRecord,
  kmsgTimestampMs,
  parseKmsgRecord,
  parseKmsgStream,
  unescapeKmsg,
} from '../../../../src/sources/kmsg/parser.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/kmsg');

function ok(result: KmsgRecord | Error): KmsgRecord {
  if (result instanceof Error) assert.fail(`unexpected parse error: ${result.message}`);
  return result;
}

function records(entries: Array<KmsgRecord | Error>): KmsgRecord[] {
  return entries.map(ok);
}

describe('parseKmsgRecord', () => {
  it('parses a plain record', () => {
    const r = ok(parseKmsgRecord('6,339,5140900,-;NET: Registered PF_INET6 protocol family\n'));
    assert.deepEqual(r, {
      priority: 6,
      facility: 0,
      level: 6,
      seq: 339,
      usec: 5140900,
      flags: '-',
      message: 'NET: Registered PF_INET6 protocol family',
      dict: {},
    });
  });

  it('splits the priority into facility and level', () => {
    const r = ok(parseKmsgRecord('11,333,339590493,-;npd-probe: hello\n'));
    assert.equal(r.facility, 1);
    assert.equal(r.level, 3);
    assert.equal(ok(parseKmsgRecord('0,1,2,-;x')).facility, 0);
  });

  it('keeps dictionary lines out of the message so end-anchored rules match (NPD #1086)', () => {
    const raw =
      '6,2304,1402338117,-;mlx5_core 0000:03:00.0 enp3s0f0: Link down\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.0\n';
    const r = ok(parseKmsgRecord(raw));
    assert.equal(r.message, 'mlx5_core 0000:03:00.0 enp3s0f0: Link down');
    assert.deepEqual(r.dict, { SUBSYSTEM: 'pci', DEVICE: '+pci:0000:03:00.0' });
    assert.match(r.message, /^.* Link down$/);
  });

  it('keeps "=" inside dictionary values and ignores a bare key', () => {
    const r = ok(parseKmsgRecord('6,1,2,-;x\n A=b=c\n NOVALUE\n'));
    assert.deepEqual(r.dict, { A: 'b=c' });
  });

  it('unescapes \\xNN in the text and in dictionary values', () => {
    const r = ok(parseKmsgRecord('6,90,154652,-;rcu: \\x09RCU path C:\\x5cdir\\x01next\n K=a\\x20b\n'));
    assert.equal(r.message, 'rcu: \tRCU path C:\\dir\u0001next');
    assert.deepEqual(r.dict, { K: 'a b' });
  });

  it('keeps a line feed inside the text escaped, as NPD matches it, and trims the ones at the edges', () => {
    const inner = ok(parseKmsgRecord('3,7,100,-;EXT4-fs error (device sda1): x\\x0a(more)\n'));
    assert.equal(inner.message, 'EXT4-fs error (device sda1): x\\x0a(more)');
    assert.ok(!inner.message.includes('\n'));
    // A run that mixes a line feed with UTF-8 still decodes the character around it.
    assert.equal(
      ok(parseKmsgRecord('6,8,100,-;caf\\xc3\\xa9\\x0a\\xc3\\xa9t\\xc3\\xa9\n')).message,
      'café\\x0aété',
    );
    assert.equal(
      ok(parseKmsgRecord('6,9,100,-;\\x0aRemounting filesystem read-only\\x0a\n')).message,
      'Remounting filesystem read-only',
    );
  });

  it('matches an end-anchored rule on a record with an escaped line feed (the decoded form costs no match)', () => {
    const { message } = ok(parseKmsgRecord('3,7,100,-;EXT4-fs error (device sda1): x\\x0a(more)\n'));
    const rule = compilePattern('EXT4-fs error .*');
    assert.equal(rule.test(message), true);
    // The control: with the line feed decoded, NPD's \\z semantics stop `.*` at the line end.
    assert.equal(rule.test(message.replace('\\x0a', '\n')), false);
  });

  it('decodes escaped multi-byte UTF-8 and leaves invalid escapes alone', () => {
    assert.equal(unescapeKmsg('caf\\xc3\\xA9'), 'café');
    assert.equal(unescapeKmsg('\\xZZ \\x4'), '\\xZZ \\x4');
    assert.equal(unescapeKmsg('no escapes'), 'no escapes');
  });

  it('trims like Go strings.TrimSpace', () => {
    assert.equal(
      ok(parseKmsgRecord('4,1,2,-;   divide error: 0000 [#1] SMP \n')).message,
      'divide error: 0000 [#1] SMP',
    );
    assert.equal(ok(parseKmsgRecord('4,1,2,-;\\x09tabbed\\x0a\n')).message, 'tabbed');
    assert.equal(ok(parseKmsgRecord('4,1,2,-;\\xc2\\x85\\xc2\\xa0x\\xe3\\x80\\x80\n')).message, 'x');
    // Go does not count U+FEFF as space, JS trim() does.
    assert.equal(ok(parseKmsgRecord('4,1,2,-;\\xef\\xbb\\xbfx\n')).message, '\ufeffx');
  });

  it('ignores unknown extra header fields and tolerates a missing flags field', () => {
    const r = ok(parseKmsgRecord('6,186,209800,-,caller=T1,future=1;a; b, c\n'));
    assert.equal(r.flags, '-');
    assert.equal(r.message, 'a; b, c');
    assert.equal(ok(parseKmsgRecord('6,7,8;no flags')).flags, '');
    assert.equal(ok(parseKmsgRecord('4,9,10,c;fragment')).flags, 'c');
  });

  it('returns an empty message for an empty text', () => {
    assert.equal(ok(parseKmsgRecord('6,1,2,-;   \n')).message, '');
  });

  it('returns errors, never throws, for malformed records', () => {
    const bad = [
      '',
      'garbage',
      '6,1,2,- no semicolon',
      'x,1,2,-;text',
      '6,-1,2,-;text',
      '6,1;too few fields',
      '6,1,,-;empty timestamp',
      '6,99999999999999999999,2,-;seq beyond 2^53',
      '6,1,2,-;text\nnot a continuation line',
    ];
    for (const raw of bad) {
      const result = parseKmsgRecord(raw);
      assert.ok(result instanceof Error, `expected an error for ${JSON.stringify(raw)}`);
    }
  });
});

describe('kmsgTimestampMs', () => {
  it('adds whole milliseconds since boot to the boot time', () => {
    assert.equal(kmsgTimestampMs(1_000_000, 5_140_900), 1_005_140);
    assert.equal(kmsgTimestampMs(1_000_000, 999), 1_000_000);
  });
});

describe('parseKmsgStream', () => {
  it('splits records and attaches continuation lines', () => {
    const text = [
      '6,1,100,-;first',
      '6,2,200,-;second: Link down',
      ' SUBSYSTEM=pci',
      ' DEVICE=+pci:0000:03:00.0',
      '4,3,300,-,caller=T9;third',
      '',
    ].join('\n');
    const got = records(parseKmsgStream(text));
    assert.deepEqual(
      got.map((r) => [r.seq, r.message, r.dict]),
      [
        [1, 'first', {}],
        [2, 'second: Link down', { SUBSYSTEM: 'pci', DEVICE: '+pci:0000:03:00.0' }],
        [3, 'third', {}],
      ],
    );
  });

  it('accepts CRLF line ends and blank lines', () => {
    const got = records(parseKmsgStream('6,1,100,-;a\r\n K=v\r\n\r\n6,2,200,-;b\r\n'));
    assert.deepEqual(
      got.map((r) => [r.message, r.dict]),
      [
        ['a', { K: 'v' }],
        ['b', {}],
      ],
    );
  });

  it('reports stray lines with their line number and keeps parsing', () => {
    const entries = parseKmsgStream(' ORPHAN=1\n6,1,100,-;ok\nnot kmsg\n6,x,1,-;bad\n6,2,200,-;ok too\n');
    assert.equal(entries.length, 5);
    const [orphan, first, stray, badSeq, last] = entries;
    assert.ok(orphan instanceof Error && orphan.message.startsWith('line 1:'));
    assert.equal(ok(first as KmsgRecord).message, 'ok');
    assert.ok(stray instanceof Error && stray.message.startsWith('line 3:'));
    assert.ok(badSeq instanceof Error && badSeq.message.startsWith('line 4:'));
    assert.equal(ok(last as KmsgRecord).seq, 2);
  });

  it('reports a record whose header is broken after the leading digits', () => {
    const [entry] = parseKmsgStream('6,1,2,-\n');
    assert.ok(entry instanceof Error && /line 1: no ";"/.test(entry.message));
  });

  it('returns nothing for an empty dump', () => {
    assert.deepEqual(parseKmsgStream(''), []);
    assert.deepEqual(parseKmsgStream('\n\n'), []);
  });
});

describe('kmsg fixtures', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.kmsg'));

  it('exist for every NPD kernel log sample plus the driver and format files', () => {
    assert.equal(files.length, 10);
  });

  for (const file of files) {
    it(`${file} parses cleanly with increasing seq and timestamps`, () => {
      const got = records(parseKmsgStream(readFileSync(join(FIXTURES, file), 'utf8')));
      assert.ok(got.length > 0);
      for (let i = 1; i < got.length; i++) {
        const [prev, cur] = [got[i - 1] as KmsgRecord, got[i] as KmsgRecord];
        assert.ok(cur.seq > prev.seq, `seq after ${prev.seq}`);
        assert.ok(cur.usec >= prev.usec, `usec after seq ${prev.seq}`);
      }
    });
  }

  it('docker_hung.kmsg has one kernel record per sample line, trimmed', () => {
    const got = records(parseKmsgStream(readFileSync(join(FIXTURES, 'docker_hung.kmsg'), 'utf8')));
    assert.equal(got.length, 19);
    assert.equal(got[0]?.message, 'INFO: task docker:20744 blocked for more than 120 seconds.');
    assert.equal(got[1]?.message, 'Tainted: G         C    3.16.0-4-amd64 #1');
    assert.ok(got.every((r) => r.facility === 0));
  });

  it('driver-link-down.kmsg carries dictionaries outside the messages', () => {
    const got = records(parseKmsgStream(readFileSync(join(FIXTURES, 'driver-link-down.kmsg'), 'utf8')));
    const down = got.filter((r) => /^.* Link down$/.test(r.message));
    assert.equal(down.length, 1);
    assert.deepEqual(down[0]?.dict, { SUBSYSTEM: 'pci', DEVICE: '+pci:0000:03:00.0' });
    assert.ok(got.every((r) => !r.message.includes('SUBSYSTEM=')));
  });

  it('format-variants.kmsg decodes escapes, extra fields and user facilities', () => {
    const got = records(parseKmsgStream(readFileSync(join(FIXTURES, 'format-variants.kmsg'), 'utf8')));
    assert.equal(got[0]?.message, 'rcu: \tRCU restricting CPUs from NR_CPUS=256 to nr_cpu_ids=2.');
    assert.equal(got[1]?.message, 'Trampoline variant of Tasks RCU enabled.');
    assert.equal(
      got[3]?.message,
      'acpi PNP0A08:00: PCIe port services disabled; not requesting _OSC control',
    );
    assert.deepEqual(
      got.filter((r) => r.facility !== 0).map((r) => r.seq),
      [4022, 4023],
    );
    const usb = got.find((r) => r.seq === 4024);
    assert.equal(
      usb?.message,
      'usb 1-1: new high-speed USB device number 2 using xhci_hcd\\x0aUSB path C:\\device',
    );
    assert.equal(usb?.flags, 'c');
    assert.equal(got.at(-1)?.message, 'kernel: message with surrounding white space');
  });
});
