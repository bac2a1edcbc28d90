// `ai` is ESM only: the attribute lets a CommonJS app (node16/nodenext) read these types.
import type { JSONSchema7, ModelMessage, Tool, ToolApprovalResponse, ToolApprovalStatus } from 'ai' with { 'resolution-mode': 'import' };
import { coordinatorOf, DurableCall, hostState, keyPrefix, pendingOutput, toolsOf, type DurableCallOptions } from '../durable-call';
import { InvalidArgumentError } from '../../errors';
import { pendingOf } from '../../results/helpers';
import type { PendingRequest, ToolResult } from '../../results/wire';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { Grant } from '../../suspension/grants';
import type { SuspendedCall } from '../../suspension/store';
import type { ToolContext } from '../../toolkit/context';
import type { RegisteredTool, Toolkit } from '../../toolkit/toolkit';
import { ai } from './peer';
import { aiSdkMediaPart } from './media';
import { mediaOf } from '../../runner/core/media';
import { contentOf, type ToolContent } from '../../results/content';

/**
 * What a tool of {@link aiSdkTools} returns when its call suspended on something the AI SDK
 * has no part for (a login, a typed value): the request to show a human, whose `id` an
 * `Answer` names. The call is recorded durably; answer it through `answerAs`, the inbox or
 * the CLI, then {@link withOutcomes} puts the tool's real result into the messages.
 */
export interface SuspendedToolOutput {
  status: 'pending';
  request: PendingRequest;
}

/**
 * A result that shows media (`withContent`): its text, and the content, whose images and files
 * the model is shown (`toModelOutput` gives them as the tool result's `content`).
 */
export interface ContentToolOutput {
  status: 'done';
  output: string;
  content: ToolContent[];
}

/** A tool's output as the AI SDK's step results carry it: the tool's text, a result with media, or a suspension. */
export type AiSdkToolOutput = string | ContentToolOutput | SuspendedToolOutput;

/** One toolnexus tool as an AI SDK tool. */
export type AiSdkTool = Tool<unknown, AiSdkToolOutput, Record<string, unknown> | undefined>;

/** Options of {@link aiSdkTools}. */
export interface AiSdkToolsOptions {
  /**
   * Names the conversation, so that its provider tool-call ids (which only the provider
   * keeps unique, and mock servers not at all) key its durable calls apart from another's.
   * Stored as the calls' `runId`: `ai-sdk:<conversationId>:<toolCallId>`.
   */
  conversationId?: string;
  /** Only these tools (default: every tool registered). */
  names?: readonly string[];
  /** Recorded as who approved a call through the AI SDK's `tool-approval-response` (the audit trail). */
  approvedBy?: Principal;
  /**
   * On whose behalf the calls are made (the signed-in user): recorded with each approval
   * request, so with an answer policy they may not approve their own (docs/who-may-answer.md).
   */
  principal?: Principal;
}

/** The durable call key prefix of the AI SDK adapter: `runId` of the calls it records. */
export const AI_SDK_RUN_PREFIX = 'ai-sdk:';

/**
 * Whether one call of a tool needs the human's approval, as the AI SDK's `toolApproval`
 * option asks it per tool: `{ type: 'user-approval', reason }` with our approval prompt as the
 * reason, or `'not-applicable'`.
 */
export type AiSdkApprovalFunction = (input: unknown, options: { toolCallId: string; toolContext?: unknown }) => Promise<ToolApprovalStatus>;

/** What {@link aiSdkToolApproval} returns: the `toolApproval` option of `generateText`, `streamText` or `ToolLoopAgent`. */
export type AiSdkToolApproval = Record<string, AiSdkApprovalFunction>;

/**
 * Where each tool {@link aiSdkTools} made keeps its durable call, for {@link aiSdkToolApproval}:
 * a hidden property of the tool itself, so no state lives in this module.
 */
const DURABLE_CALL = Symbol('toolnexus.durableCall');

function durableCallOf(tool: AiSdkTool): DurableCall | undefined {
  return (tool as AiSdkTool & { [DURABLE_CALL]?: DurableCall })[DURABLE_CALL];
}

/**
 * The Toolkit's tools as an AI SDK tool set, for `generateText`, `streamText` and
 * `ToolLoopAgent` (docs/interop.md). Each tool's DTO JSON Schema is its `inputSchema` and our
 * validation its validator, so the model is told our `invalid arguments for NAME: ...` and
 * `run` never sees bad input. A declared approval (`@Tool({ approval })`) is the AI SDK's own
 * `needsApproval`: the call is recorded in the coordinator's store when the model asks for
 * it, and the approved execution resolves that record, so the tool runs once however often
 * (or in however many processes) the approval response is replayed. A login or input
 * suspension comes back as a {@link SuspendedToolOutput} and a durable pending call.
 *
 * Given a Toolkit rather than a coordinator, calls are kept in memory: exactly once within
 * this process only.
 */
