import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { type Answer, type FieldValue, NVML } from '../../../../src/host/nvml/api.ts';
import {
  FIELD_GPU_RECOVERY_ACTION,
  RECOVERY_ACTIONS,
  recoveryActionCheck,
} from '../../../../src/monitors/gpu/checks/recovery-action.ts';
import { namesTheGpu, nvmlError, runCheck, stubNvml } from './checks-stub.ts';

function field(value: number, ret: number = NVML.SUCCESS): FieldValue {
  return { fieldId: FIELD_GPU_RECOVERY_ACTION, scopeId: 0, ret, value };
}

function poll(answer: Answer<FieldValue[]>) {
  const asked: number[][] = [];
  const nvml = stubNvml({
    fieldValues: (_d, fields) => {
      asked.push(fields.map((f) => f.fieldId));
      return answer;
    },
  });
  const result = runCheck(recoveryActionCheck, nvml, {});
  assert.deepEqual(asked, [[230]]);
  return result;
}

const judged = (r: ReturnType<typeof poll>) => r.findings.map((f) => [f.severity, f.reason]);

describe('GPU check recovery-action (field 230)', () => {
  it('GPU_RESET, NODE_REBOOT and DRAIN_AND_RESET are fatal, each with its own reason', () => {
    assert.deepEqual(judged(poll([field(1)])), [['fatal', 'NvidiaGPUResetRequired']]);
    assert.deepEqual(judged(poll([field(2)])), [['fatal', 'NvidiaNodeRebootRequired']]);
    assert.deepEqual(judged(poll([field(4)])), [['fatal', 'NvidiaDrainAndResetRequired']]);
    const message = poll([field(1)]).findings[0]?.message ?? '';
    assert.ok(namesTheGpu(message) && message.includes('GPU_RESET'), message);
  });

  it('DRAIN_P2P, RECOVER_IMEX_DOMAIN and an unknown action are warnings; NONE (the H200) is nothing', () => {
    assert.deepEqual(judged(poll([field(3)])), [['warning', 'NvidiaDrainP2PRequired']]);
    assert.deepEqual(judged(poll([field(5)])), [['warning', 'NvidiaRecoverIMEXDomain']]);
    const unknown = poll([field(9)]);
    assert.deepEqual(judged(unknown), [['warning', 'NvidiaGPURecoveryAction']]);
    assert.ok(unknown.findings[0]?.message.includes('(9)'));
    assert.deepEqual(poll([field(0)]), { findings: [], gauges: { recovery_action: 0 } });
  });

  it('an older driver: INVALID_ARGUMENT for the call or the field, or NOT_SUPPORTED, is no finding and no error', () => {
    assert.deepEqual(poll(nvmlError('nvmlDeviceGetFieldValues', NVML.INVALID_ARGUMENT)), { findings: [] });
    assert.deepEqual(poll([field(1, NVML.INVALID_ARGUMENT)]), { findings: [] }, 'the value is not read');
    assert.deepEqual(poll([field(2, NVML.NOT_SUPPORTED)]), { findings: [] });
  });

  it("the field's GPU_IS_LOST and the call's unknown error are the error; a missing field the check's fault", () => {
    const lost = poll([field(0, NVML.GPU_IS_LOST)]);
    assert.equal(lost.error?.code, NVML.GPU_IS_LOST);
    assert.deepEqual(lost.findings, []);
    const err = nvmlError('nvmlDeviceGetFieldValues', NVML.UNKNOWN);
    assert.equal(poll(err).error, err);
    const missing = poll([]);
    assert.equal(missing.error, undefined, 'no NVML-looking code: the session must not end for it');
    assert.match(missing.fault ?? '', /field 230 missing/);
  });

  it("agrees with rules/gpu.yaml's Xid 154 rule on which actions set GPUUnhealthy", () => {
    const file = join(import.meta.dirname, '../../../../rules/gpu.yaml');
    const doc = parse(readFileSync(file, 'utf8')) as { rules: { reason: string; pattern: string }[] };
    const rule = doc.rules.find((r) => r.reason === 'NvidiaXID154Error');
    assert.ok(rule, 'rules/gpu.yaml has the Xid 154 rule');
    const pattern = new RegExp(`^${rule.pattern}$`);
    // The real line (NVSentinel's parser test, quoted in gpu.yaml) with each action code in turn.
    const line = (n: number) =>
      `NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x${n} (GPU Reset Required)`;
    for (let action = 0; action <= 5; action++) {
      const fatal = RECOVERY_ACTIONS[action]?.severity === 'fatal';
      assert.equal(pattern.test(line(action)), fatal, `action ${action}`);
    }
  });
});
