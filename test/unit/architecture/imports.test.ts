import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ALLOWED } from './allowed-arrows.ts';
import {
  type ImportGraph,
  collapse,
  cycles,
  folderOf,
  forbiddenArrows,
  readGraph,
  specifiers,
  unitOf,
} from './import-graph.ts';

const SRC = join(import.meta.dirname, '..', '..', '..', 'src');

function graphOf(edges: Record<string, string[]>): ImportGraph {
  return new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));
}

describe('src/ imports', () => {
  const graph = readGraph(SRC);

  it('reads the whole tree, and the imports of its composition root', () => {
    assert.ok(graph.size > 100, `only ${graph.size} files read`);
    assert.ok(graph.get('main.ts')?.has('cli.ts'), 'main.ts -> cli.ts not seen');
    assert.ok(graph.get('agent/agent.ts')?.has('core/clock.ts'), 'agent/agent.ts -> core/clock.ts not seen');
  });

  it('has no file cycle (type-only imports included)', () => {
    assert.deepEqual(cycles(graph), []);
  });

  it('has no folder cycle, every sub-folder counted as a folder of its own', () => {
    assert.deepEqual(cycles(collapse(graph, folderOf)), []);
  });

  it('crosses units only along the allowed arrows', () => {
    assert.deepEqual(forbiddenArrows(graph, ALLOWED), []);
  });

  it('has an acyclic table, so the allowed arrows cannot add up to a cycle', () => {
    assert.deepEqual(
      cycles(graphOf(Object.fromEntries(Object.entries(ALLOWED).map(([k, v]) => [k, [...v]])))),
      [],
    );
  });

  it('names no unit in the table that is missing from the tree', () => {
    const units = new Set([...graph.keys()].map((file) => unitOf(file, ALLOWED)));
    for (const key of Object.keys(ALLOWED))
      assert.ok(units.has(key), `${key} is in the table but not in src`);
  });
});

describe('import checker (negative controls)', () => {
  it('reports a file cycle, a self-import and a folder cycle', () => {
    const g = graphOf({
      'a/one.ts': ['b/two.ts'],
      'b/two.ts': ['a/three.ts'],
      'a/three.ts': [],
      'c/self.ts': ['c/self.ts'],
      'd/x.ts': ['d/y.ts'],
      'd/y.ts': ['d/x.ts'],
    });
    assert.deepEqual(cycles(g), [['c/self.ts'], ['d/x.ts', 'd/y.ts']]);
    assert.deepEqual(cycles(collapse(g, folderOf)), [['a', 'b']]);
  });

  it('reports a parent folder and its sub-folder importing each other', () => {
    const g = graphOf({
      'm/registry.ts': ['m/probe/kind.ts'],
      'm/probe/kind.ts': ['m/monitor.ts'],
      'm/monitor.ts': [],
    });
    assert.deepEqual(cycles(g), []);
    assert.deepEqual(cycles(collapse(g, folderOf)), [['m', 'm/probe']]);
  });

  it('reports an arrow the table does not allow, and a folder the table does not know', () => {
    const g = graphOf({
      'core/clock.ts': ['monitors/monitor.ts'],
      'monitors/monitor.ts': ['core/clock.ts'],
      'events/persist/file.ts': ['events/record/types.ts'],
      'events/record/types.ts': ['events/persist/file.ts'],
      'stray/x.ts': ['core/clock.ts'],
    });
    const allowed = { core: [], monitors: ['core'], events: [], 'events/persist': ['events'] };
    assert.deepEqual(forbiddenArrows(g, allowed), [
      'core -> monitors (core/clock.ts -> monitors/monitor.ts)',
      'events -> events/persist (events/record/types.ts -> events/persist/file.ts)',
      'stray -> core (stray/x.ts -> core/clock.ts) [stray has no entry in the table]',
    ]);
  });

  it('reads every form of import, type-only and dynamic ones included', () => {
    const text = [
      "import type { A } from './a.ts';",
      "import { b } from '../b.ts';",
      "import './side-effect.ts';",
      "export { c } from './c.ts';",
      "export * from './d.ts';",
      "type E = import('./e.ts').E;",
      "const f = await import('./f.ts');",
      "const g = require('./not-esm.js');",
    ].join('\n');
    assert.deepEqual(specifiers('x.ts', text), [
      './a.ts',
      '../b.ts',
      './side-effect.ts',
      './c.ts',
      './d.ts',
      './e.ts',
      './f.ts',
    ]);
  });
});
