import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from '../../../../src/agent/options.ts';
import { parseHeaderFlags } from '../../../../src/events/persist/config.ts';

const parse = (argv: string[]) => parseOptions(argv, {}, 'host');

describe('event sink flags', () => {
  it('are off by default, with a 10s timeout and 10MiB rotation', () => {
    const { options, errors } = parse([]);
    assert.deepEqual(errors, []);
    assert.equal(options.eventWebhookUrl, '');
    assert.deepEqual(options.eventWebhookHeaders, {});
    assert.equal(options.eventWebhookTimeoutMs, 10_000);
    assert.equal(options.eventFile, '');
    assert.equal(options.eventFileMaxBytes, 10 * 1024 * 1024);
  });

  it('parse a webhook with repeated headers and a file', () => {
    const { options, errors } = parse([
      '--event-webhook-url=https://events.example.com/npd',
      '--event-webhook-header=Authorization: Bearer abc',
      '--event-webhook-header',
      'X-Scope: a,b',
      '--event-webhook-timeout=3s',
      '--event-file=/var/log/npd/events.jsonl',
      '--event-file-max-bytes=1048576',
    ]);
    assert.deepEqual(errors, []);
    assert.equal(options.eventWebhookUrl, 'https://events.example.com/npd');
    assert.deepEqual(options.eventWebhookHeaders, { Authorization: 'Bearer abc', 'X-Scope': 'a,b' });
    assert.equal(options.eventWebhookTimeoutMs, 3000);
    assert.equal(options.eventFile, '/var/log/npd/events.jsonl');
    assert.equal(options.eventFileMaxBytes, 1_048_576);
  });

  it('report bad values without echoing header values', () => {
    const { errors } = parse([
      '--event-webhook-url=ftp://x',
      '--event-webhook-header=no colon secret',
      '--event-file-max-bytes=0',
    ]);
    assert.equal(errors.length, 3);
    assert.equal(errors.join('\n').includes('secret'), false);
    const bad: string[] = [];
    parseHeaderFlags(['X-Bad: a\nb'], bad);
    parseHeaderFlags(['Content-Length: 5'], bad);
    assert.deepEqual(bad, [
      '--event-webhook-header: invalid characters in X-Bad',
      '--event-webhook-header: Content-Length is set by the agent',
    ]);
  });
});
