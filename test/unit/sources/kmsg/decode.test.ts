import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeKmsgFields, type KmsgFields } from '../../../../src/sources/kmsg/decode.ts';
import { parseKmsgRecord } from '../../../../src/sources/kmsg/parser.ts';
import { kernelCorpus } from '../../../bench/kernel-corpus.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/kmsg');

/** The record as the reader's buffer holds it: stale bytes from a longer record after it. */
function inBuffer(raw: string): { buf: Buffer; length: number } {
  const bytes = Buffer.from(raw);
  const buf = Buffer.alloc(bytes.length + 64, ';\n \\');
  bytes.copy(buf);
  return { buf, length: bytes.length };
}

function decode(raw: string): KmsgFields | undefined {
  const out: KmsgFields = { facility: -1, seq: -1, usec: -1, message: '' };
  const { buf, length } = inBuffer(raw);
  return decodeKmsgFields(buf, length, out) ? out : undefined;
}

/** The fast path either declines or gives exactly what the full parser gives. */
function agrees(raw: string): boolean {
  const fast = decode(raw);
  if (fast === undefined) return false;
  const full = parseKmsgRecord(raw);
  assert.ok(!(full instanceof Error), `fast path accepted what the parser rejects: ${JSON.stringify(raw)}`);
  const { facility, seq, usec, message } = full;
  assert.deepEqual(fast, { facility, seq, usec, message }, JSON.stringify(raw));
  return true;
}

describe('decodeKmsgFields', () => {
  it('decodes plain records, with dictionaries, extra fields or no flags', () => {
    for (const raw of [
      '6,339,5140900,-;NET: Registered PF_INET6 protocol family\n',
      '3,12,99,-;e1000e 0000:00:19.0 eth0: NIC Link is Down\n SUBSYSTEM=net\n DEVICE=n2\n',
      '6,186,209800,-,caller=T1,future=1;a; b, c\n',
      '6,7,8;no flags',
      '14,0,0,-;user facility\n',
      '6,1,2,-;\n',
      '6,1,2,-;x\n\n SUBSYSTEM=pci\n',
      '6,123456789012345,2,-;fifteen-digit seq\n',
    ]) {
      assert.ok(agrees(raw), `expected the fast path for ${JSON.stringify(raw)}`);
    }
  });

  it('hands every record the parser would change or reject to the parser', () => {
    for (const raw of [
      '',
      'garbage',
      '6,1,2,- no semicolon',
      'x,1,2,-;text',
      '6,-1,2,-;text',
      '6,1;too few fields',
      '6;too few fields',
      '6,1,,-;empty timestamp',
      '6,99999999999999999999,2,-;seq beyond 2^53',
      '6,1234567890123456,2,-;sixteen digits',
      '6,1,2,-;text\nnot a continuation line',
      '4,1,2,-;   divide error: 0000 [#1] SMP \n',
      '4,1,2,-;\\x09tabbed\\x0a\n',
      '4,1,2,-;line\\x0afeed inside\n',
      '4,1,2,-;caf\u00e9\n',
      '4,1,2,-;\u00a0nbsp first\n',
      '6,1,2,-;   \n',
    ]) {
      assert.equal(decode(raw), undefined, JSON.stringify(raw));
    }
  });

  it('agrees with the parser on every fixture record and takes the fast path for the bench corpus', () => {
    let fast = 0;
    for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.kmsg'))) {
      const text = readFileSync(join(FIXTURES, file), 'utf8');
      for (const record of text.split(/\n(?=\d)/)) if (agrees(`${record.replace(/\n$/, '')}\n`)) fast++;
    }
    assert.ok(fast > 50, `only ${fast} fixture records took the fast path`);
    const corpus = kernelCorpus(2000, 0.05).map((line, i) => `6,${i},${i * 1000},-;${line}\n`);
    const declined = corpus.filter((raw) => !agrees(raw));
    assert.ok(declined.length < corpus.length / 100, `declined: ${declined.slice(0, 3).join('')}`);
  });
});
