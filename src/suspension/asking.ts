import { subAgentOriginOf } from './origin';
import type { SuspendedCall, SuspensionStore } from './store';

/** Longest sub-agent path followed to the call that asked. */
const MAX_DEPTH = 32;

/** What finding the asking call needs of the call an answer names: a stored call, or one about to be recorded. */
export type SurfacedCall = Pick<SuspendedCall, 'request' | 'tool' | 'runId' | 'callId'>;

/** The asking call and the sub-agent tools above it, or why none can be trusted. */
export type AskingCall<T extends SurfacedCall> = { call: T | SuspendedCall; path: string[] } | { deny: string };

/**
 * The **asking call** (docs/design.md, glossary) of `surfaced`: itself, or, for a request a
 * sub-agent surfaced, the call at the end of its `data.subAgent` path, each child read from
 * `store` and checked to be the child run of the call above it (a request's data alone cannot
 * point elsewhere). The one way the answer policy, standing grants and automatic answers find
 * the call they judge, so none of them can be led by a sub-agent tool's name.
 */
export async function askingCallOf<T extends SurfacedCall>(store: SuspensionStore, surfaced: T): Promise<AskingCall<T>> {
  let call: T | SuspendedCall = surfaced;
  const path: string[] = [];
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const origin = subAgentOriginOf(call.request);
    if (!origin) return { call, path };
    const childRun = call.runId !== undefined && call.callId !== undefined ? `${call.runId}/${call.callId}` : undefined;
    if (childRun !== undefined && origin.runId !== childRun)
      return { deny: `the request names a sub-agent run (${origin.runId}) that is not its call's (${childRun})` };
    const child = await store.get(origin.requestId);
    if (!child || child.runId !== origin.runId)
      return { deny: `the sub-agent request ${origin.requestId} it surfaced is not held by this coordinator's store` };
    path.push(call.tool);
    call = child;
  }
  return { deny: `the sub-agent path is deeper than ${MAX_DEPTH}` };
}
