// A log file written as fast as the test can and rotated every second while the agent is behind:
// rename rotations (the old file renamed away, a new one created) lose nothing, and copytruncate
// rotations lose only what was truncated away unread, counted to the byte. Every line written is read
// (npd_log_lines_read_total) or counted lost (npd_log_rotation_lost_bytes_total / line length).
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { faultSuite, marker, metricOf, waitFor, writeMonitor } from './support.ts';

const id = marker('rot');
const source = `${id}-file`;
/** 600,000 lines/s, written every 50 ms: faster than the agent reads, also on a quiet machine (it kept up with 150,000). */
const CHUNK = 30_000;
const TICK_MS = 50;

function fileMonitor(dir: string): string {
  writeFileSync(join(dir, 'app.log'), '');
  return writeMonitor(dir, 'file.yaml', {
    plugin: 'filelog',
    pluginConfig: {
      timestamp: '^(\\S+)',
      message: '^\\S+ (.*)',
      timestampFormat: '2006-01-02T15:04:05Z07:00',
    },
    logPath: join(dir, 'app.log'),
    lookback: '0s',
    bufferSize: 1,
    source,
    // The test's own file: its writer is the test (a log file names none; docs/rules.md).
    trustedWriter: 'any',
    conditions: [],
    rules: [{ type: 'temporary', reason: 'NeverSeen', pattern: `${id} never written` }],
  });
}

const s = faultSuite({ configs: (dir) => [fileMonitor(dir)] });
const log = () => join(s.dir, 'app.log');
const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
/** Every line has the same length, so lost bytes convert to lost lines exactly. */
const LINE = (n: number) => `${stamp} ${id} line ${String(n).padStart(9, '0')}\n`;
const LINE_BYTES = Buffer.byteLength(LINE(0));

let written = 0;
function writeChunk(): void {
  let text = '';
  for (let i = 0; i < CHUNK; i++) text += LINE(written + i);
  appendFileSync(log(), text);
  written += CHUNK;
}

/** Writes at the paced rate for one second. */
async function writeOneSecond(): Promise<void> {
  const start = Date.now();
  for (let k = 1; k <= 1000 / TICK_MS; k++) {
    writeChunk();
    const wait = start + k * TICK_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

const read = () => metricOf(s.agent, 'npd_log_lines_read_total', `source="${source}"`);
let lostSeen = 0;
const lostBytes = async () => {
  lostSeen = await metricOf(s.agent, 'npd_log_rotation_lost_bytes_total', `source="${source}"`);
  return lostSeen;
};

test('rename rotation every second while the agent is behind: every line is read', {
  timeout: 180_000,
}, async () => {
  const began = Date.now();
  for (let second = 0; second < 6; second++) {
    await writeOneSecond();
    renameSync(log(), `${log()}.${second}`);
    writeFileSync(log(), '');
  }
  const took = Date.now() - began;
  const behind = written - (await read());
  let last = 0;
  await waitFor(
    async () => {
      last = await read();
      return last >= written;
    },
    60_000,
    () => `read ${last} of ${written} lines, lost ${lostSeen} bytes\n${s.agent.output()}`,
  );
  process.stdout.write(
    `# rename: ${written} lines in ${took} ms, 6 rotations; ${behind} lines unread after the last one\n`,
  );
  assert.ok(behind > 0, 'the agent was behind at the last rotation, or the test proved nothing');
  assert.equal(await read(), written, 'no line read twice');
  assert.equal(await lostBytes(), 0);
});

test('copytruncate while the agent is behind: the unread rest is counted, to within the line each cut splits', {
  timeout: 180_000,
}, async () => {
  const before = written;
  const readBefore = await read();
  let truncations = 0;
  for (let round = 0; round < 3; round++) {
    for (let k = 0; k < 3; k++) await writeOneSecond();
    // The agent learns the file's size at the start of each read slice (256 KiB, some 5,000 lines);
    // give it a few before truncating, too few to catch up.
    await new Promise((r) => setTimeout(r, 150));
    if ((await read()) - readBefore < written - before) truncations += 1;
    copyFileSync(log(), `${log()}.ct${round}`);
    truncateSync(log(), 0);
  }
  // A truncation can cut a line: its head is read (one line), the rest is counted in lost bytes.
  const lostLines = async () => Math.floor((await lostBytes()) / LINE_BYTES);
  let last = 0;
  await waitFor(
    async () => {
      last = (await read()) - readBefore + (await lostLines());
      return last >= written - before;
    },
    120_000,
    () => `read or lost ${last} of ${written - before} lines, lost ${lostSeen} bytes`,
  );
  const got = (await read()) - readBefore;
  process.stdout.write(
    `# copytruncate: ${written - before} lines written, ${got} read, ${await lostLines()} counted lost, ` +
      `${truncations} of 3 truncations while behind\n`,
  );
  assert.ok(truncations >= 1, 'the agent was behind at a truncation, or the test proved nothing');
  assert.ok((await lostBytes()) > 0, 'the truncations took unread lines, counted');
  // Exact but for the line each truncation may cut: its head is read, its rest counted in lost bytes.
  const accounted = got + (await lostLines());
  assert.ok(
    Math.abs(accounted - (written - before)) <= 3,
    `every line read or counted lost: ${accounted} of ${written - before}`,
  );
});
