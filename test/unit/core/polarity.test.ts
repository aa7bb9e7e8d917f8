// One polarity for every condition type the agent writes (issue 39 item 3): the subsystem types mean a
// problem when False, every other type (NPD's, any config's) when True; Unknown is never a problem.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SubsystemHealth } from '../../../src/conditions/subsystem.ts';
import { SubsystemTable } from '../../../src/conditions/subsystem-table.ts';
import { isProblem, problemWhen, SUBSYSTEM_CONDITIONS } from '../../../src/core/polarity.ts';
import { SUBSYSTEMS } from '../../../src/core/types.ts';
import { loadShipped, shippedConfigFiles } from '../../support/shipped-configs.ts';

describe('condition polarity', () => {
  it('every subsystem type means a problem when False', () => {
    assert.equal(Object.keys(SUBSYSTEM_CONDITIONS).length, SUBSYSTEMS.length);
    for (const s of SUBSYSTEMS) assert.equal(problemWhen(SUBSYSTEM_CONDITIONS[s]), 'False', s);
  });

  it('NPD types and any other type mean a problem when True, compared exactly', () => {
    for (const t of ['KernelDeadlock', 'ReadonlyFilesystem', 'NTPProblem', 'FrequentKubeletRestart'])
      assert.equal(problemWhen(t), 'True', t);
    // Type names compare exactly, as the API server does: not a subsystem type.
    assert.equal(problemWhen('kernelready'), 'True');
    assert.equal(problemWhen('KernelReady'), 'False', 'control: the exact name is');
  });

  it('the subsystem conditions the agent writes are the types with the False polarity', () => {
    // Built the way the agent builds them, so a renamed type cannot keep the wrong polarity.
    const table = SubsystemTable.from(shippedConfigFiles().flatMap(loadShipped));
    assert.equal(table.covered.size, SUBSYSTEMS.length, 'the shipped rules cover every subsystem');
    const health = new SubsystemHealth({ table, windowMs: 60_000, nodeName: 'n1' });
    const written = health.evaluate(0);
    assert.equal(written.length, SUBSYSTEMS.length);
    for (const c of written) {
      assert.equal(c.status, 'True', `${c.type} starts healthy`);
      assert.equal(isProblem(c), false, c.type);
      assert.equal(isProblem({ ...c, status: 'False' }), true, c.type);
    }
  });

  it('isProblem: the problem status of each polarity, and never Unknown', () => {
    const cases = [
      ['KernelDeadlock', 'True', true],
      ['KernelDeadlock', 'False', false],
      ['KernelDeadlock', 'Unknown', false],
      ['AcceleratedHardwareReady', 'False', true],
      ['AcceleratedHardwareReady', 'True', false],
      ['AcceleratedHardwareReady', 'Unknown', false],
    ] as const;
    for (const [type, status, problem] of cases)
      assert.equal(isProblem({ type, status }), problem, `${type}=${status}`);
  });
});
