import type { ConditionStatus, ProblemEvent } from '../core/types.ts';
import { goQuote } from '../gocompat/go-quote.ts';

/** NPD's condition-change event: Warning when the condition turns True, Normal otherwise. */
export function conditionChangeEvent(
  type: string,
  status: ConditionStatus,
  reason: string,
  message: string,
  timestamp: number,
): ProblemEvent {
  return {
    severity: status === 'True' ? 'warn' : 'info',
    timestamp,
    reason,
    message: `Node condition ${type} is now: ${status}, reason: ${reason}, message: ${goQuote(message)}`,
  };
}
