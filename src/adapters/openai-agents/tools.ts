import type { FunctionTool, RunContext, RunToolApprovalItem } from '@openai/agents';
import { coordinatorOf, DurableCall, hostState, pendingOutput, toolsOf, type DurableCallOptions } from '../durable-call';
import { pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { Grant } from '../../suspension/grants';
import type { ToolContext } from '../../toolkit/context';
import type { Toolkit } from '../../toolkit/toolkit';
import { agents } from './peer';

/** Options of {@link openAIAgentsTools}. */
export interface OpenAIAgentsToolsOptions {
  /**
   * Names the conversation, so that its provider call ids key its durable calls apart from
   * another's. Stored as the calls' `runId`: `openai-agents:<conversationId>:<callId>`.
   */
  conversationId?: string;
  /** Only these tools (default: every tool registered). */
  names?: readonly string[];
  /** Recorded as who approved a call through `RunState.approve` (the audit trail). */
  approvedBy?: Principal;
  /**
   * On whose behalf the calls are made (the signed-in user): recorded with each approval
   * request, so with an answer policy they may not approve their own (docs/who-may-answer.md).
   */
  principal?: Principal;
}

/** One toolnexus tool as an OpenAI Agents SDK function tool. */
export type OpenAIAgentsTool = FunctionTool<unknown>;

/**
 * The Toolkit's tools as OpenAI Agents SDK `tool()`s (docs/interop.md): the DTO JSON Schema as
 * non-strict `parameters`, our validation before `run` (its message is the tool output the
 * model sees), and `needsApproval` from the declared approval. The approval request is
 * recorded in the coordinator's store when the Runner asks; an interruption approved through
 * `RunState.approve` executes by resolving that record, so however often the `RunState` is
 * restored and run (in however many processes), the tool runs once and every run gets the
 * same output. A login or input suspension is a JSON output `{ status: 'pending', id, kind,
 * prompt, url? }` and a durable pending call an Answer settles.
 */
export function openAIAgentsTools(source: ResumeCoordinator | Toolkit, options: OpenAIAgentsToolsOptions = {}): OpenAIAgentsTool[] {
  const coordinator = coordinatorOf(source, 'openAIAgentsTools');
  return toolsOf(coordinator, options.names, 'openAIAgentsTools').map((registered) => {
    const call = new DurableCall(coordinator, registered, durableOptions(options));
    return agents().tool({
      name: registered.name,
      description: registered.description,
      parameters: registered.inputSchema as never,
      strict: false,
      needsApproval: async (runContext: RunContext, input: unknown, callId?: string) =>
        callId !== undefined && call.needsApproval(callId, input, runContext.context),
      execute: async (input: unknown, runContext?: RunContext, details?: { toolCall?: { callId: string }; signal?: AbortSignal }) => {
        const ctx: ToolContext = { ...hostState(runContext?.context) };
        if (details?.signal) ctx.signal = details.signal;
        const callId = details?.toolCall?.callId;
        // Without a call id (a direct invoke), nothing can key the call: it runs through the coordinator unkeyed.
        const result =
          callId === undefined ? await coordinator.execute(registered.name, input, ctx) : await call.execute(callId, input, ctx);
        return outputOf(result);
      },
      // Our results already are the model's text; a throw here is the SDK's own failure.
      errorFunction: null,
    });
  });
}

/**
 * Settles as declined the recorded approval of an interruption you reject with
 * `state.reject(interruption)`, so that no other front end (the inbox, the CLI) can still
 * approve what the Agents SDK's user refused: the SDK runs no tool for a rejection and tells
 * none of it. Returns false when the call has no pending approval here (settled already, or not ours).
 */
export async function recordRejection(
  coordinator: ResumeCoordinator,
  interruption: RunToolApprovalItem,
  options: Pick<OpenAIAgentsToolsOptions, 'conversationId' | 'approvedBy' | 'principal'> & { message?: string } = {},
): Promise<boolean> {
  const found = durableCallOf(coordinator, interruption, options);
  return found ? found.call.decline(found.callId, options.message) : false;
}

/** Options of {@link approveInterruption}. */
export interface OpenAIAgentsApproveOptions extends Pick<OpenAIAgentsToolsOptions, 'conversationId' | 'approvedBy' | 'principal'> {
  /**
   * The Agents SDK's `alwaysApprove` ("approve this tool for all future calls in this run"),
   * kept as a standing grant in the coordinator's store rather than in the `RunState`.
   */
  alwaysApprove?: boolean;
  /** With `alwaysApprove`: the grant lapses then (a `Date`, or RFC 3339). Absent: until revoked. */
  until?: Date | string;
}

/** What {@link approveInterruption} approves on: a `RunState` (its `approve`). */
export interface ApprovingState {
  approve(interruption: RunToolApprovalItem, options?: { alwaysApprove?: boolean }): void;
}

/**
 * Approves an interruption on `state` as `state.approve(interruption)` does; with
 * `alwaysApprove`, the Agents SDK's "approve this tool for all future calls", kept as a
 * standing grant (docs/who-may-answer.md, "Grants"): by `approvedBy`, of the tool that asked,
 * scope `session`, its subject this conversation (`openai-agents:<conversationId>`), given in
 * answer to the interruption's pending request. The answer policy judges it as that approval:
 * a principal who may not approve it (or who asked it: separation of duties) gets
 * `AnswerRefusedError`, nothing is stored and `state` is left unapproved. From then on a call
 * of that tool in the conversation (this run or the next) is approved by the grant when the
 * Runner asks, without an interruption, until `coordinator.revoke(grant.id)`; the call after
 * that interrupts again. The SDK's own sticky approval is never set, so a revocation holds.
 * Returns the grant, or undefined without `alwaysApprove` (or when the call is settled already).
 * @throws {@link InvalidArgumentError} `alwaysApprove` without `approvedBy` or `conversationId`.
 */
export async function approveInterruption(
  coordinator: ResumeCoordinator,
  state: ApprovingState,
  interruption: RunToolApprovalItem,
  options: OpenAIAgentsApproveOptions = {},
): Promise<Grant | undefined> {
  let grant: Grant | undefined;
  if (options.alwaysApprove) {
    const found = durableCallOf(coordinator, interruption, options);
    grant = found && (await found.call.alwaysApprove(found.callId, options.until));
  }
  state.approve(interruption);
  return grant;
}

/** The durable call of an interruption of one of our tools, and its call id; undefined for anything else. */
function durableCallOf(
  coordinator: ResumeCoordinator,
  interruption: RunToolApprovalItem,
  options: Pick<OpenAIAgentsToolsOptions, 'conversationId' | 'approvedBy' | 'principal'>,
): { call: DurableCall; callId: string } | undefined {
  const raw = interruption.rawItem as { callId?: unknown };
  const tool = interruption.name === undefined ? undefined : coordinator.toolkit.get(interruption.name);
  if (!tool || typeof raw.callId !== 'string') return undefined;
  return { call: new DurableCall(coordinator, tool, durableOptions(options)), callId: raw.callId };
}

/** What a {@link DurableCall} of this adapter is given. */
function durableOptions(options: Pick<OpenAIAgentsToolsOptions, 'conversationId' | 'approvedBy' | 'principal'>): DurableCallOptions {
  return { framework: 'openai-agents', ...options };
}

/** A result as the model's tool output: its text (an error's too), or the pending request as JSON. */
function outputOf(result: ToolResult): string {
  const request = pendingOf(result);
  return request ? JSON.stringify(pendingOutput(request)) : result.output;
}
