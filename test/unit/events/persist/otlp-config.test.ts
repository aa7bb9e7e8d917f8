import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { parseOptions } from '../../../../src/agent/options.ts';
import { createPersistSinks } from '../../../../src/events/persist/config.ts';
import { FakeClock } from '../../../../src/core/clock.ts';
import { otlpTls } from '../../../../src/events/persist/otlp-config.ts';
import { caCert } from '../../../support/tls-fixtures.ts';
import { captureLogger } from './helpers.ts';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseOptions(argv, env, 'host');

describe('OTLP sink flags', () => {
  it('are off by default: http/protobuf, 10s, verification on', () => {
    const { options, errors } = parse([]);
    assert.deepEqual(errors, []);
    assert.equal(options.eventOtlpEndpoint, '');
    assert.equal(options.eventOtlpProtocol, 'http/protobuf');
    assert.deepEqual(options.eventOtlpHeaders, {});
    assert.equal(options.eventOtlpTimeoutMs, 10_000);
    assert.equal(options.eventOtlpCaFile, '');
    assert.equal(options.eventOtlpInsecureSkipTlsVerify, false);
  });

  it('parse repeated Name=value headers (values may hold = and commas), TLS and OTEL_RESOURCE_ATTRIBUTES', () => {
    const { options, errors } = parse(
      [
        '--event-otlp-endpoint=https://collector:4318',
        '--event-otlp-protocol=http/json',
        '--event-otlp-header=Authorization=Basic dXNlcjpwYXNz==',
        '--event-otlp-header',
        'X-Scope=a,b',
        '--event-otlp-timeout=3s',
        '--event-otlp-insecure-skip-tls-verify',
      ],
      { OTEL_RESOURCE_ATTRIBUTES: 'k8s.cluster.name=prod%20eu1,deployment.environment=prod' },
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(options.eventOtlpHeaders, { Authorization: 'Basic dXNlcjpwYXNz==', 'X-Scope': 'a,b' });
    assert.equal(options.eventOtlpProtocol, 'http/json');
    assert.equal(options.eventOtlpTimeoutMs, 3000);
    assert.equal(options.eventOtlpInsecureSkipTlsVerify, true);
    assert.deepEqual(options.eventOtlpResource, [
      ['k8s.cluster.name', 'prod eu1'],
      ['deployment.environment', 'prod'],
    ]);
  });

  it('report bad values naming the flag, never a header value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-otlp-cfg-'));
    const notPem = join(dir, 'ca.txt');
    writeFileSync(notPem, 'hello');
    const { errors } = parse(
      [
        '--event-otlp-endpoint=grpc://collector:4317',
        '--event-otlp-protocol=grpc',
        '--event-otlp-header=Authorization: secret',
        '--event-otlp-timeout=0s',
        `--event-otlp-ca-file=${notPem}`,
      ],
      { OTEL_RESOURCE_ATTRIBUTES: 'novalue' },
    );
    assert.deepEqual(errors, [
      '--event-otlp-header: expected "Name=value"',
      `--event-otlp-ca-file: ${notPem}: no PEM certificate in it`,
      'OTEL_RESOURCE_ATTRIBUTES: expected key=value, got "novalue"',
      '--event-otlp-protocol must be http/protobuf or http/json',
      '--event-otlp-timeout must be positive',
      '--event-otlp-endpoint must be an http:// or https:// URL',
    ]);
    assert.equal(errors.join('\n').includes('secret'), false);
    const missing = parse([
      '--event-otlp-endpoint=http://c:4318',
      '--event-otlp-ca-file=/nonexistent/ca.pem',
    ]);
    assert.match(missing.errors.join('\n'), /--event-otlp-ca-file: \/nonexistent\/ca\.pem: ENOENT/);
  });

  it('hands the sink the CA PEM read at parsing, even when the file is gone by then', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-otlp-ca-'));
    const file = join(dir, 'ca.pem');
    writeFileSync(file, caCert);
    const { options, errors } = parse([
      '--event-otlp-endpoint=https://c:4318',
      `--event-otlp-ca-file=${file}`,
    ]);
    assert.deepEqual(errors, []);
    rmSync(file);
    assert.deepEqual(otlpTls(options), { ca: caCert, insecureSkipVerify: false });
    assert.deepEqual(otlpTls(parse(['--event-otlp-endpoint=https://c:4318']).options), {
      insecureSkipVerify: false,
    });
  });

  it('warns when --event-webhook-url points at an OTLP logs path (the partialSuccess trap)', async () => {
    const { logger, records } = captureLogger();
    const { options } = parse(['--event-webhook-url=http://collector:4318/v1/logs']);
    const sinks = createPersistSinks(options, { clock: new FakeClock(), registry: new Registry(), logger });
    await sinks.close();
    assert.ok(records.some((r) => r.level === 40 && /--event-otlp-endpoint/.test(String(r.msg))));
    const plain = captureLogger();
    const ok = parse(['--event-webhook-url=http://receiver/npd']);
    await createPersistSinks(ok.options, {
      clock: new FakeClock(),
      registry: new Registry(),
      logger: plain.logger,
    }).close();
    assert.equal(
      plain.records.some((r) => r.level === 40),
      false,
      'no warning for another path',
    );
  });
});
