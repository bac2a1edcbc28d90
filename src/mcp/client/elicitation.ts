import type { Answer } from '../../results/wire';
import type { ElicitationReply } from '../elicitation';

/** The elicitation result an answer of this library stands for (a remote server's elicitation answered here). */
export function replyOf(answer: Answer): ElicitationReply {
  if (answer.ok) return answer.data ? { action: 'accept', content: answer.data } : { action: 'accept', content: {} };
  return { action: answer.reason === 'cancelled' || answer.reason === 'expired' ? 'cancel' : 'decline' };
}

/** The accepted content with the schema's `default` filled in for every field the answer left out (SEP-1034). */
export function withDefaults(schema: unknown, content: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return content;
  const filled = { ...content };
  for (const [key, field] of Object.entries(properties as Record<string, unknown>)) {
    const fallback = (field as { default?: unknown } | null)?.default;
    if (!(key in filled) && fallback !== undefined) filled[key] = fallback;
  }
  return filled;
}
