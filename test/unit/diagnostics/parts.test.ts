import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import type { BundlePart } from '../../../src/diagnostics/collect.ts';
import { bundleParts, type PartSources } from '../../../src/diagnostics/parts.ts';
import { hostPaths } from '../../../src/host/paths.ts';

/** A stand-in journalctl: prints its arguments, then runs `body`. */
function fakeJournalctl(body: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'npd-journalctl-')), 'journalctl');
  writeFileSync(file, `#!/bin/sh\necho "args: $*"\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function sources(journalctl: string, journalDirs: readonly string[]): PartSources {
  return {
    paths: hostPaths('/hostroot'),
    clock: new FakeClock(Date.UTC(2026, 0, 1, 12)),
    journalctl,
    conditions: () => [],
    events: () => [],
    metrics: async () => '',
    listDir: (path) => (journalDirs.includes(path) ? ['machine-id'] : undefined),
  };
}

const kubelet = (parts: BundlePart[]) => parts.find((p) => p.name === 'journal/kubelet.log') as BundlePart;
const signal = new AbortController().signal;

describe('journal parts', () => {
  it('asks journalctl for the unit since sinceMinutes ago, in the detected directory', async () => {
    const part = kubelet(
      bundleParts(
        sources(fakeJournalctl('echo "Jan 01 kubelet[1]: started"'), ['/hostroot/var/log/journal']),
        30,
      ),
    );
    const out = await part.read(10_000, signal);
    assert.ok('text' in out);
    const since = Math.floor((Date.UTC(2026, 0, 1, 12) - 30 * 60_000) / 1000);
    assert.match(
      out.text,
      new RegExp(`--directory=/hostroot/var/log/journal --unit=kubelet.service --since=@${since} `),
    );
    assert.match(out.text, /kubelet\[1\]: started/);
  });

  it('no journal directory, or no journal files in it, is absent rather than an error', async () => {
    const none = await kubelet(bundleParts(sources(fakeJournalctl('exit 0'), []), 60)).read(1000, signal);
    assert.deepEqual(none, {
      absent: 'no journal directory: neither /hostroot/var/log/journal nor /hostroot/run/log/journal exists',
    });
    const empty = fakeJournalctl('echo "-- No entries --"; echo "No journal files were found." >&2');
    const noFiles = await kubelet(bundleParts(sources(empty, ['/hostroot/run/log/journal']), 60)).read(
      1000,
      signal,
    );
    assert.deepEqual(noFiles, { absent: 'no journal files in the journal directory' });
  });

  it('keeps the newest lines within the budget', async () => {
    const part = kubelet(
      bundleParts(sources(fakeJournalctl('seq 1 5000'), ['/hostroot/var/log/journal']), 60),
    );
    const out = await part.read(10, signal);
    assert.ok('text' in out);
    // The tail kept is "4999\n5000\n"; where it starts is unknown, so its first line is dropped.
    assert.equal(out.text, '5000\n');
    assert.equal(out.truncated, true);
  });

  it('a head cut drops the partial first line, so no key is cut off its value', async () => {
    const line = 'kubelet[1]: mount -o password=hunter2secret';
    const journal = fakeJournalctl(`echo "${line}"; echo "kubelet[1]: next line"`);
    const part = kubelet(bundleParts(sources(journal, ['/hostroot/var/log/journal']), 60));
    // The budget cuts inside "password": what is left of the first line is "word=hunter2secret".
    const budget = 'word=hunter2secret\nkubelet[1]: next line\n'.length;
    const out = await part.read(budget, signal);
    assert.ok('text' in out);
    assert.equal(out.text, 'kubelet[1]: next line\n');
    assert.equal(out.truncated, true);
  });

  it('a failing journalctl is an error naming its exit code and message', async () => {
    const part = kubelet(
      bundleParts(
        sources(fakeJournalctl('echo "Failed to open: Permission denied" >&2; exit 1'), [
          '/hostroot/var/log/journal',
        ]),
        60,
      ),
    );
    await assert.rejects(part.read(1000, signal), /journalctl exited 1: Failed to open: Permission denied/);
  });
});

describe('proc parts', () => {
  it('read the kernel-wide files from --host-proc and the mount table from <host-root>/proc/1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npd-parts-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    // The DaemonSet's layout: the pod's own /proc for the global files, the host's mountinfo alone.
    mkdirSync(join(dir, 'podproc'));
    mkdirSync(join(dir, 'host', 'proc', '1'), { recursive: true });
    for (const f of ['meminfo', 'loadavg', 'uptime']) writeFileSync(join(dir, 'podproc', f), `${f} text\n`);
    writeFileSync(join(dir, 'host', 'proc', '1', 'mountinfo'), '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n');
    const src = { ...sources('true', []), paths: hostPaths(join(dir, 'host'), join(dir, 'podproc')) };
    const parts = bundleParts(src, 60).filter((p) => p.name.startsWith('proc/'));
    const read = await Promise.all(parts.map(async (p) => [p.name, await p.read(1000, signal)]));
    assert.deepEqual(Object.fromEntries(read), {
      'proc/meminfo': { text: 'meminfo text\n' },
      'proc/loadavg': { text: 'loadavg text\n' },
      'proc/uptime': { text: 'uptime text\n' },
      'proc/mountinfo': { text: '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n' },
    });
  });
});
