import type { Message, Part, Task } from '@a2a-js/sdk';
import type { JsonSchema } from '../../results/json-schema';
import type { A2ASdk } from './peer';

/** Longest prompt taken from an agent's question; the rest is cut, saying so. */
const MAX_PROMPT_CHARS = 4_000;
/** Largest answer schema taken from an agent's question, as JSON characters. */
const MAX_SCHEMA_CHARS = 20_000;

/** The schema of an answer when the agent's question brings none: the person's reply, as text. */
export const REPLY_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string', description: 'Your reply to the agent' } },
  required: ['text'],
};

/** `Role.ROLE_AGENT` of the SDK's wire types (a const enum value, compared without loading the SDK here). */
const ROLE_AGENT: number = 2;

/** A task state as upstream and A2A 0.3 spell it: `completed`, `input-required`, `auth-required`... */
export function stateName(sdk: A2ASdk, task: Task): string {
  const wire = sdk.taskStateToJSON(task.status?.state ?? sdk.TaskState.TASK_STATE_UNSPECIFIED);
  return wire
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

/** The states after which the task will not change by itself: the call stops reading it. */
export const FINAL_STATES: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
  'input-required',
  'auth-required',
]);

/**
 * The text of parts, one line each: text as it is, structured data as JSON, a file by its
 * URL or its name and size. At most `maxParts` are read, the rest counted.
 */
export function partsText(parts: readonly Part[], maxParts: number): string {
  const lines: string[] = [];
  for (const part of parts.slice(0, maxParts)) {
    const content = part.content;
    if (!content) continue;
    if (content.$case === 'text') lines.push(content.value);
    else if (content.$case === 'data') lines.push(JSON.stringify(content.value) ?? 'null');
    else if (content.$case === 'url') lines.push(content.value);
    else
      lines.push(
        `[file ${part.filename || 'unnamed'} (${part.mediaType || 'application/octet-stream'}, ${content.value.byteLength} bytes)]`,
      );
  }
  if (parts.length > maxParts) lines.push(`(${parts.length - maxParts} more parts left out)`);
  return lines.join('\n');
}

/** A completed task's result text (upstream's): its artifacts' parts, else the agent's last message. */
export function outputOf(task: Task, maxParts: number): string {
  const parts = task.artifacts.flatMap((artifact) => artifact.parts);
  if (parts.length > 0) return partsText(parts, maxParts);
  for (let i = task.history.length - 1; i >= 0; i--) {
    const message = task.history[i] as Message;
    if ((message.role as number) !== ROLE_AGENT) continue;
    const text = partsText(message.parts, maxParts);
    if (text !== '') return text;
  }
  return '';
}

/** The words of a task's status message (the agent's question, or why it failed), bounded. */
export function statusText(task: Task, maxParts: number): string {
  const message = task.status?.message;
  if (!message) return '';
  const text = partsText(
    message.parts.filter((part) => part.content?.$case !== 'data'),
    maxParts,
  );
  return text.length > MAX_PROMPT_CHARS ? `${text.slice(0, MAX_PROMPT_CHARS)}… (cut at ${MAX_PROMPT_CHARS} characters)` : text;
}

/**
 * The JSON Schema an agent's question asks its answer in: a data part of the status message
 * that is an object schema (`type: 'object'` with `properties`), within its size bound.
 */
export function askedSchema(task: Task): JsonSchema | undefined {
  for (const part of task.status?.message?.parts ?? []) {
    const value: unknown = part.content?.$case === 'data' ? part.content.value : undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const schema = value as Record<string, unknown>;
    if (schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) continue;
    if ((JSON.stringify(schema)?.length ?? Infinity) > MAX_SCHEMA_CHARS) continue;
    return schema;
  }
  return undefined;
}
