// The default condition set (docs/consumers.md "Default conditions"): what the shipped DaemonSet rules
// write to the Node, what waits for --extra-conditions, and that the docs list the same types.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_RULES } from '../../../src/cli.ts';
import { EXTRA_CONDITIONS, publishedConditions } from '../../../src/conditions/extra.ts';
import { allConditionTypes } from '../../../src/conditions/owners.ts';
import { loadConfigs } from '../../../src/config/load.ts';
import { probeConfigKind } from '../../../src/monitors/probe/schema.ts';
import { systemLogConfigKind } from '../../../src/monitors/system-log/schema.ts';
import { advance, cond, setup } from './harness.ts';

const ROOT = join(import.meta.dirname, '../../..');
const KUBELET_NAMES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable', 'Ready'];

function daemonSetTypes(): string[] {
  const files = DEFAULT_RULES.map((n) => ({ file: join(ROOT, 'rules', n) }));
  return allConditionTypes(loadConfigs(files, [systemLogConfigKind, probeConfigKind]));
}

/** The backticked condition types in the first column of the markdown table that follows `heading`. */
function documented(heading: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs/consumers.md'), 'utf8');
  const start = doc.indexOf(heading);
  assert.ok(start >= 0, `docs/consumers.md has "${heading}"`);
  const rows = doc
    .slice(start)
    .split('\n\n')
    .find((block) => block.startsWith('| condition'));
  assert.ok(rows, `a table follows "${heading}"`);
  const firstCells = rows
    .split('\n')
    .slice(2)
    .map((row) => row.split('|')[1] ?? '');
  return firstCells.flatMap((cell) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1] ?? '')).sort();
}

describe('default conditions', () => {
  it('every extra condition is one the DaemonSet rules declare (a rename cannot leave it behind)', () => {
    const declared = daemonSetTypes();
    for (const type of EXTRA_CONDITIONS) assert.ok(declared.includes(type), `${type} is declared`);
  });

  it('the default rules write the eight types docs/consumers.md lists, and the switch adds the rest', () => {
    const types = daemonSetTypes();
    const rows = types.filter(publishedConditions(false)).sort();
    assert.deepEqual(rows, documented("The DaemonSet's default monitors write"));
    assert.equal(rows.length, 8);
    assert.deepEqual([...EXTRA_CONDITIONS].sort(), documented('The shipped configs measure more'));
    assert.deepEqual(types.filter(publishedConditions(true)).sort(), [...rows, ...EXTRA_CONDITIONS].sort());
  });

  it('no shipped condition imitates a kubelet name or its ...Pressure form', () => {
    const all = DEFAULT_RULES.concat(['probes-node.yaml', 'probes-network.yaml']);
    const files = all.map((n) => ({ file: join(ROOT, 'rules', n) }));
    const types = allConditionTypes(loadConfigs(files, [systemLogConfigKind, probeConfigKind]));
    assert.ok(types.length > 20, 'control: the configs were read');
    for (const t of types) {
      assert.ok(!KUBELET_NAMES.includes(t), t);
      // PressureStall is the kernel's own name for PSI, not a kubelet-style pressure condition.
      assert.ok(!t.endsWith('Pressure'), `${t} reads like a kubelet condition`);
    }
  });

  it("a type from the user's own config is written (NPD configs keep all their rows)", () => {
    const published = publishedConditions(false);
    assert.equal(published('FrequentKubeletRestart'), true);
    assert.equal(published('NTPProblem'), true);
    assert.equal(published('FilesystemSpaceLow'), false, 'control: an extra one is not');
  });

  it('the condition manager drops what it does not publish: no patch, not in /conditions', async () => {
    const { clock, writer, manager } = setup({ publishes: publishedConditions(false) });
    manager.update(cond('KernelDeadlock', 'False'));
    manager.update(cond('FilesystemSpaceLow', 'True'));
    manager.start();
    await advance(clock, 1000);
    assert.deepEqual(
      writer.calls.map((c) => c.conditions.map((x) => x.type)),
      [['KernelDeadlock']],
    );
    assert.deepEqual(
      manager.conditions().map((c) => c.type),
      ['KernelDeadlock'],
    );
    manager.stop();
  });
});
