import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePartialSuccess } from '../../../src/events/persist/otlp-wire.ts';
import {
  bytesField,
  decodeFields,
  intOf,
  messageField,
  messagesOf,
  stringOf,
  varintField,
} from '../../../src/host/protocols/protobuf.ts';

describe('decodeFields', () => {
  it('keeps every value of a repeated field in order, the last one winning for scalars', () => {
    const buf = Buffer.concat([varintField(1, 5), bytesField(2, 'a'), varintField(1, 7), bytesField(2, 'b')]);
    const f = decodeFields(buf);
    assert.equal(intOf(f, 1), 7n);
    assert.equal(stringOf(f, 2), 'b');
    assert.deepEqual(
      (f.get(2) ?? []).map((v) => v.toString()),
      ['a', 'b'],
    );
  });

  // A peer controls the answer: one field repeated many times used to copy its list once per field.
  // Linear decoding of these takes milliseconds; the bound only a super-linear decoder can exceed.
  it('is linear in the number of repeated fields', () => {
    const one = messageField(1, Buffer.alloc(0));
    const buf = Buffer.concat(Array.from({ length: 50_000 }, () => one));
    const t0 = performance.now();
    const f = decodeFields(buf);
    const ms = performance.now() - t0;
    assert.equal(messagesOf(f, 1).length, 50_000);
    assert.ok(ms < 3_000, `took ${Math.round(ms)} ms`);
  });
});

describe('parsePartialSuccess caps what it parses', () => {
  const partial = (rejected: number, message: string) =>
    messageField(1, Buffer.concat([varintField(1, rejected), bytesField(2, message)]));

  it('reads a real answer, a few bytes', () => {
    assert.deepEqual(parsePartialSuccess('application/x-protobuf', partial(1, 'bad')), {
      rejected: 1,
      message: 'bad',
    });
  });

  it('refuses to parse an answer larger than any real one, protobuf or JSON', () => {
    const big = Buffer.concat([partial(0, 'x'.repeat(70_000))]);
    assert.throws(() => parsePartialSuccess('application/x-protobuf', big), /over 65536 bytes/);
    const json = Buffer.from(JSON.stringify({ partialSuccess: { errorMessage: 'y'.repeat(70_000) } }));
    assert.throws(() => parsePartialSuccess('application/json', json), /over 65536 bytes/);
    const small = Buffer.concat([partial(0, 'x'.repeat(60_000))]);
    assert.deepEqual(parsePartialSuccess('application/x-protobuf', small).rejected, 0, 'under the cap');
  });
});
