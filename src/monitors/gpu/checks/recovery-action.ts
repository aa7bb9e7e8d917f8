import { type FieldValue, NVML, NvmlError } from '../../../host/nvml/api.ts';
import type { CheckResult, Gpu, GpuCheck } from '../check.ts';
import { describeGpu } from '../identity.ts';

/**
 * What the driver says the GPU needs: nvmlDeviceGetFieldValues field 230, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION,
 * an nvmlDeviceGpuRecoveryAction_t (NVIDIA/go-nvml gen/nvml/nvml.h). The driver also prints Xid 154 when the
 * action changes; rules/gpu.yaml decodes that line the same way (reset, reboot, drain-and-reset set
 * GPUUnhealthy: the recovery-action test keeps the two in step). DCGM's DRIVER watch maps GPU_RESET,
 * NODE_REBOOT and DRAIN_AND_RESET to FAIL and DRAIN_P2P to WARN (gpu.md 2.3, [D2]). The EKS agent has no
 * reason for the field, so each action is its own reason: a repair controller reads which action NVIDIA
 * asks for from the reason alone.
 */

/** NVML_FI_DEV_GET_GPU_RECOVERY_ACTION. */
export const FIELD_GPU_RECOVERY_ACTION = 230;

export interface RecoveryAction {
  readonly severity: 'fatal' | 'warning';
  readonly reason: string;
  readonly text: string;
}

/** nvmlDeviceGpuRecoveryAction_t, NONE (0) left out: it is no finding. */
export const RECOVERY_ACTIONS: Readonly<Record<number, RecoveryAction>> = {
  1: { severity: 'fatal', reason: 'NvidiaGPUResetRequired', text: 'a GPU reset (GPU_RESET)' },
  2: { severity: 'fatal', reason: 'NvidiaNodeRebootRequired', text: 'a node reboot (NODE_REBOOT)' },
  // Peer-to-peer traffic must drain first; the GPU still serves work without P2P: DCGM's WARN.
  3: {
    severity: 'warning',
    reason: 'NvidiaDrainP2PRequired',
    text: 'draining peer-to-peer traffic (DRAIN_P2P)',
  },
  4: {
    severity: 'fatal',
    reason: 'NvidiaDrainAndResetRequired',
    text: 'draining the GPU and a reset (DRAIN_AND_RESET)',
  },
  // A multi-node NVLink (IMEX) domain action, not this GPU's: DCGM's table names no verdict, so a warning.
  5: {
    severity: 'warning',
    reason: 'NvidiaRecoverIMEXDomain',
    text: 'recovering the IMEX domain (RECOVER_IMEX_DOMAIN)',
  },
};

/** An action value this agent does not know yet: reported, as a warning. */
export const UNKNOWN_RECOVERY_ACTION = 'NvidiaGPURecoveryAction';

const bySeverity = (s: RecoveryAction['severity']) =>
  Object.values(RECOVERY_ACTIONS)
    .filter((a) => a.severity === s)
    .map((a) => a.reason);

/** No options: the actions and their severities are NVIDIA's and DCGM's. */
export const recoveryActionCheck: GpuCheck<unknown, null> = {
  name: 'recovery-action',
  scope: 'gpu',
  reasons: { fatal: bySeverity('fatal'), warning: [...bySeverity('warning'), UNKNOWN_RECOVERY_ACTION] },
  initialState: () => null,
  run(ctx, gpu) {
    if (gpu === undefined) return { findings: [] };
    const values = ctx.nvml.fieldValues(gpu.handle, [{ fieldId: FIELD_GPU_RECOVERY_ACTION }]);
    if (values instanceof NvmlError) return unanswered(values);
    const field = values.find((v) => v.fieldId === FIELD_GPU_RECOVERY_ACTION);
    // NVML answered SUCCESS without the field: no nvmlReturn_t to report, so this check's own fault
    // (an NVML-looking code would end the session for the whole node).
    if (field === undefined)
      return {
        findings: [],
        fault: `field ${FIELD_GPU_RECOVERY_ACTION} missing from nvmlDeviceGetFieldValues`,
      };
    if (field.ret !== NVML.SUCCESS) return unanswered(fieldError(field));
    return judge(gpu, field.value);
  },
};

function judge(gpu: Gpu, action: number): CheckResult {
  const gauges = { recovery_action: action };
  if (action === 0) return { findings: [], gauges };
  const known = RECOVERY_ACTIONS[action];
  const what = known?.text ?? `an action this agent does not know (${action})`;
  const message = `${describeGpu(gpu)}: the driver's recovery action asks for ${what}`;
  const severity = known?.severity ?? 'warning';
  const reason = known?.reason ?? UNKNOWN_RECOVERY_ACTION;
  return { findings: [{ check: 'recovery-action', severity, reason, message, gpu }], gauges };
}

/**
 * A driver that predates field 230 answers INVALID_ARGUMENT, for the call (the H200 of gpu.md section 0
 * did so for an unknown field id) or for the field; that and NOT_SUPPORTED mean "no such field".
 */
function unanswered(err: NvmlError): CheckResult {
  const none = err.code === NVML.NOT_SUPPORTED || err.code === NVML.INVALID_ARGUMENT;
  return none ? { findings: [] } : { findings: [], error: err };
}

/** The call label is the NVML function, as the binding's errors name it (npd_gpu_nvml_errors_total). */
function fieldError(field: FieldValue): NvmlError {
  return new NvmlError('nvmlDeviceGetFieldValues', field.ret, `field ${field.fieldId} answered ${field.ret}`);
}
