import { Role, TaskState, type Artifact, type Message, type Part, type TaskStatus } from '@a2a-js/sdk';
import { StreamRedactor } from '../../chat/redact';
import type { ChatMessage } from '../../models/types';
import type { RunStop } from '../../runner/core/types';
import type { SuspendedCall } from '../../suspension/store';
import type { Toolkit } from '../../toolkit/toolkit';

/** A text part, as the SDK's types shape one. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A data part (JSON) of `value`. */
export function dataPart(value: Record<string, unknown>): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/** An agent message of a task. */
export function agentMessage(taskId: string, contextId: string, messageId: string, parts: Part[]): Message {
  return { messageId, contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** The id of a task's answer artifact: one per task, so a restarted server and the live stream name it alike. */
export const answerArtifactId = (taskId: string): string => `${taskId}:answer`;

/**
 * The task's answer: the run's last text, as one text part, with every `@Sensitive()` value of
 * the run's calls redacted (the model may quote one), as the chat's stream redacts it.
 */
export function answerArtifact(taskId: string, text: string, toolkit: Toolkit, messages: readonly ChatMessage[]): Artifact {
  const redactor = new StreamRedactor(toolkit);
  for (const message of messages)
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) redactor.call(call.name, call.arguments);
  text = redactor.text(text);
  return {
    artifactId: answerArtifactId(taskId),
    name: 'answer',
    description: '',
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
  };
}

/** What a client is told of a request a task waits on: never the call's arguments, only what is asked and how to answer. */
export interface A2ARequestData {
  /** The suspension's id: give it back as `id` in the answer's data part when a task waits on more than one. */
  id: string;
  /** `approval`, `input`, `question`, or another kind. */
  kind: string;
  prompt: string;
  /** The tool that asks. */
  tool: string;
  /** The JSON Schema of the answer's `data` (an `input` request's), when the request gives one. */
  schema?: Record<string, unknown>;
  url?: string;
  expiresAt?: string;
}

/** The status of a task waiting on `open` (calls redacted by the caller): a text part of their prompts, then a data part each. */
export function inputRequired(taskId: string, contextId: string, open: readonly SuspendedCall[], timestamp: string): TaskStatus {
  const parts: Part[] = [textPart(open.map((call) => call.request.prompt).join('\n'))];
  for (const call of open) parts.push(dataPart({ ...requestData(call) }));
  // Named after the requests asked: the live stream and a restarted server's reading dedupe to one history entry.
  const messageId = `${taskId}:ask:${open.map((call) => call.request.id).join(',')}`;
  return { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(taskId, contextId, messageId, parts), timestamp };
}

function requestData(call: SuspendedCall): A2ARequestData {
  const { request } = call;
  const schema = request.data?.schema;
  return {
    id: request.id,
    kind: request.kind,
    prompt: request.prompt,
    tool: call.tool,
    ...(typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? { schema: schema as Record<string, unknown> } : {}),
    ...(request.url ? { url: request.url } : {}),
    ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}),
  };
}

/** A status with a short agent message (a failure, a cancellation), or none. */
export function statusOf(state: TaskState, taskId: string, contextId: string, timestamp: string, text?: string): TaskStatus {
  const message = text === undefined ? undefined : agentMessage(taskId, contextId, `${taskId}:${TaskState[state]}`, [textPart(text)]);
  return { state, message, timestamp };
}

/**
 * The task state and message of a run that ended without an answer: a cancelled run is
 * `canceled`, a blocked one `rejected`, the rest (`incomplete`, `budget_exceeded`, an error) `failed`.
 */
export function endOf(status: string | undefined, stop: RunStop | undefined): [TaskState, string] {
  if (stop?.status === 'cancelled') return [TaskState.TASK_STATE_CANCELED, 'the run was cancelled'];
  if (stop?.status === 'blocked') return [TaskState.TASK_STATE_REJECTED, 'a guardrail blocked the run'];
  if (stop?.status === 'budget_exceeded') return [TaskState.TASK_STATE_FAILED, `the run's budget (${stop.limit}) is spent`];
  return [TaskState.TASK_STATE_FAILED, status === 'incomplete' ? 'the run reached its turn limit' : 'the run stopped on an error'];
}
