import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hostPaths } from '../../../../src/host/paths.ts';
import { fakeHost } from './helpers.ts';
import { runShipped } from './run-shipped.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/probes');

describe('rules/probes.yaml end to end', () => {
  it('reports the problems of a fake host', async () => {
    const host = await fakeHost({
      'proc/sys/fs/file-nr': '95 0 100\n',
      'proc/loadavg': '0.00 0.01 0.05 1/120 999\n',
      'proc/sys/kernel/pid_max': '32768\n',
      'proc/sys/kernel/threads-max': '60000\n',
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'),
    });
    const status = await runShipped('probes.yaml', host);
    const byType = Object.fromEntries(status.conditions.map((c) => [c.type, [c.status, c.reason]]));
    assert.deepEqual(byType.FileHandlesLow, ['True', 'FileHandlesNearLimit']);
    assert.deepEqual(byType.ProcessIDsLow, ['False', 'PIDsAvailable']);
    assert.deepEqual(byType.ConntrackEntriesLow, ['False', 'ConntrackTableAvailable']);
    assert.deepEqual(byType.ReadonlyRootFilesystem, ['True', 'RootFilesystemIsReadOnly']);
    // Disk and inodes measure the temp directory's real file system: any verdict but Unknown.
    assert.notEqual(byType.FilesystemSpaceLow?.[0], 'Unknown');
    assert.notEqual(byType.FilesystemInodesLow?.[0], 'Unknown');
    assert.equal(status.conditions.length, 6);
  });

  it('gives a verdict for every default probe on this machine', async () => {
    const status = await runShipped('probes.yaml', hostPaths('/'));
    const unknown = status.conditions.filter((c) => c.status === 'Unknown');
    assert.deepEqual(unknown, []);
    assert.equal(status.conditions.length, 6);
  });
});
