import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diagnosticsUploadKey } from '../../../src/agent/diagnostics.ts';
import { createLogger } from '../../../src/core/logger.ts';
import { sealUploadURL } from '../../../src/diagnostics/sealed-url.ts';

function logger() {
  const lines: string[] = [];
  return {
    lines,
    logger: createLogger({ level: 'warn', format: 'json', write: (l: string) => lines.push(l) }),
  };
}

describe('the diagnostics key file', () => {
  it('is created 0600 when absent and gives the same key at the next start', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'npd-key-')), 'diagnostics-key.pem');
    const first = diagnosticsUploadKey(file, logger().logger);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const again = diagnosticsUploadKey(file, logger().logger);
    assert.equal(again.kid, first.kid);
    const sealed = sealUploadURL('https://x/y', first.annotation, 'n');
    assert.equal(again.open(sealed, 'n'), 'https://x/y', 'a request sealed before a restart still opens');
  });

  it('a file holding no key is replaced (with a warning), and made 0600', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'npd-key-')), 'diagnostics-key.pem');
    writeFileSync(file, 'not a key', { mode: 0o644 });
    const log = logger();
    const key = diagnosticsUploadKey(file, log.logger);
    assert.equal(readFileSync(file, 'utf8'), key.pem);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(log.lines.join(''), /holds no usable key/);
  });

  it('without a file, or with one that cannot be written, the key lives in memory', () => {
    const a = diagnosticsUploadKey('', logger().logger);
    const b = diagnosticsUploadKey('', logger().logger);
    assert.notEqual(a.kid, b.kid, 'a new key at each start');
    const log = logger();
    const key = diagnosticsUploadKey('/nonexistent-dir/key.pem', log.logger);
    assert.match(key.annotation, /^x25519:/);
    assert.match(log.lines.join(''), /could not write the diagnostics key file/);
  });
});
