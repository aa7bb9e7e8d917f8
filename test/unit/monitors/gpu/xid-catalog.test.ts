/**
 * The NVML monitor's Xid table (src/monitors/gpu/xid-catalog.ts) against rules/gpu.yaml's kernel-log
 * rules: for every code, the event reason the kernel-log rule gives and whether a GPUUnhealthy rule fires
 * on the same Xid, so one Xid gets one reason and one verdict whichever source saw it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { classifyXid } from '../../../../src/monitors/gpu/xid-catalog.ts';

interface Rule {
  type: string;
  reason: string;
  condition?: string;
  pattern: string;
}

const rules = (parse(readFileSync('rules/gpu.yaml', 'utf8')) as { rules: Rule[] }).rules.map((r) => ({
  ...r,
  re: new RegExp(`^(?:${r.pattern})$`),
}));

/** An Xid line as the open kernel module prints it (kernel_rc.c), with neutral text after the code. */
function line(code: number): string {
  return `NVRM: Xid (PCI:0000:3b:00): ${code}, pid=1234, name=python3, channel 0x0000000a`;
}

function kernelLog(code: number): { reasons: string[]; conditions: string[] } {
  const hits = rules.filter((r) => r.re.test(line(code)));
  return {
    reasons: hits.filter((r) => r.type === 'temporary').map((r) => r.reason),
    conditions: hits
      .filter((r) => r.type === 'permanent' && r.condition === 'GPUUnhealthy')
      .map((r) => r.reason),
  };
}

describe('Xid classification: NVML agrees with rules/gpu.yaml', () => {
  it('gives every code 0-1100 the kernel-log rule event reason and GPUUnhealthy verdict', () => {
    for (let code = 0; code <= 1100; code++) {
      const k = kernelLog(code);
      const c = classifyXid(code);
      assert.deepEqual(k.reasons, [c.eventReason], `Xid ${code}: event reason`);
      const expected = c.conditionReason === undefined ? [] : [c.conditionReason];
      assert.deepEqual(k.conditions, expected, `Xid ${code}: GPUUnhealthy`);
    }
  });

  it('control: a code the kernel log holds (79) is fatal, one it does not (31) is not', () => {
    assert.equal(classifyXid(79).conditionReason, 'NvidiaXID79Error');
    assert.deepEqual(kernelLog(79).conditions, ['NvidiaXID79Error']);
    assert.equal(classifyXid(31).conditionReason, undefined);
    assert.deepEqual(kernelLog(31).conditions, []);
  });

  it('names the unknown Xid (999) as such, under the catch-all reason', () => {
    assert.equal(classifyXid(999).label, 'unknown Xid (999)');
    assert.equal(classifyXid(999).eventReason, 'NVRMXid');
  });
});
