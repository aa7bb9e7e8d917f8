// The repair-controller examples (deploy/examples/) act only on conditions the agent writes, each with
// the status that means a problem for it (problemWhen: True for NPD's types, False for the subsystem
// types); the Node Readiness Controller's rule names the healthy status instead. The real API server
// checks the files' shape (test/e2e/repair-examples.test.ts); this checks what they mean.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { declaredConditions } from '../../../src/conditions/owners.ts';
import { problemWhen, SUBSYSTEM_CONDITIONS } from '../../../src/core/polarity.ts';
import { loadShipped, ROOT, shippedConfigFiles } from '../../support/shipped-configs.ts';

interface Row {
  readonly type: string;
  readonly status: string;
}

/** Every condition type a shipped config declares, and the subsystem types. */
function writable(): Set<string> {
  const types = new Set<string>(Object.values(SUBSYSTEM_CONDITIONS));
  for (const file of shippedConfigFiles())
    for (const loaded of loadShipped(file)) for (const c of declaredConditions(loaded)) types.add(c.type);
  return types;
}

/** The problems of a list of rows; `problem` says whether a row's status is the problem or the healthy one. */
function rowProblems(rows: readonly Row[], problem: boolean, types: Set<string>): string[] {
  const out: string[] = [];
  for (const { type, status } of rows) {
    // The kubelet's Ready is the controllers' own default row; the agent never writes it.
    if (type === 'Ready') continue;
    if (!types.has(type)) out.push(`${type}: no shipped config writes it`);
    const bad = problemWhen(type);
    const healthy = bad === 'True' ? 'False' : 'True';
    if (status !== (problem ? bad : healthy)) out.push(`${type}=${status}: wrong polarity`);
  }
  return out;
}

function example(name: string): { spec: Record<string, unknown> } {
  return parseYaml(readFileSync(join(ROOT, 'deploy', 'examples', name), 'utf8'));
}

const nhcRows = () => example('nodehealthcheck.yaml').spec.unhealthyConditions as Row[];
const mhcRows = () =>
  (example('machinehealthcheck.yaml').spec.checks as { unhealthyNodeConditions: Row[] })
    .unhealthyNodeConditions;
const nrcRows = () =>
  (example('nodereadinessrule.yaml').spec.conditions as { type: string; requiredStatus: string }[]).map(
    (c) => ({ type: c.type, status: c.requiredStatus }),
  );

describe('repair-controller examples', () => {
  const types = writable();

  it('NodeHealthCheck lists written types with their problem status', () => {
    assert.deepEqual(rowProblems(nhcRows(), true, types), []);
    assert.ok(
      nhcRows().some((r) => r.type === 'KernelDeadlock') && nhcRows().some((r) => r.type === 'KernelReady'),
    );
  });

  it('MachineHealthCheck lists written types with their problem status', () => {
    assert.deepEqual(rowProblems(mhcRows(), true, types), []);
    assert.deepEqual(
      mhcRows().map((r) => r.type),
      nhcRows().map((r) => r.type),
      'the two examples act on the same conditions',
    );
  });

  it('NodeReadinessRule requires the healthy status of written types', () => {
    assert.deepEqual(rowProblems(nrcRows(), false, types), []);
  });

  it('a flipped polarity or a type nothing writes is caught (negative controls)', () => {
    const flipped = [
      { type: 'KernelReady', status: 'True' },
      { type: 'KernelDeadlock', status: 'False' },
    ];
    assert.deepEqual(rowProblems(flipped, true, types), [
      'KernelReady=True: wrong polarity',
      'KernelDeadlock=False: wrong polarity',
    ]);
    assert.deepEqual(rowProblems([{ type: 'KernelDeadLock', status: 'True' }], true, types), [
      'KernelDeadLock: no shipped config writes it',
    ]);
    // The NRC sense is the other way round: the NHC rows read as readiness requirements are all wrong.
    assert.equal(
      rowProblems(nhcRows(), false, types).length,
      nhcRows().filter((r) => r.type !== 'Ready').length,
    );
  });
});
