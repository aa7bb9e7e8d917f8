import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../../../src/core/clock.ts';
import { createFilelogSource } from '../../../../src/sources/filelog/source.ts';
import { HOUR, logConfig, makeDeps, metric, tempDir, waitFor } from '../harness.ts';

const WRITER = fileURLToPath(new URL('../../../fixtures/filelog/writer.mjs', import.meta.url));
const LINES = 20_000;
const ROTATIONS = 3;

function runWriter(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, path, String(LINES), String(ROTATIONS)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited with ${code}`))));
  });
}

function startSource(t: TestContext, root: string, watch: boolean) {
  const deps = makeDeps(systemClock, root);
  const config = logConfig({
    plugin: 'filelog',
    logPath: '/app.log',
    lookbackMs: HOUR,
    pluginConfig: {
      timestamp: '^(\\S+) ',
      message: '^\\S+ (.*)$',
      timestampFormat: '2006-01-02T15:04:05.999Z07:00',
    },
  });
  const source = createFilelogSource(config, deps, {
    uptimeFs: { readFileSync: () => '100000.00 1.00\n' },
    ...(watch ? {} : { watch: null }),
    pollIntervalMs: 100,
    rotateGraceMs: 500,
  });
  t.after(() => source.stop());
  const seqs: number[] = [];
  source.start((batch) => {
    for (const l of batch) seqs.push(Number(/^seq=(\d+) x*$/.exec(l.message)?.[1] ?? Number.NaN));
  });
  return { deps, seqs };
}

/** Every sequence number exactly once: one lost, duplicated or split line fails the test. */
async function followWhileRotating(t: TestContext, watch: boolean): Promise<void> {
  const root = tempDir(t);
  const { deps, seqs } = startSource(t, root, watch);
  const began = Date.now();
  await runWriter(join(root, 'app.log'));
  await waitFor(() => seqs.length >= LINES, 15_000, `${LINES} lines`).catch(() => undefined);
  // Give a duplicate, if any, the time to show up.
  await new Promise((r) => setTimeout(r, 300));
  const seen = new Set(seqs);
  const missing = LINES - [...seen].filter((n) => n >= 1 && n <= LINES).length;
  t.diagnostic(
    `${watch ? 'fs.watch + polling' : 'polling only'}: ${LINES} lines, ${ROTATIONS} rotations, ` +
      `delivered ${seqs.length}, missing ${missing}, duplicates ${seqs.length - seen.size}, ` +
      `malformed ${seqs.filter(Number.isNaN).length}, ${Date.now() - began} ms`,
  );
  assert.equal(missing, 0, 'no line lost');
  assert.equal(seqs.length, LINES, 'no line duplicated or split');
  assert.equal(await metric(deps.registry, 'npd_log_lines_unparsable_total'), 0);
  const renames =
    (await metric(deps.registry, 'npd_log_file_events_total', { source: 'test-monitor', event: 'rename' })) +
    (await metric(deps.registry, 'npd_log_file_events_total', { source: 'test-monitor', event: 'delete' }));
  assert.equal(renames, ROTATIONS, 'each rotation noticed once');
}

describe('file follower loss test (a real writer process rotating the file)', () => {
  it('loses no line across 3 rename rotations with fs.watch', (t) => followWhileRotating(t, true));
  it('loses no line across 3 rename rotations polling only', (t) => followWhileRotating(t, false));
});
