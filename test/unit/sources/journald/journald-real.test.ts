import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../../../src/core/clock.ts';
import type { LogLine } from '../../../../src/core/types.ts';
import { createJournaldSource } from '../../../../src/sources/journald/source.ts';
import { TestJournal, testJournalUnavailable } from '../../../support/journald.ts';
import { logConfig, MINUTE, makeDeps, metric, tempDir, waitFor } from '../harness.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/journal/', import.meta.url));

function hasJournalctl(): boolean {
  return spawnSync('journalctl', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * True when a running journald accepted the entry. systemd-cat fails without journald's stdout socket;
 * `logger --journald` is no probe, it exits 0 even when nothing listens.
 */
function writeToJournal(tag: string, text: string): boolean {
  return spawnSync('systemd-cat', ['-t', tag, 'echo', text], { stdio: 'ignore', timeout: 5000 }).status === 0;
}

async function viaRealJournal(t: TestContext, tag: string, id: string): Promise<void> {
  const deps = makeDeps(systemClock, '/');
  const source = createJournaldSource(logConfig({ pluginConfig: { source: tag }, lookbackMs: MINUTE }), deps);
  const lines: LogLine[] = [];
  t.after(() => source.stop());
  source.start((batch) => lines.push(...batch));
  const backlog = await waitFor(
    () => lines.find((l) => l.message === `backlog ${id}`),
    15_000,
    'the backlog marker',
  );
  assert.ok(writeToJournal(tag, `live ${id}`));
  const live = await waitFor(() => lines.find((l) => l.message === `live ${id}`), 15_000, 'the live marker');
  assert.ok(Math.abs(live.timestamp - Date.now()) < MINUTE && backlog.timestamp <= live.timestamp);
  assert.equal(lines.filter((l) => l.message.includes(id)).length, 2, 'each marker exactly once');
  assert.deepEqual(source.health(), { up: true, healthy: true });
}

/** No journald to write to: the real journalctl must at least accept our flags and keep following. */
async function realJournalctlAcceptsFlags(t: TestContext): Promise<void> {
  const root = tempDir(t);
  // An empty journal directory: without --merge, journalctl --follow would exit "No such boot ID".
  mkdirSync(join(root, 'var/log/journal'), { recursive: true });
  const deps = makeDeps(systemClock, root);
  const config = logConfig({
    pluginConfig: { source: 'npd-test-none', unit: 'none.service' },
    lookbackMs: MINUTE,
  });
  const source = createJournaldSource(config, deps);
  t.after(() => source.stop());
  source.start(() => {});
  await sleep(1500);
  // No journal files: waiting, which keeps /healthz ok (a restart would not make a journal appear).
  assert.deepEqual(source.health(), {
    up: true,
    healthy: false,
    waiting: true,
    detail: `no journal files in ${join(root, 'var/log/journal')}: systemd-journald is not running or writes elsewhere`,
  });
  assert.equal(
    await metric(deps.registry, 'npd_journal_restarts_total'),
    0,
    'journalctl still following after 1.5 s',
  );
  await source.stop();
}

/** An exported `journalctl -o json --all` fixture, through the same process, splitter and parser. */
async function viaExportedFixture(t: TestContext): Promise<void> {
  const root = tempDir(t);
  const dir = join(root, 'var/log/journal');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(FIXTURES, 'export.jsonl'), join(dir, 'entries.jsonl'));
  const deps = makeDeps(systemClock, root);
  // The fixture is from 2025; a boot ten years ago and a long lookback keep it inside the window.
  const config = logConfig({
    pluginConfig: { unit: 'kubelet.service' },
    lookbackMs: 10 * 365 * 24 * 60 * MINUTE,
  });
  const source = createJournaldSource(config, deps, {
    command: join(FIXTURES, 'fake-journalctl.mjs'),
    fs: { readFileSync: () => '315360000.00 1.00\n' },
  });
  const lines: LogLine[] = [];
  t.after(() => source.stop());
  source.start((batch) => lines.push(...batch));
  await waitFor(() => lines.length === 2, 5000, 'the kubelet entries');
  assert.deepEqual(lines, [
    { timestamp: 1_750_000_000_000, message: 'kubelet started' },
    { timestamp: 1_750_000_003_000, message: 'padded message with spaces' },
  ]);
  const colour: LogLine[] = [];
  const wide = createJournaldSource(
    { ...config, source: 'wide', pluginConfig: { source: 'containerd' } },
    deps,
    {
      command: join(FIXTURES, 'fake-journalctl.mjs'),
      fs: { readFileSync: () => '315360000.00 1.00\n' },
    },
  );
  t.after(() => wide.stop());
  wide.start((batch) => colour.push(...batch));
  await waitFor(() => colour.length === 1, 5000, 'the byte-array entry');
  assert.equal(colour[0]?.message, '\u001b[31mError\u001b[0m: containerd down');
}

/** A test journald, stopped (resumed first if a test left it stopped) and removed after the test. */
async function startedJournal(t: TestContext): Promise<TestJournal> {
  const journal = new TestJournal(tempDir(t));
  t.after(async () => {
    if (journal.running) journal.signal('SIGCONT');
    await journal.stop();
    journal.cleanup();
  });
  await journal.start();
  return journal;
}

it('reads the real journal when a journald is running, else an exported fixture', async (t) => {
  if (!hasJournalctl()) {
    t.skip('no journalctl on this machine');
    return;
  }
  const id = randomBytes(6).toString('hex');
  const tag = `npd-test-${id}`;
  if (writeToJournal(tag, `backlog ${id}`)) {
    t.diagnostic(`ran against the REAL journal (wrote ${tag} with systemd-cat)`);
    await viaRealJournal(t, tag, id);
    return;
  }
  t.diagnostic('no running journald accepted a write: ran the EXPORTED FIXTURE through fake journalctl');
  t.diagnostic('and checked that the real journalctl accepts our flags and keeps following an empty journal');
  await realJournalctlAcceptsFlags(t);
  await viaExportedFixture(t);
});

it('a real systemd-journald: entries across a rotation and a journald restart arrive once, in order', {
  skip: testJournalUnavailable() ?? false,
  timeout: 90_000,
}, async (t) => {
  const journal = await startedJournal(t);
  const unit = `npd-test-${randomBytes(4).toString('hex')}.service`;
  const deps = makeDeps(systemClock, '/');
  const source = createJournaldSource(logConfig({ pluginConfig: { unit }, lookbackMs: MINUTE }), deps);
  t.after(() => source.stop());
  const lines: LogLine[] = [];
  await journal.write(unit, 'kubelet', ['one', 'two']);
  // Control: the same identifier from another unit is not this monitor's.
  await journal.write('npd-test-other.service', 'kubelet', ['not ours']);
  source.start((batch) => lines.push(...batch));
  await waitFor(() => lines.length >= 2, 15_000, 'the backlog');
  await journal.rotate();
  await journal.write(unit, 'kubelet', ['three', 'four']);
  await journal.stop();
  await journal.start();
  await journal.write(unit, 'kubelet', ['five']);
  await waitFor(() => lines.length >= 5, 15_000, 'the entries after the rotation and the restart');
  await sleep(1500);
  assert.deepEqual(
    lines.map((l) => l.message),
    ['one', 'two', 'three', 'four', 'five'],
  );
  assert.equal(journal.files().length, 2, 'the rotation left an archived file beside the active one');
  assert.deepEqual(source.health(), { up: true, healthy: true });
});

it("a journald that reads late still records the writer's unit: TestJournal.write holds its stream", {
  skip: testJournalUnavailable() ?? false,
  timeout: 60_000,
}, async (t) => {
  const journal = await startedJournal(t);
  const unit = `npd-test-${randomBytes(4).toString('hex')}.service`;
  // Stopped for longer than a fixed one-second hold: journald takes the unit from the writer's /proc
  // when it reads the stream, so the writer must still be there then.
  journal.signal('SIGSTOP');
  const written = journal.write(unit, 'kubelet', ['late']);
  await sleep(2500);
  journal.signal('SIGCONT');
  await written;
  const r = spawnSync('journalctl', [
    `--directory=${journal.directory}`,
    '--output=cat',
    `_SYSTEMD_UNIT=${unit}`,
  ]);
  assert.equal(r.stdout.toString(), 'late\n');
});
