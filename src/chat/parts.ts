import type { RunStop } from '../runner/core/types';
import type { SettledStatus } from '../suspension/store';
/**
 * The parts of the AI SDK's UI message stream (protocol `v1`, header
 * `x-vercel-ai-ui-message-stream: v1`) that this back end sends, typed here so the entry
 * needs no `ai` package at run time: the protocol is JSON objects over server-sent events.
 * The shapes are the `UIMessageChunk` members of `ai`@7 (docs/chat.md, "The stream").
 */
export type UIStreamPart =
  | { type: 'start'; messageId?: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'finish'; finishReason?: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  /** An image or file a tool result shows: `url` is a `data:` URL of its bytes or its own URL. */
  | { type: 'file'; url: string; mediaType: string }
  /** `reason` is the request's prompt, redacted: `useChat` keeps it as the tool part's `approval.requestReason`. */
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string; reason?: string }
  | { type: 'data-toolnexus-request'; id: string; data: ChatRequestData }
  | { type: 'data-toolnexus-approval'; id: string; data: ChatApprovalData }
  | { type: 'data-toolnexus-sub-agent'; id: string; data: ChatSubAgentData }
  /** Transient: `useChat` hands it to `onData` and keeps it out of the message (a progress bar, not history). */
  | { type: 'data-toolnexus-progress'; id: string; data: ChatProgressData; transient: true }
  /** A message sent while the run was in flight: `queued` (its own response), then `taken` where the run's next turn read it (docs/chat.md, "Steering"). */
  | { type: 'data-toolnexus-steer'; id: string; data: ChatSteerData }
  /** The run was stopped on purpose (a guardrail, its budget, a cancel): sent before `finish`. */
  | { type: 'data-toolnexus-stop'; id: string; data: ChatStopData }
  | { type: 'error'; errorText: string };

/**
 * The `data-toolnexus-stop` part: why the run ended without its answer, as the run's result
 * says (`RunStop`): `blocked` (which guardrail, at which stage, its message as its author
 * wrote it), `budget_exceeded` (which limit), `cancelled`. Its id is `stop`.
 */
export type ChatStopData = RunStop;

/**
 * The `data-toolnexus-request` part: a suspension that is not an approval (a login, an
 * input, a question), for the page to show. `id` is the suspension's id, the part's own id
 * too, so a later part with the same id replaces it. Only what the person needs is sent:
 * never the request's other `data` (it may hold what the tool keeps for itself).
 */
export interface ChatRequestData {
  /** The suspension's id: what an answer names. */
  id: string;
  /** The tool call that asks. */
  toolCallId: string;
  /** `authorization`, `input`, `question`, ... */
  kind: string;
  prompt: string;
  /** Where to go (a login page), when the request has one. */
  url?: string;
  /** The JSON Schema of the answer's `data` (`request.data.schema`), when the request has one. */
  schema?: unknown;
  /** RFC 3339. */
  expiresAt?: string;
}

/**
 * The `data-toolnexus-progress` part: how far a running tool has come, as the tool reports it
 * (`ctx.progress`), at most one per call every 100 ms. `id` is `progress-` and the call's id.
 */
export interface ChatProgressData {
  toolCallId: string;
  toolName: string;
  progress: number;
  total?: number;
  /** As the tool wrote it (redacted of the chat's sensitive values). */
  message?: string;
}

/**
 * The `data-toolnexus-steer` part (docs/chat.md, "Steering"): `id` is `steer-` and the page's
 * message id. `queued`: the message joined the run in flight; `taken`: the run's next turn read it.
 */
export interface ChatSteerData {
  /** The page's id of the user message. */
  messageId: string;
  text: string;
  state: 'queued' | 'taken';
}

/** What the chat's principal may do with an approval request: the buttons a page shows. */
export type ChatApprovalAction = 'approve' | 'decline' | 'edit' | 'sign';

/**
 * The `data-toolnexus-approval` part, sent after each `tool-approval-request` (its `id` is the
 * approval's, so a later one replaces it): what the response's principal may do with that
 * approval, as the coordinator's answer policy decides it now (docs/who-may-answer.md,
 * "The doors"). Advisory: an answer is judged again when it is given.
 */
export interface ChatApprovalData {
  /** The approval's id: the suspension's, `part.approval.id` of the tool part. */
  id: string;
  /** The tool call that asks. */
  toolCallId: string;
  /**
   * What the principal may do now: `approve` (or `sign`, for a quorum: their approval is one
   * signature), `decline`, and `edit` (approve with other arguments, sent as the body's
   * `edits`) where the request allows it. Empty: they may not answer it (someone else may).
   */
  actions: ChatApprovalAction[];
  /** A quorum's progress: `signed` of the `of` approvals needed; `byYou` when the principal signed already. */
  quorum?: { of: number; signed: number; byYou: boolean };
  /**
   * Present when this response is the refusal of the principal's answer to it: the answer
   * policy's stable code and its reason. Nothing changed; the approval still waits for
   * someone allowed.
   */
  refusal?: { code: 'TOOLNEXUS_ANSWER_REFUSED'; reason: string };
  /**
   * Present once the approval is settled, wherever it was answered (this chat, another tab,
   * the inbox, a recovery): how it ended. `actions` is then empty: the part, sent again with
   * the same id, stops offering buttons.
   */
  settled?: SettledStatus;
}

/**
 * The `data-toolnexus-sub-agent` part (with the chat option `subAgents: 'part'`): what one
 * sub-agent call did, apart from the customer's message. It is sent again, with the same id,
 * as the sub-agent goes on, so the page shows its latest state.
 */
export interface ChatSubAgentData {
  /** The sub-agent tool's name (the first of the events' `path`). */
  agent: string;
  /** The agent's call of that tool, when it is known: absent for a resumed sub-agent, or when two calls of it run at once. */
  toolCallId?: string;
  /** The sub-agent's text so far (its own sub-agents' too), redacted as the rest of the response. */
  text: string;
  /** The tools it called, by name only: their inputs and outputs may hold its `@Sensitive()` values, which its own toolkit declares. */
  tools: Array<{ path: string[]; toolCallId: string; toolName: string; state: 'running' | 'done' | 'error' | 'waiting' }>;
}

/** The response headers of a UI message stream, as `ai`'s `UI_MESSAGE_STREAM_HEADERS`. */
export const UI_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};
