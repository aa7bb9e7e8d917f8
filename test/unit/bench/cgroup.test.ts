// The container bench's cgroup readings, on fixture trees laid out as cgroup v1 (hybrid, as podman's
// cgroupfs manager makes them) and cgroup v2, with the files' real formats.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cgroupOf, readCgroup, resetPeak } from '../../bench/cgroup.ts';
import { cpuCores } from '../../bench/container.bench.ts';

const root = mkdtempSync(join(tmpdir(), 'npd-cgroup-'));
after(() => rmSync(root, { recursive: true, force: true }));
const CG = '/libpod_parent/libpod-6cce0c74';

function files(dir: string, content: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(content)) writeFileSync(join(dir, name), text);
}

function procFile(pid: number, text: string): string {
  const proc = join(root, `proc-${pid}`);
  files(join(proc, String(pid)), { cgroup: text });
  return proc;
}

describe('cgroup v1 (a hierarchy per controller)', () => {
  const sys = join(root, 'v1');
  files(join(sys, 'memory', CG), {
    'memory.usage_in_bytes': '43855872\n',
    'memory.max_usage_in_bytes': '54804480\n',
    'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    'memory.stat': 'cache 131072\nrss 51200000\ntotal_cache 135168\ntotal_rss 52133888\n',
  });
  files(join(sys, 'cpu', CG), {
    'cpu.stat': 'nr_periods 166\nnr_throttled 63\nthrottled_time 3550000000\nnr_bursts 0\nburst_time 0\n',
  });
  files(join(sys, 'cpuacct', CG), { 'cpuacct.usage': '2780000000\n' });
  const proc = procFile(
    7723,
    ['9:name=systemd', '4:memory', '2:cpuacct', '1:cpu', '0:'].map((c) => `${c}:${CG}`).join('\n'),
  );

  test('reads the controllers the /proc/<pid>/cgroup lines name', () => {
    const cg = cgroupOf(7723, sys, proc);
    assert.equal(cg.version, 1);
    assert.deepEqual(readCgroup(cg), {
      memoryBytes: 43855872,
      peakBytes: 54804480,
      anonBytes: 52133888,
      fileBytes: 135168,
      oomKills: 2,
      cpuNs: 2780000000,
      periods: 166,
      throttledPeriods: 63,
      throttledNs: 3550000000,
    });
  });

  test('resetPeak writes 0 to memory.max_usage_in_bytes', () => {
    assert.equal(resetPeak(cgroupOf(7723, sys, proc)), true);
    assert.equal(readFileSync(join(sys, 'memory', CG, 'memory.max_usage_in_bytes'), 'utf8'), '0');
  });
});

describe('cgroup v2 (one unified hierarchy)', () => {
  const sys = join(root, 'v2');
  files(join(sys, CG), {
    'memory.current': '43855872\n',
    'memory.peak': '54804480\n',
    'memory.events': 'low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n',
    'memory.stat': 'anon 52133888\nfile 135168\nkernel 1200000\n',
    'cpu.stat':
      'usage_usec 2780000\nuser_usec 2000000\nsystem_usec 780000\nnr_periods 166\nnr_throttled 63\nthrottled_usec 3550000\n',
  });
  const proc = procFile(8001, `0::${CG}\n`);

  test('reads memory.current, memory.peak, memory.events and cpu.stat', () => {
    const cg = cgroupOf(8001, sys, proc);
    assert.equal(cg.version, 2);
    const r = readCgroup(cg);
    assert.equal(r.memoryBytes, 43855872);
    assert.equal(r.peakBytes, 54804480);
    assert.equal(r.oomKills, 1);
    assert.equal(r.anonBytes, 52133888);
    assert.equal(r.cpuNs, 2780000000);
    assert.equal(r.throttledNs, 3550000000);
    assert.equal(resetPeak(cg), false, 'memory.peak cannot be reset for other readers');
  });
});

test('cpuCores reads Kubernetes CPU quantities and refuses others', () => {
  assert.equal(cpuCores('200m'), 0.2);
  assert.equal(cpuCores('1'), 1);
  assert.equal(cpuCores('0.5'), 0.5);
  assert.throws(() => cpuCores('200Mi'), /not a CPU quantity/);
});
