import { RunConflictError, RunNotFoundError } from '../errors';
import type { AgentRunner } from '../runner/agent-runner';
import type { Principal } from '../suspension/audit';
import type { ChatSteerData, UIStreamPart } from './parts';

/** The `data-toolnexus-steer` part of a message steered into a run: `queued` in its own response, `taken` in the run's. */
export function steerPart(data: ChatSteerData): UIStreamPart {
  return { type: 'data-toolnexus-steer', id: `steer-${data.messageId}`, data };
}

/**
 * A user message sent while the chat's run is in flight (docs/chat.md, "Steering"), steered
 * into that run on the principal's behalf: the whole response, a short stream saying it was
 * queued (the run's own response, in whichever process drives it, shows it `taken` when its next
 * turn reads it). Undefined when the run no longer takes messages (it ended meanwhile, or another
 * process drives it on a run store with no steering queue): the chat is then busy, as before.
 */
export async function steeredReply(
  runner: AgentRunner,
  runId: string,
  message: { id: string; text: string },
  principal: Principal,
): Promise<UIStreamPart[] | undefined> {
  try {
    await runner.steer(runId, message.text, { id: message.id, audit: { by: principal } });
  } catch (error) {
    if (error instanceof RunConflictError || error instanceof RunNotFoundError) return undefined;
    throw error;
  }
  return [
    { type: 'start', messageId: `msg-steer-${message.id}` },
    steerPart({ messageId: message.id, text: message.text, state: 'queued' }),
    { type: 'finish' },
  ];
}
