import type { PendingRequest } from '../results/wire';

/**
 * Where a sub-agent's request came from, in `request.data.subAgent` of the request the
 * calling run surfaces: the sub-agent tools from the root down to the agent that asked
 * (`path`), the child run, and the child's own request id. The answer policy follows it
 * down to the call that asked (docs/who-may-answer.md, "Sub-agents").
 */
export interface SubAgentOrigin {
  path: string[];
  runId: string;
  requestId: string;
}

/** The sub-agent origin of a request, when it carries a well-formed one. */
export function subAgentOriginOf(request: PendingRequest | undefined): SubAgentOrigin | undefined {
  const origin = request?.data?.subAgent as Partial<SubAgentOrigin> | undefined;
  if (typeof origin !== 'object' || origin === null) return undefined;
  if (typeof origin.runId !== 'string' || typeof origin.requestId !== 'string' || !Array.isArray(origin.path)) return undefined;
  return origin as SubAgentOrigin;
}
