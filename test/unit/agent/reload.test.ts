import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyReload,
  planReload,
  type ReloadTarget,
  type RunningMonitor,
} from '../../../src/agent/reload.ts';
import type { LoadedConfig } from '../../../src/config/load.ts';
import type { Monitor } from '../../../src/monitors/monitor.ts';

interface Fake extends Monitor {
  readonly config: { source: string; path: string; rules: number };
  reconfigure(next: { source: string; path: string; rules: number }): boolean;
}

function fake(config: { source: string; path: string; rules: number }): Fake {
  const m = {
    source: config.source,
    config,
    start: async () => {},
    stop: async () => {},
    health: () => ({ up: true, healthy: true, detail: 'ok' }),
    // In place only when what is read stays the same, as SystemLogMonitor does.
    reconfigure(next: { path: string }) {
      return next.path === m.config.path;
    },
  };
  return m;
}

const cfg = (file: string, path: string, rules: number): LoadedConfig => ({
  kind: 'system-log-monitor',
  file,
  config: { source: file, path, rules },
});

/** A target that records what reached the supervisor and fails to build configs with path "bad". */
function target(log: string[], errors: unknown[] = []): ReloadTarget {
  return {
    create(loaded) {
      const c = loaded.config as Fake['config'];
      if (c.path === 'bad') throw new Error(`${loaded.file}: cannot build`);
      log.push(`create ${loaded.file}`);
      return fake(c);
    },
    add: async (m) => {
      log.push(`add ${m.source}`);
    },
    remove: async (m) => {
      log.push(`remove ${m.source}`);
    },
    conditionsOf: () => [],
    reconfigureFailed: (m, err) => {
      log.push(`reconfigure failed ${m.source}`);
      errors.push(err);
    },
  };
}

function running(...loaded: LoadedConfig[]): RunningMonitor[] {
  return loaded.map((l) => ({ loaded: l, monitor: fake(l.config as Fake['config']) }));
}

describe('applyReload (all or nothing)', () => {
  it('a monitor that fails to build leaves every running monitor in place', async () => {
    const now = running(cfg('a', 'pa', 1), cfg('b', 'pb', 1), cfg('c', 'pc', 1));
    // a is removed, b is rebuilt (new path), c fails to build, d is new: nothing may happen.
    const next = [cfg('b', 'pb2', 1), cfg('c', 'bad', 1), cfg('d', 'pd', 1)];
    const log: string[] = [];
    await assert.rejects(applyReload(planReload(now, next), target(log)), /c: cannot build/);
    assert.ok(!log.some((l) => l.startsWith('remove') || l.startsWith('add')), log.join(', '));
    // Reverting to the running config is then a no-op plan, as it should be.
    const revert = planReload(
      now,
      now.map((r) => r.loaded),
    );
    assert.equal(revert.keep.length, 3);
  });

  it('applies a plan that builds: removes, swaps, reconfigures in place and adds', async () => {
    const now = running(cfg('a', 'pa', 1), cfg('b', 'pb', 1), cfg('c', 'pc', 1), cfg('k', 'pk', 1));
    const next = [cfg('b', 'pb2', 1), cfg('c', 'pc', 2), cfg('d', 'pd', 1), cfg('k', 'pk', 1)];
    const log: string[] = [];
    const result = await applyReload(planReload(now, next), target(log));
    assert.deepEqual(log, ['create b', 'create c', 'create d', 'remove a', 'remove b', 'add b', 'add d']);
    assert.deepEqual(result.map((r) => r.loaded.file).sort(), ['b', 'c', 'd', 'k']);
    const c = result.find((r) => r.loaded.file === 'c');
    assert.equal(c?.monitor, now[2]?.monitor, 'c was reconfigured in place and keeps its reader');
    assert.equal(result.find((r) => r.loaded.file === 'k')?.monitor, now[3]?.monitor);
  });

  it('reports a reconfigure that throws and swaps the monitor instead', async () => {
    const now = running(cfg('c', 'pc', 1));
    const boom = new Error('rules do not fit');
    (now[0]?.monitor as Fake).reconfigure = () => {
      throw boom;
    };
    const log: string[] = [];
    const errors: unknown[] = [];
    const after = await applyReload(planReload(now, [cfg('c', 'pc', 2)]), target(log, errors));
    assert.deepEqual(errors, [boom]);
    assert.deepEqual(log, ['create c', 'reconfigure failed c', 'remove c', 'add c']);
    assert.notEqual(after[0]?.monitor, now[0]?.monitor);
  });
});
