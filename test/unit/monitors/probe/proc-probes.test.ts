import assert from 'node:assert/strict';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { env, fakeHost, probe, runOne, writeFiles } from './helpers.ts';

describe('fd probe', () => {
  it('is OK below the threshold and NonOK at or above it', async () => {
    const host = await fakeHost({ 'proc/sys/fs/file-nr': '7900\t0\t10000\n' });
    const low = await runOne(probe({ kind: 'fd', percent: 80 }, env(host)));
    assert.equal(low.status, 'OK');
    assert.equal(low.message, 'file handles: 7900 of 10000 (79%)');
    assert.equal(low.rule.condition, 'FileHandlesLow');
    const high = await runOne(probe({ kind: 'fd', percent: 79 }, env(host)));
    assert.equal(high.status, 'NonOK');
    assert.equal(high.rule.reason, 'FileHandlesNearLimit');
  });

  it('treats LONG_MAX as unlimited and then uses the absolute ceiling', async () => {
    const host = await fakeHost({ 'proc/sys/fs/file-nr': '2000000 0 9223372036854775807\n' });
    const none = await runOne(probe({ kind: 'fd' }, env(host)));
    assert.equal(none.status, 'OK');
    assert.match(none.message, /file-max unlimited, no ceiling configured/);
    const over = await runOne(probe({ kind: 'fd', maxAllocated: 1_000_000 }, env(host)));
    assert.equal(over.status, 'NonOK');
    assert.match(over.message, /2000000 allocated/);
    const under = await runOne(probe({ kind: 'fd', maxAllocated: 3_000_000 }, env(host)));
    assert.equal(under.status, 'OK');
  });

  it('throws on a malformed file so the monitor reports Unknown', async () => {
    const host = await fakeHost({ 'proc/sys/fs/file-nr': 'garbage\n' });
    await assert.rejects(runOne(probe({ kind: 'fd' }, env(host))), /not an integer/);
  });
});

describe('pids probe', () => {
  const files = (tasks: number) => ({
    'proc/loadavg': `0.10 0.20 0.30 2/${tasks} 4242\n`,
    'proc/sys/kernel/pid_max': '4194304\n',
    'proc/sys/kernel/threads-max': '1000\n',
  });

  it('compares the task count with the smaller of pid_max and threads-max', async () => {
    const ok = await runOne(probe({ kind: 'pids' }, env(await fakeHost(files(800)))));
    assert.equal(ok.status, 'OK');
    assert.match(ok.message, /800 of 1000 \(80%\) of threads-max/);
    const bad = await runOne(probe({ kind: 'pids' }, env(await fakeHost(files(900)))));
    assert.equal(bad.status, 'NonOK');
    assert.equal(bad.rule.condition, 'ProcessIDsLow');
  });
});

describe('conntrack probe', () => {
  it('reports the table fill', async () => {
    const host = await fakeHost({
      'proc/sys/net/netfilter/nf_conntrack_count': '950\n',
      'proc/sys/net/netfilter/nf_conntrack_max': '1000\n',
    });
    const r = await runOne(probe({ kind: 'conntrack' }, env(host)));
    assert.equal(r.status, 'NonOK');
    assert.equal(r.message, 'conntrack entries: 950 of 1000 (95%)');
  });

  it('is OK when nf_conntrack is not loaded', async () => {
    const r = await runOne(probe({ kind: 'conntrack' }, env(await fakeHost({ 'proc/uptime': '1 1\n' }))));
    assert.equal(r.status, 'OK');
    assert.equal(r.message, 'nf_conntrack is not loaded');
  });
});

describe('psi probe', () => {
  const pressure = (memFull: string) => ({
    'proc/pressure/cpu':
      'some avg10=5.00 avg60=1.00 avg300=0.50 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
    'proc/pressure/memory': `some avg10=40.00 avg60=1.00 avg300=0.50 total=1\nfull avg10=${memFull} avg60=2.00 avg300=0.10 total=1\n`,
    'proc/pressure/io':
      'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
  });

  it('fires on a configured line and window, and clears when pressure drops', async () => {
    const high = await runOne(probe({ kind: 'psi' }, env(await fakeHost(pressure('30.00')))));
    assert.equal(high.status, 'NonOK');
    assert.equal(high.message, 'pressure: memory full avg10=30 >= 25');
    const low = await runOne(probe({ kind: 'psi' }, env(await fakeHost(pressure('3.00')))));
    assert.equal(low.status, 'OK');
    assert.match(low.message, /memory full avg10=3/);
  });

  it('uses the configured window and thresholds', async () => {
    const host = await fakeHost(pressure('30.00'));
    const r = await runOne(probe({ kind: 'psi', window: 'avg60', memory: { full: 1.5 } }, env(host)));
    assert.equal(r.status, 'NonOK');
    assert.equal(r.message, 'pressure: memory full avg60=2 >= 1.5');
  });

  it('reports a kernel without PSI as Unknown, or OK when configured so', async () => {
    const host = await fakeHost({ 'proc/uptime': '1 1\n' });
    assert.equal((await runOne(probe({ kind: 'psi' }, env(host)))).status, 'Unknown');
    assert.equal((await runOne(probe({ kind: 'psi', missing: 'ok' }, env(host)))).status, 'OK');
  });
});

describe('inotify probe', () => {
  const limits = {
    'proc/sys/fs/inotify/max_user_instances': '4\n',
    'proc/sys/fs/inotify/max_user_watches': '10\n',
  };

  it('reports the limits and flags limits below the configured minimum', async () => {
    const host = await fakeHost(limits);
    const plain = await runOne(probe({ kind: 'inotify' }, env(host)));
    assert.equal(plain.status, 'OK');
    assert.equal(plain.message, 'inotify: max_user_instances=4 max_user_watches=10');
    const small = await runOne(probe({ kind: 'inotify', minMaxUserInstances: 128 }, env(host)));
    assert.equal(small.status, 'NonOK');
    assert.equal(small.message, 'inotify: max_user_instances 4 < 128');
  });

  it('counts instances and watches per user from /proc/<pid>/fd and fdinfo', async () => {
    const host = await fakeHost(limits);
    for (const [pid, fds] of [
      ['100', 2],
      ['200', 2],
    ] as const) {
      await mkdir(join(host.proc, pid, 'fd'), { recursive: true });
      for (let fd = 3; fd < 3 + fds; fd++) {
        await symlink('anon_inode:inotify', join(host.proc, pid, 'fd', String(fd)));
        await writeFiles(host.proc, {
          [`${pid}/fdinfo/${fd}`]:
            'pos:\t0\ninotify wd:1 ino:1 sdev:1 mask:1\ninotify wd:2 ino:2 sdev:1 mask:1\n',
        });
      }
      await symlink('/dev/null', join(host.proc, pid, 'fd', '0'));
    }
    const r = await runOne(probe({ kind: 'inotify', countUsage: true, percent: 90 }, env(host)));
    // Both fake processes belong to the test's uid: 4 instances of 4 and 8 watches of 10.
    assert.equal(r.status, 'NonOK');
    assert.match(r.message, /uses 4 of 4 instances \(100%\)/);
    const relaxed = await runOne(probe({ kind: 'inotify', countUsage: true, percent: 100 }, env(host)));
    assert.equal(relaxed.status, 'NonOK');
    assert.doesNotMatch(relaxed.message, /watches/);
  });
});
