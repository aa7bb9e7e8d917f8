import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { type FileOps, FileSink, type FileSinkOptions } from '../../../../src/events/persist/file.ts';
import { captureLogger, kubeEvent, metricValue } from './helpers.ts';

let dir = '';

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'npd-file-sink-'));
});

afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

function setup(file: string, extra: Partial<FileSinkOptions> = {}) {
  const registry = new Registry();
  const { logger, records } = captureLogger();
  const sink = new FileSink({ path: file, nodeName: 'node-1', registry, logger, ...extra });
  const metric = (name: string, labels: Record<string, string> = {}) =>
    metricValue(registry, `npd_event_sink_${name}_total`, { sink: 'file', ...labels });
  return { sink, records, metric };
}

async function readLines(file: string): Promise<string[]> {
  const text = await fsp.readFile(file, 'utf8');
  assert.ok(text.endsWith('\n'), 'every line is terminated');
  return text.slice(0, -1).split('\n');
}

describe('FileSink', () => {
  it('creates directories and appends one valid JSON event per line', async () => {
    const file = path.join(dir, 'a', 'b', 'events.jsonl');
    const t = setup(file);
    for (let i = 0; i < 3; i++) await t.sink.write(kubeEvent({ message: `m${i}` }));
    const events = (await readLines(file)).map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => e.message),
      ['m0', 'm1', 'm2'],
    );
    const e = events[0];
    assert.equal(e.kind, 'Event');
    assert.equal(e.involvedObject.name, 'node-1');
    assert.equal(e.reason, 'OOMKilling');
    assert.equal(e.type, 'Warning');
    assert.equal(e.count, 1);
    assert.deepEqual(e.source, { component: 'kernel-monitor', host: 'node-1' });
    assert.equal(e.firstTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(e.lastTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(e.nodeName, 'node-1');
    assert.equal((await fsp.stat(file)).mode & 0o777, 0o640 & ~process.umask());
    assert.equal(await t.metric('writes', { result: 'success' }), 3);
  });

  it('appends to an existing file and serialises concurrent writes', async () => {
    const file = path.join(dir, 'events.jsonl');
    await fsp.writeFile(file, '{"old":true}\n');
    const t = setup(file);
    await Promise.all([0, 1, 2, 3].map((i) => t.sink.write(kubeEvent({ message: `m${i}` }))));
    const lines = await readLines(file);
    assert.equal(lines[0], '{"old":true}');
    assert.deepEqual(
      lines.slice(1).map((l) => JSON.parse(l).message),
      ['m0', 'm1', 'm2', 'm3'],
    );
  });

  it('rotates to <file>.1 before a write would pass maxBytes, keeping one rotated file', async () => {
    const file = path.join(dir, 'events.jsonl');
    const probe = setup(path.join(dir, 'probe.jsonl'));
    await probe.sink.write(kubeEvent({ message: 'm0' }));
    const lineBytes = (await fsp.stat(path.join(dir, 'probe.jsonl'))).size;
    const t = setup(file, { maxBytes: Math.floor(lineBytes * 2.5) });
    for (let i = 0; i < 6; i++) await t.sink.write(kubeEvent({ message: `m${i}` }));
    const messages = async (f: string) => (await readLines(f)).map((l) => JSON.parse(l).message);
    assert.deepEqual(await messages(`${file}.1`), ['m2', 'm3']);
    assert.deepEqual(await messages(file), ['m4', 'm5']);
    assert.ok((await fsp.stat(file)).size <= lineBytes * 2.5);
    await assert.rejects(fsp.stat(`${file}.2`), { code: 'ENOENT' });
  });

  it('counts an unwritable path instead of throwing, and retries the lines with the next event', async () => {
    const blocker = path.join(dir, 'not-a-dir');
    await fsp.writeFile(blocker, '');
    const file = path.join(blocker, 'events.jsonl');
    const t = setup(file);
    await t.sink.write(kubeEvent({ message: 'm0' }));
    assert.equal(await t.metric('writes', { result: 'failure' }), 1);
    assert.equal(await t.metric('given_up'), 0, 'kept for the next event');
    assert.equal(t.records.filter((r) => r.level === 40).length, 1);
    await fsp.rm(blocker);
    await t.sink.write(kubeEvent({ message: 'm1' }));
    assert.deepEqual(
      (await readLines(file)).map((l) => JSON.parse(l).message),
      ['m0', 'm1'],
    );
    assert.equal(await t.metric('retries'), 1);
    assert.equal(await t.metric('writes', { result: 'success' }), 2);
  });

  it('gives up the oldest lines beyond its backlog, and the rest at close', async () => {
    const blocker = path.join(dir, 'not-a-dir');
    await fsp.writeFile(blocker, '');
    const t = setup(path.join(blocker, 'events.jsonl'), { maxBacklog: 2 });
    for (let i = 0; i < 5; i++) await t.sink.write(kubeEvent({ message: `m${i}` }));
    assert.equal(await t.metric('given_up'), 3);
    await t.sink.close();
    assert.equal(await t.metric('given_up'), 5);
  });

  it('ends a partial line left by a failed append, so it spoils only itself', async () => {
    const file = path.join(dir, 'events.jsonl');
    let failNext = true;
    const fs: FileOps = {
      ...fsp,
      async appendFile(f, data, opts) {
        if (!failNext) return fsp.appendFile(f, data, opts);
        failNext = false;
        await fsp.appendFile(f, data.slice(0, 10), opts);
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      },
    };
    const t = setup(file, { fs });
    await t.sink.write(kubeEvent({ message: 'm0' }));
    await t.sink.write(kubeEvent({ message: 'm1' }));
    const lines = await readLines(file);
    assert.equal(lines.length, 3);
    assert.throws(() => JSON.parse(lines[0]!));
    assert.deepEqual(
      lines.slice(1).map((l) => JSON.parse(l).message),
      ['m0', 'm1'],
    );
  });
  it('ends a torn last line a previous run left (ENOSPC, then a restart) before its first append', async () => {
    const file = path.join(dir, 'events.jsonl');
    await fsp.writeFile(file, '{"old":true}\n{"torn":');
    const t = setup(file);
    await t.sink.write(kubeEvent({ message: 'm0' }));
    const lines = await readLines(file);
    assert.deepEqual(lines.slice(0, 2), ['{"old":true}', '{"torn":']);
    assert.equal(JSON.parse(lines[2]!).message, 'm0');
    assert.equal(await t.metric('torn_lines'), 1);
    assert.ok(t.records.some((r) => r.level === 40 && /torn|partial/.test(String(r.msg))));
  });

  it('leaves a file that ends at a line boundary alone', async () => {
    const file = path.join(dir, 'events.jsonl');
    await fsp.writeFile(file, '{"old":true}\n');
    const t = setup(file);
    await t.sink.write(kubeEvent({ message: 'm0' }));
    assert.equal((await readLines(file)).length, 2);
    assert.equal(await t.metric('torn_lines'), 0);
  });
});