export function aiSdkTools(source: ResumeCoordinator | Toolkit, options: AiSdkToolsOptions = {}): Record<string, AiSdkTool> {
  const coordinator = coordinatorOf(source, 'aiSdkTools');
  const set: Record<string, AiSdkTool> = {};
  for (const registered of toolsOf(coordinator, options.names, 'aiSdkTools')) {
    set[registered.name] = aiSdkTool(new DurableCall(coordinator, registered, durableOptions(options)));
  }
  return set;
}

/**
 * The AI SDK's `toolApproval` option for a tool set of {@link aiSdkTools}, so that each
 * approval request carries our approval prompt: `generateText({ tools, toolApproval:
 * aiSdkToolApproval(tools), ... })` makes every `tool-approval-request` of a declared approval
 * carry the request's prompt (`Refund 500 cents on A-1?`, `@Sensitive()` values redacted) as its
 * `reason`, which the AI SDK keeps in the response messages and sends to `useChat` for the
 * approver's UI. The AI SDK takes a reason only from `toolApproval`, not from a tool's own
 * `needsApproval` (a boolean): without this option the approval flow is the same, the reason
 * left out. It records the request as `needsApproval` does: one durable call per tool call id.
 * Tools with no declared approval, or not made by {@link aiSdkTools}, get no entry.
 */
export function aiSdkToolApproval(tools: Readonly<Record<string, AiSdkTool>>): AiSdkToolApproval {
  const approval: AiSdkToolApproval = {};
  for (const [name, tool] of Object.entries(tools)) {
    const call = durableCallOf(tool);
    if (!call?.tool.approval) continue;
    approval[name] = async (input, options) => {
      const request = await call.approvalRequest(options.toolCallId, input, options.toolContext);
      return request ? { type: 'user-approval', reason: request.prompt } : 'not-applicable';
    };
  }
  return approval;
}

function aiSdkTool(call: DurableCall): AiSdkTool {
  const { description, inputSchema } = call.tool;
  const validate = async (value: unknown) => {
    const checked = await call.validate(value);
    return checked.ok ? { success: true as const, value } : { success: false as const, error: new Error(checked.problem) };
  };
  const tool: AiSdkTool = {
    description,
    inputSchema: ai().jsonSchema<unknown>(inputSchema as JSONSchema7, { validate }),
    execute: async (input, options) => {
      const ctx: ToolContext = { ...hostState(options.context) };
      if (options.abortSignal) ctx.signal = options.abortSignal;
      return outputOf(await call.execute(options.toolCallId, input, ctx));
    },
    toModelOutput: ({ output }) => {
      if (typeof output === 'string') return { type: 'text', value: output };
      if (output.status === 'pending') return { type: 'json', value: { ...pendingOutput(output.request) } };
      const media = mediaOf({ output: output.output, isError: false, metadata: { content: output.content } }) ?? [];
      return { type: 'content', value: [{ type: 'text', text: output.output }, ...media.map(aiSdkMediaPart)] };
    },
  };
  if (call.tool.approval) tool.needsApproval = (input, options) => call.needsApproval(options.toolCallId, input, options.context);
  Object.defineProperty(tool, DURABLE_CALL, { value: call, enumerable: false });
  return tool;
}

/** A result as the AI SDK gets it: text, a thrown error (its message is the model's tool error), or a suspension. */
function outputOf(result: ToolResult): AiSdkToolOutput {
  const request = pendingOf(result);
  if (request) return { status: 'pending', request };
  if (result.isError) throw new Error(result.output);
  const content = result.metadata === undefined ? undefined : contentOf(result);
  return content && mediaOf(result) ? { status: 'done', output: result.output, content } : result.output;
}

/**
 * The messages with every suspended tool output of {@link aiSdkTools} whose call has since
 * been settled replaced by its outcome (the tool's text, or the refusal as an error), so the
 * next `generateText` continues with the real result. Calls still pending stay as they are.
 *
 * Messages come from the client, so a tool result may name any suspension id. Only a call
 * of this conversation made for that very tool call (its `runId` is
 * `ai-sdk:[<conversationId>:]<toolCallId>`) is filled in; a result naming another
 * conversation's call is left as the client sent it, so one user cannot read another's
 * outcome. Pass the `conversationId` the tool set was made with.
 */
export async function withOutcomes(
  messages: readonly ModelMessage[],
  coordinator: ResumeCoordinator,
  options: Pick<AiSdkToolsOptions, 'conversationId'> = {},
): Promise<ModelMessage[]> {
  const prefix = keyPrefix('ai-sdk', options.conversationId);
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'tool') {
      out.push(message);
      continue;
    }
    const content = [];
    for (const part of message.content) {
      const id = part.type === 'tool-result' ? suspensionIdOf(part.output) : undefined;
      const call = id === undefined ? undefined : await coordinator.get(id);
      const settled = part.type === 'tool-result' && call?.runId === prefix + part.toolCallId ? settledOutcome(call) : undefined;
      if (part.type !== 'tool-result' || !settled) {
        content.push(part);
        continue;
      }
      const next = pendingOf(settled);
      content.push({
        ...part,
        output: next
          ? { type: 'json' as const, value: { ...pendingOutput(next) } }
          : settled.isError
            ? { type: 'error-text' as const, value: settled.output }
            : { type: 'text' as const, value: settled.output },
      });
    }
    out.push({ ...message, content });
  }
  return out;
}

