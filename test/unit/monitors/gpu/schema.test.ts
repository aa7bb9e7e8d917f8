import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SubsystemTable } from '../../../../src/conditions/subsystem-table.ts';
import { GPU_CHECKS } from '../../../../src/monitors/gpu/checks/index.ts';
import { validateGpuMonitor } from '../../../../src/monitors/gpu/schema.ts';

function validate(raw: Record<string, unknown>) {
  return validateGpuMonitor({ plugin: 'nvml', ...raw }, '/config/gpu-nvml.yaml', GPU_CHECKS);
}

function issues(raw: Record<string, unknown>): string[] {
  return validate(raw).issues.map((i) => `${i.file}: ${i.path}: ${i.message}`);
}

describe('nvml config', () => {
  it('defaults: libnvidia-ml.so.1, 60 s, GPUUnhealthy aggregated, every check on with its cited default', () => {
    const { config } = validate({});
    assert.equal(config?.library, 'libnvidia-ml.so.1');
    assert.equal(config?.intervalMs, 60_000);
    assert.deepEqual(
      config?.conditions.map((c) => [c.type, c.aggregate]),
      [['GPUUnhealthy', true]],
    );
    for (const name of ['device-count', 'ecc', 'row-remap', 'retired-pages', 'xid', 'sbe-storm']) {
      assert.equal(config?.checks[name]?.enabled, true, name);
    }
    assert.deepEqual(config?.checks['row-remap']?.options, { uncorrectableWarning: 512 });
    assert.deepEqual(config?.checks['retired-pages']?.options, { limit: 63 });
  });

  it('expectedCount reaches the device-count check', () => {
    assert.deepEqual(validate({ expectedCount: 8 }).config?.checks['device-count']?.options, {
      expectedCount: 8,
    });
  });

  it('names the file and the field of every error', () => {
    assert.deepEqual(
      issues({ interval: '0s', checks: { 'row-remap': { uncorrectableWarning: -1 }, eccc: {} } }),
      [
        '/config/gpu-nvml.yaml: interval: must be greater than 0',
        `/config/gpu-nvml.yaml: checks.eccc: unknown check; one of: ${[...GPU_CHECKS.map((c) => c.name), 'xid', 'sbe-storm'].join(', ')}`,
        '/config/gpu-nvml.yaml: checks.row-remap.uncorrectableWarning: Too small: expected number to be >=1',
      ],
    );
    assert.deepEqual(issues({ checks: { ecc: { enabled: 'yes' } } }), [
      '/config/gpu-nvml.yaml: checks.ecc.enabled: Invalid input: expected boolean, received string',
    ]);
    assert.deepEqual(issues({ checks: { ecc: { threshold: 1 } } }), [
      '/config/gpu-nvml.yaml: checks.ecc.threshold: unknown key',
    ]);
    assert.deepEqual(issues({ libary: 'x' }), ['/config/gpu-nvml.yaml: libary: unknown key']);
  });

  it('control: a config with every field valid has no issue', () => {
    const raw = {
      source: 'gpu',
      library: '/usr/local/nvidia/lib64/libnvidia-ml.so.1',
      interval: '30s',
      expectedCount: 8,
      subsystem: 'accelerated-hardware',
      impact: 'fatal',
      checks: { 'row-remap': { enabled: true, uncorrectableWarning: 100 }, 'sbe-storm': { enabled: false } },
    };
    assert.deepEqual(issues(raw), []);
  });

  it('generates the rules the subsystem conditions classify by: fatal reasons, Xid events, warnings', () => {
    const rules = validate({}).config?.rules ?? [];
    const find = (reason: string) => rules.find((r) => r.reason === reason);
    assert.deepEqual(find('NvidiaDoubleBitError'), {
      type: 'permanent',
      condition: 'GPUUnhealthy',
      reason: 'NvidiaDoubleBitError',
      impact: 'fatal',
    });
    assert.deepEqual(find('NVRMXid79'), { type: 'temporary', reason: 'NVRMXid79', heldBy: 'GPUUnhealthy' });
    assert.deepEqual(find('NVRMXid31'), { type: 'temporary', reason: 'NVRMXid31', impact: 'info' });
    assert.deepEqual(find('NvidiaRowRemapLimit'), {
      type: 'temporary',
      reason: 'NvidiaRowRemapLimit',
      impact: 'warning',
    });
  });

  it('the subsystem table classifies what the monitor reports (accelerated-hardware)', () => {
    const { config } = validate({ subsystem: 'accelerated-hardware' });
    assert.ok(config);
    const table = SubsystemTable.from([{ kind: 'gpu-monitor', file: 'gpu-nvml.yaml', config }]);
    const source = config.source;
    assert.deepEqual(table.condition(source, 'GPUUnhealthy', 'NvidiaRowRemapFailure'), {
      subsystem: 'accelerated-hardware',
      impact: 'fatal',
    });
    assert.deepEqual(table.event(source, 'NvidiaRowRemapLimit'), {
      subsystem: 'accelerated-hardware',
      impact: 'warning',
    });
    assert.deepEqual(table.event(source, 'NVRMXid31'), { subsystem: 'accelerated-hardware', impact: 'info' });
    // Control: a condition-change event's reason is no temporary rule, so it does not count as an event.
    assert.equal(table.event(source, 'NvidiaDoubleBitError'), undefined);
  });
});
