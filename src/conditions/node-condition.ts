import type { ConditionStatus } from '../core/types.ts';
import type { PatchExtras } from './ownership.ts';

/** A core/v1 NodeCondition as sent in the status patch. */
export interface NodeConditionJson {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
}

/** Writes `{"status":{"conditions":[...]}}` to the Node; KubeNodeStatusWriter or a fake in tests. */
export interface NodeStatusWriter {
  patchConditions(conditions: readonly NodeConditionJson[], extras?: PatchExtras): Promise<void>;
}