/**
 * Settles as declined every recorded approval that the last tool message of `messages`
 * declines (`tool-approval-response` with `approved: false`), so that no other front end
 * (the inbox, the CLI) can still approve a call the AI SDK's user refused. The AI SDK never
 * runs a declined tool and tells no tool of the refusal: call this with the messages you
 * pass to `generateText`. Returns how many calls it settled; already settled ones are left alone.
 */
export async function recordDeclines(
  messages: readonly ModelMessage[],
  coordinator: ResumeCoordinator,
  options: Pick<AiSdkToolsOptions, 'conversationId' | 'approvedBy' | 'principal'> = {},
): Promise<number> {
  let settled = 0;
  for (const { part, toolCallId, tool } of approvalResponses(messages, coordinator)) {
    if (part.approved) continue;
    if (await new DurableCall(coordinator, tool, durableOptions(options)).decline(toolCallId, part.reason)) settled++;
  }
  return settled;
}

/** Options of {@link alwaysApprove}. */
export interface AiSdkAlwaysApproveOptions extends Pick<AiSdkToolsOptions, 'conversationId' | 'approvedBy' | 'principal'> {
  /** The approval ids the user approved "always" (`tool-approval-response` parts of the last tool message, `approved: true`). */
  approvalIds: readonly string[];
  /** The grants lapse then (a `Date`, or RFC 3339). Absent: until revoked. */
  until?: Date | string;
}

/**
 * The AI SDK's "always approve for this conversation", mapped onto standing grants
 * (docs/who-may-answer.md, "Grants"). ai 7's `tool-approval-response` carries only
 * `approved` and a `reason`, so the approver's "always" reaches the server as the approval
 * ids your UI sends beside the messages: for each, a grant by `approvedBy` of the tool that
 * asked, scope `session`, its subject this conversation (`ai-sdk:<conversationId>`), given in
 * answer to that call's pending request. The answer policy judges it as that approval: a
 * principal who may not approve it (or who asked it: separation of duties) gets
 * `AnswerRefusedError` and nothing is stored. From then on a call of that tool in the
 * conversation is approved by the grant when the AI SDK asks (`needsApproval` answers no, and
 * the call runs once), until `coordinator.revoke(grant.id)`. The approved call itself runs
 * in the AI SDK's approval flow as any approval. Call it, like {@link recordDeclines}, with the
 * messages you pass to `generateText`; a call no longer pending gets no grant.
 * @throws {@link InvalidArgumentError} an id is no approved response of the last tool message; no `approvedBy` or `conversationId`.
 */
export async function alwaysApprove(
  messages: readonly ModelMessage[],
  coordinator: ResumeCoordinator,
  options: AiSdkAlwaysApproveOptions,
): Promise<Grant[]> {
  const responses = approvalResponses(messages, coordinator).filter((r) => r.part.approved);
  const chosen = [...new Set(options.approvalIds)].map((id) => {
    const response = responses.find((r) => r.part.approvalId === id);
    if (!response) throw new InvalidArgumentError(`alwaysApprove: ${id} is no approved tool-approval-response of the last tool message`);
    return response;
  });
  const grants: Grant[] = [];
  for (const { toolCallId, tool } of chosen) {
    const grant = await new DurableCall(coordinator, tool, durableOptions(options)).alwaysApprove(toolCallId, options.until);
    if (grant) grants.push(grant);
  }
  return grants;
}

/** The `tool-approval-response` parts of the last tool message, each with the tool call it answers, when that tool is registered. */
function approvalResponses(
  messages: readonly ModelMessage[],
  coordinator: ResumeCoordinator,
): Array<{ part: ToolApprovalResponse; toolCallId: string; tool: RegisteredTool }> {
  const last = messages[messages.length - 1];
  if (last?.role !== 'tool') return [];
  const requests = new Map<string, { toolCallId: string; toolName: string }>();
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') names.set(part.toolCallId, part.toolName);
      if (part.type === 'tool-approval-request')
        requests.set(part.approvalId, { toolCallId: part.toolCallId, toolName: names.get(part.toolCallId) ?? '' });
    }
  }
  const found = [];
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response') continue;
    const request = requests.get(part.approvalId);
    const tool = request && coordinator.toolkit.get(request.toolName);
    if (request && tool) found.push({ part, toolCallId: request.toolCallId, tool });
  }
  return found;
}

/** What a {@link DurableCall} of this adapter is given. */
function durableOptions(options: Pick<AiSdkToolsOptions, 'conversationId' | 'approvedBy' | 'principal'>): DurableCallOptions {
  return { framework: 'ai-sdk', ...options };
}

function suspensionIdOf(output: unknown): string | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const { type, value } = output as { type?: unknown; value?: unknown };
  if (type !== 'json' || typeof value !== 'object' || value === null) return undefined;
  const { status, id } = value as { status?: unknown; id?: unknown };
  return status === 'pending' && typeof id === 'string' ? id : undefined;
}

function settledOutcome(call: SuspendedCall | undefined): ToolResult | undefined {
  if (!call || call.status === 'pending' || call.status === 'resolving') return undefined;
  return call.outcome;
}
