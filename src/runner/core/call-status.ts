import { pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import { refusalStatusOf, type RefusalStatus } from '../../suspension/answers';
import type { ToolCallStatus } from './types';

/**
 * The status of a call whose result is `result`: a suspension is `pending` (never an error,
 * though its wire result says `isError: true`), a refusal its own status, `refusal` when the
 * caller read it from the store (a refusal made in another process carries no mark).
 */
export function callStatus(result: ToolResult, refusal?: RefusalStatus): ToolCallStatus {
  if (pendingOf(result)) return 'pending';
  if (!result.isError) return 'ok';
  return refusal ?? refusalStatusOf(result) ?? 'error';
}
