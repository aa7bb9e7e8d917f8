import assert from 'node:assert/strict';
import type { StatsFs } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isReadOnly, mountFor, parseMountinfo } from '../../../../src/host/procfs/mountinfo.ts';
import { hostPaths } from '../../../../src/host/paths.ts';
import { blockUsage, inodeUsage } from '../../../../src/host/procfs/statfs.ts';
import { createFsCheck, type FsOptions } from '../../../../src/monitors/probe/disk.ts';
import { env, fakeHost, probe, runOne, spec, writeFiles } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/probes');

function stats(over: Partial<StatsFs>): StatsFs {
  return {
    type: 0xef53,
    bsize: 4096,
    blocks: 1000,
    bfree: 500,
    bavail: 450,
    files: 100,
    ffree: 50,
    ...over,
  } as StatsFs;
}

describe('disk and inodes probes', () => {
  it('computes df-style usage, reserved blocks counted as used', async () => {
    const host = await fakeHost({ 'var/lib/kubelet/.keep': '' });
    const seen: string[] = [];
    const statfs = async (path: string) => {
      seen.push(path);
      return stats({ blocks: 1000, bfree: 100, bavail: 50 });
    };
    const s = spec<FsOptions>({ kind: 'disk', paths: ['/', '/var/lib/kubelet'], percent: 95 });
    const check = createFsCheck(
      s,
      env(host),
      { measure: blockUsage, noun: 'disk space', format: String },
      statfs,
    );
    const r = await runOne(check);
    assert.deepEqual(seen, [join(host.root, '/'), join(host.root, '/var/lib/kubelet')]);
    // used 900 of 900 + 50 available = 94.7%: just below 95.
    assert.equal(r.status, 'OK');
    assert.match(r.message, /^disk space used: \/ 3686400 of 3891200 \(94.7%\)/);
  });

  it('reports only the paths over the threshold and clears when usage drops', async () => {
    const host = await fakeHost({});
    let bfree = 10;
    const statfs = async (path: string) =>
      stats(path.endsWith('data') ? { bfree, bavail: bfree } : { bfree: 900, bavail: 900 });
    const s = spec<FsOptions>({ kind: 'disk', paths: ['/', '/data'] });
    const check = createFsCheck(
      s,
      env(host),
      { measure: blockUsage, noun: 'disk space', format: String },
      statfs,
    );
    const full = await runOne(check);
    assert.equal(full.status, 'NonOK');
    assert.match(full.message, /^disk space near full: \/data .* \(99%\)$/);
    bfree = 800;
    assert.equal((await runOne(check)).status, 'OK');
  });

  it('skips missing paths and file systems without inode limits', async () => {
    const host = await fakeHost({});
    const statfs = async (path: string) => {
      if (path.endsWith('gone')) throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
      return stats({ files: 0, ffree: 0 });
    };
    const s = spec<FsOptions>({ kind: 'inodes', paths: ['/', '/gone'] });
    const r = await runOne(
      createFsCheck(s, env(host), { measure: inodeUsage, noun: 'inodes', format: String }, statfs),
    );
    assert.equal(r.status, 'Unknown');
    assert.equal(r.message, 'no inodes measured; skipped / (no limit), /gone (not found)');
  });

  it('measures a real directory with statfs(2)', async () => {
    const host = await fakeHost({ 'x/.keep': '' });
    const never = await runOne(probe({ kind: 'inodes', paths: ['/x'], percent: 100 }, env(host)));
    assert.equal(never.status, 'OK');
    assert.match(never.message, /^inodes used: \/x \d+ of \d+/);
    const always = await runOne(probe({ kind: 'disk', paths: ['/x'], percent: 0 }, env(host)));
    assert.equal(always.status, 'NonOK');
    assert.match(always.message, /GiB/);
  });
});

describe('mountinfo', () => {
  it('finds the covering mount, unescapes paths and reads ro from either option field', async () => {
    const entries = parseMountinfo(await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'));
    assert.equal(mountFor(entries, '/var/lib/kubelet/pods/abc')?.mountPoint, '/var/lib/kubelet');
    assert.equal(mountFor(entries, '/var/lib/containerd')?.mountPoint, '/');
    assert.equal(mountFor(entries, '/var/lib/kubeletx')?.mountPoint, '/');
    assert.equal(mountFor(entries, '/mnt/with space/a')?.fsType, 'xfs');
    assert.equal(isReadOnly(entries[0]!), false);
    assert.equal(isReadOnly(entries[2]!), true);
    assert.equal(isReadOnly({ ...entries[0]!, superOptions: ['ro'] }), true);
  });
});

describe('readonly-root probe', () => {
  it('reports a read-only kubelet mount once and clears when it is writable again', async () => {
    const host = await fakeHost({
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'),
    });
    const check = probe({ kind: 'readonly-root' }, env(host));
    const bad = await runOne(check);
    assert.equal(bad.status, 'NonOK');
    assert.equal(bad.rule.condition, 'ReadonlyRootFilesystem');
    assert.equal(bad.message, 'read-only: /var/lib/kubelet (ext4 /dev/sdb1 on /var/lib/kubelet)');
    await writeFiles(host.root, {
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-healthy'), 'utf8'),
    });
    const good = await runOne(check);
    assert.equal(good.status, 'OK');
    assert.equal(good.message, 'writable: /, /var/lib/kubelet, /var/lib/containerd');
  });

  it("reads the host root's proc/1/mountinfo even when --host-proc points elsewhere", async () => {
    // The DaemonSet: global files from the pod's /proc, whose PID 1 is the container's own init with
    // a read-only root; the host's table is the one file mounted at <host-root>/proc/1/mountinfo.
    const host = await fakeHost({
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'),
      'podproc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-healthy'), 'utf8'),
    });
    const paths = hostPaths(host.root, join(host.root, 'podproc'));
    const r = await runOne(probe({ kind: 'readonly-root' }, env(paths)));
    assert.equal(r.message, 'read-only: /var/lib/kubelet (ext4 /dev/sdb1 on /var/lib/kubelet)');
  });

  it('ignores paths that are read-only by design', async () => {
    const host = await fakeHost({
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-ro-kubelet'), 'utf8'),
    });
    const r = await runOne(probe({ kind: 'readonly-root', ignore: ['/var/lib/kubelet'] }, env(host)));
    assert.equal(r.status, 'OK');
  });

  it('write test: passes on a writable directory and leaves nothing behind', async () => {
    const host = await fakeHost({
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-healthy'), 'utf8'),
    });
    await mkdir(join(host.root, 'var/lib/kubelet'), { recursive: true });
    const r = await runOne(probe({ kind: 'readonly-root', writeTest: true }, env(host)));
    assert.equal(r.status, 'OK');
    assert.deepEqual(await readdir(join(host.root, 'var/lib/kubelet')), []);
  });

  it('write test: a failure other than EROFS is a probe error, not a read-only file system', async () => {
    const host = await fakeHost({
      'proc/1/mountinfo': await readFile(join(FIXTURES, 'mountinfo-healthy'), 'utf8'),
    });
    // A file where the directory should be gives ENOTDIR, even for root.
    await writeFiles(host.root, { 'var/lib/kubelet': 'not a directory' });
    await assert.rejects(runOne(probe({ kind: 'readonly-root', writeTest: true }, env(host))), /ENOTDIR/);
  });
});
