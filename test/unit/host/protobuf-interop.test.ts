/**
 * The hand-written protobuf (src/host/protocols/protobuf.ts, CRI and OTLP messages) against protobufjs, the runtime
 * the maintained gRPC stack uses (installed here with @grpc/grpc-js, which the containerd probe tests
 * serve from). README's dependency table keeps the hand-written encoder on this check; `npm run bench --
 * deps` prints the same lines.
 */
import { AssertionError } from 'node:assert';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { test } from 'node:test';
import {
  CRI_PROTO,
  criChecks,
  lookup,
  OTLP_PROTO,
  otlpChecks,
  protobufjsBeside,
} from '../../bench/deps-correctness.ts';

const protoLoader = dirname(createRequire(import.meta.url).resolve('@grpc/proto-loader/package.json'));
const pb = protobufjsBeside(protoLoader);

test('CRI Version and Status messages: the same bytes as protobufjs, and each reads what the other writes', () => {
  assert.equal(criChecks(lookup(pb, CRI_PROTO)).length, 3);
});

test('CRI check fails when a field number differs (runtime_name and runtime_version swapped)', () => {
  const swapped = CRI_PROTO.replace(
    'runtime_name = 2; string runtime_version = 3',
    'runtime_name = 3; string runtime_version = 2',
  );
  assert.notEqual(swapped, CRI_PROTO);
  assert.throws(() => criChecks(lookup(pb, swapped)), AssertionError);
});

test('OTLP logs request: protobufjs decodes our protobuf to our JSON body and re-encodes the same bytes', () => {
  assert.equal(otlpChecks(lookup(pb, OTLP_PROTO)).length, 2);
});

test('OTLP check fails when a field number differs (observed_time_unix_nano 11 read as 12)', () => {
  const moved = OTLP_PROTO.replace('observed_time_unix_nano = 11', 'observed_time_unix_nano = 12');
  assert.notEqual(moved, OTLP_PROTO);
  assert.throws(() => otlpChecks(lookup(pb, moved)), AssertionError);
});
