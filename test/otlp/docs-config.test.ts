/**
 * docs/event-sinks.md's example Collector config is loaded by the real Collector (`otelcol validate`),
 * and a broken copy of it is refused, so the check can fail.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { REPO } from '../support/agent-process.ts';
import { ensureCollector } from '../support/otelcol.ts';

/** The first yaml block of the OTLP section: the Collector config users copy. */
function docsCollectorConfig(): string {
  const text = readFileSync(join(REPO, 'docs', 'event-sinks.md'), 'utf8');
  const section = text.slice(text.indexOf('## OTLP: OpenTelemetry Collector'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.includes('receivers:'), 'the OTLP section opens with a Collector config');
  return block ?? '';
}

function validate(bin: string, config: string): Promise<{ code: number; output: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'npd-otelcol-docs-')), 'config.yaml');
  writeFileSync(file, config);
  return new Promise((resolve) => {
    execFile(bin, ['validate', `--config=${file}`], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? Number((err as NodeJS.ErrnoException & { code?: number }).code ?? 1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

describe('docs/event-sinks.md Collector config', () => {
  let bin = '';
  before(async () => {
    bin = await ensureCollector();
  });

  it('is valid for the real Collector', async () => {
    const r = await validate(bin, docsCollectorConfig());
    assert.equal(r.code, 0, r.output);
  });

  it('a pipeline naming a processor that is not configured is refused (negative control)', async () => {
    const broken = docsCollectorConfig().replace(
      'processors: [batch]',
      'processors: [batch, memory_limiter]',
    );
    assert.notEqual(broken, docsCollectorConfig());
    const r = await validate(bin, broken);
    assert.notEqual(r.code, 0);
    assert.match(r.output, /memory_limiter/);
  });
});
