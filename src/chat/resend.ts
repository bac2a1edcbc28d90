import type { AgentRunner } from '../runner/agent-runner';
import type { StoredSession } from '../sessions/store';
import type { Principal } from '../suspension/audit';
import type { UIStreamPart } from './parts';
import { uiThread, type ChatUIMessage } from './thread';

/**
 * The response to a user message the session already has (docs/chat.md, "Retries and
 * regenerate"): the same id and the same text as a message of the stored thread (its latest
 * copy), as a page sends it again after its connection dropped. Its exchange's reply is streamed
 * back from the session, as a reload would show it (redacted, with any request still open), and
 * nothing runs: a tool call the first request made is not made twice. Undefined when the
 * session does not have the message (a new one, or an edit of it: other text under its id).
 */
export async function storedReply(
  runner: AgentRunner,
  session: StoredSession | undefined,
  message: { id: string; text: string },
  principal: Principal,
): Promise<UIStreamPart[] | undefined> {
  if (!session) return undefined;
  let kept = -1;
  session.messages.forEach((stored, index) => {
    if (stored.role === 'user' && stored.id === message.id) kept = index;
  });
  const stored = session.messages[kept];
  if (stored?.role !== 'user' || stored.content !== message.text) return undefined;
  const thread = await uiThread(runner, session, principal);
  const at = thread.findIndex((ui) => ui.role === 'user' && ui.id === message.id);
  const reply = thread[at + 1];
  // A message whose run ended before any reply (its run was cut short) has none to give back.
  return reply?.role === 'assistant' ? streamOf(reply) : [{ type: 'start' }, { type: 'finish', finishReason: 'stop' }];
}

/** A stored assistant message as the UI stream parts that build it again on the page. */
function streamOf(message: ChatUIMessage): UIStreamPart[] {
  const parts: UIStreamPart[] = [{ type: 'start', messageId: message.id }];
  let inStep = false;
  let blocks = 0;
  let waiting = false;
  for (const part of message.parts) {
    switch (part.type) {
      case 'step-start':
        if (inStep) parts.push({ type: 'finish-step' });
        parts.push({ type: 'start-step' });
        inStep = true;
        break;
      case 'text': {
        const id = `${message.id}-text-${++blocks}`;
        parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text }, { type: 'text-end', id });
        break;
      }
      case 'file':
        parts.push(part);
        break;
      case 'data-toolnexus-request':
        waiting = true;
        parts.push(part);
        break;
      case 'data-toolnexus-approval':
        parts.push(part);
        break;
      default: {
        const { toolCallId } = part;
        parts.push({ type: 'tool-input-available', toolCallId, toolName: part.type.slice('tool-'.length), input: part.input });
        if (part.state === 'output-available') parts.push({ type: 'tool-output-available', toolCallId, output: part.output });
        else if (part.state === 'output-error') parts.push({ type: 'tool-output-error', toolCallId, errorText: part.errorText ?? '' });
        else if (part.state === 'approval-requested' && part.approval) {
          waiting = true;
          const reason = part.approval.requestReason;
          parts.push({
            type: 'tool-approval-request',
            approvalId: part.approval.id,
            toolCallId,
            ...(reason !== undefined ? { reason } : {}),
          });
        }
      }
    }
  }
  if (inStep) parts.push({ type: 'finish-step' });
  parts.push({ type: 'finish', finishReason: waiting ? 'tool-calls' : 'stop' });
  return parts;
}
