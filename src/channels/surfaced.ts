import type { ResumeCoordinator } from '../suspension/coordinator';
import { subAgentOriginOf } from '../suspension/origin';
import type { SuspendedCall } from '../suspension/store';

/**
 * How long a request in a run named like a sub-agent's child run (`<run id>/<call id>`) waits
 * for the run above to surface it before it is delivered as it is. The parent surfaces it as
 * soon as the child halts (milliseconds); the wait only covers a tick that lists the child's
 * request in between (docs/channels.md, "A sub-agent's request").
 */
export const SURFACING_WAIT_MS = 10_000;

/** Longest chain of sub-agents followed up to the root's request. */
const MAX_DEPTH = 32;

/**
 * The request the run above surfaced from `call`, when it is stored: `sub-<call's id>`
 * (the runner's name for it), whose `data.subAgent` names this very call and its run.
 */
async function surfacedFrom(coordinator: ResumeCoordinator, call: SuspendedCall): Promise<SuspendedCall | undefined> {
  const above = await coordinator.get(`sub-${call.request.id}`);
  const origin = subAgentOriginOf(above?.request);
  return above && origin?.requestId === call.request.id && origin.runId === call.runId ? above : undefined;
}

/**
 * The request a person answers for `call`: the outermost one the sub-agents above surfaced it
 * as (the root run's, docs/agents.md "A pause inside a sub-agent"), or `call` itself when
 * nobody surfaced it. Answering it resumes each child down to the one that asked, once.
 */
export async function outermostOf(coordinator: ResumeCoordinator, call: SuspendedCall): Promise<SuspendedCall> {
  let current = call;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const above = await surfacedFrom(coordinator, current);
    if (!above) return current;
    current = above;
  }
  return current;
}

/**
 * Whether the run above may still surface `call`: its run is named as the runner names a
 * sub-agent's child run (`<run id>/<call id>`), and it was recorded less than
 * {@link SURFACING_WAIT_MS} ago. Its card waits until then; a request nobody surfaced by then
 * is delivered as it is.
 */
export function maySurface(call: SuspendedCall, now: number): boolean {
  return call.runId?.includes('/') === true && Date.parse(call.createdAt) + SURFACING_WAIT_MS > now;
}
