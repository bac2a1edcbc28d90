import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ModelMessage, Tool, ToolExecutionOptions } from 'ai';
import { InvalidArgumentError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import { pendingOf } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import type { Principal } from '../suspension/audit';
import { ResumeCoordinator } from '../suspension/coordinator';
import type { SuspendedCall } from '../suspension/store';
import { APPROVAL_FOR } from '../toolkit/approval';
import type { ToolContext } from '../toolkit/context';
import { Toolkit, type RegisteredTool } from '../toolkit/toolkit';
import { ai } from './peer';

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

/** A tool's output as the AI SDK's step results carry it: the tool's text, or a suspension. */
export type AiSdkToolOutput = string | SuspendedToolOutput;

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
}

/** The durable call key prefix of the AI SDK adapter: `runId` of the calls it records. */
export const AI_SDK_RUN_PREFIX = 'ai-sdk:';

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
  const coordinator = source instanceof Toolkit ? new ResumeCoordinator({ toolkit: source }) : source;
  if (!(coordinator instanceof ResumeCoordinator)) throw new InvalidArgumentError('aiSdkTools needs a ResumeCoordinator or a Toolkit');
  const names = options.names ?? coordinator.toolkit.tools().map((t) => t.name);
  const prefix = `${AI_SDK_RUN_PREFIX}${options.conversationId === undefined ? '' : `${options.conversationId}:`}`;
  const set: Record<string, AiSdkTool> = {};
  for (const name of names) {
    const registered = coordinator.toolkit.get(name);
    if (!registered) throw new InvalidArgumentError(`aiSdkTools: no tool named ${name} is registered`);
    set[name] = new Adapted(coordinator, registered, prefix, options.approvedBy).tool();
  }
  return set;
}

/** One registered tool, adapted. */
class Adapted {
  /** Arguments the validator accepted, by the very object the AI SDK then executes with. */
  private readonly validated = new WeakMap<object, object>();

  constructor(
    private readonly coordinator: ResumeCoordinator,
    private readonly registered: RegisteredTool,
    private readonly prefix: string,
    private readonly approvedBy: Principal | undefined,
  ) {}

  tool(): AiSdkTool {
    const { name, description, inputSchema } = this.registered;
    const schema = ai().jsonSchema<unknown>(inputSchema as JSONSchema7, { validate: (value) => this.validate(value) });
    const tool: AiSdkTool = {
      description,
      inputSchema: schema,
      execute: (input, options) => this.execute(input, options),
      toModelOutput: ({ output }) =>
        typeof output === 'string'
          ? { type: 'text', value: output }
          : { type: 'json', value: { status: 'pending', id: output.request.id, kind: output.request.kind, prompt: output.request.prompt } },
    };
    if (this.registered.approval) tool.needsApproval = (input, options) => this.needsApproval(input, options.toolCallId, options.context);
    void name;
    return tool;
  }

  private async validate(value: unknown): Promise<{ success: true; value: unknown } | { success: false; error: Error }> {
    const parsed = await this.coordinator.toolkit.parseArguments(this.registered.name, value);
    if (!parsed?.ok)
      return { success: false, error: new Error(`invalid arguments for ${this.registered.name}: ${parsed?.problem ?? 'unknown tool'}`) };
    if (typeof value === 'object' && value !== null) this.validated.set(value, parsed.value);
    return { success: true, value };
  }

  /**
   * Records the call's approval request the first time the AI SDK asks; asked again (it
   * re-checks an approved call before running it), the record already there says yes.
   */
  private async needsApproval(input: unknown, toolCallId: string, context: unknown): Promise<boolean> {
    const policy = this.registered.approval;
    if (!policy) return false;
    const key = this.prefix + toolCallId;
    if ((await this.approvalCall(key)) !== undefined) return true;
    const parsed = await this.coordinator.toolkit.parseArguments(this.registered.name, input);
    if (!parsed?.ok) return false; // execute says why
    const ctx = hostState(context);
    if (policy.when && !(await policy.when(parsed.value, ctx))) return false;
    // The declared approval asks before run: this records the request and runs nothing.
    const result = await this.coordinator.execute(this.registered.name, parsed.value, ctx, { callId: toolCallId, runId: key });
    if (pendingOf(result)?.kind !== 'approval')
      throw new ToolnexusError(`${this.registered.name}: expected its approval request, got: ${result.output}`);
    return true;
  }

  private async execute(input: unknown, options: ToolExecutionOptions<unknown>): Promise<AiSdkToolOutput> {
    const name = this.registered.name;
    const key = this.prefix + options.toolCallId;
    const ctx: ToolContext = { ...hostState(options.context) };
    if (options.abortSignal) ctx.signal = options.abortSignal;
    if (this.registered.approval) {
      const call = await this.approvalCall(key);
      if (call) return outputOf(await this.approve(call, ctx));
      // No record: the policy's `when` let the call through (or it never asked).
    }
    const args = (typeof input === 'object' && input !== null && this.validated.get(input)) || input;
    return outputOf(await this.coordinator.execute(name, args, ctx, { callId: options.toolCallId, runId: key }));
  }

  /** The approved call, resolved through the coordinator's claim: one replay, every other resolve gets its outcome. */
  private async approve(call: SuspendedCall, ctx: ToolContext): Promise<ToolResult> {
    try {
      return await this.coordinator.resolve({ id: call.request.id, ok: true }, ctx, this.approvedBy ? { by: this.approvedBy } : undefined);
    } catch (error) {
      // Declined in the inbox, say, before the AI SDK's approval arrived: the model is told.
      throw new Error(`${this.registered.name}: ${messageOf(error)}`, { cause: error });
    }
  }

  /** This tool's recorded approval request for the key, if any. */
  private async approvalCall(key: string): Promise<SuspendedCall | undefined> {
    const calls = await this.coordinator.store.list({ runId: key, kind: 'approval' });
    return calls.find((c) => c.tool === this.registered.name && c.request.data?.[APPROVAL_FOR] === this.registered.name);
  }
}

/** A result as the AI SDK gets it: text, a thrown error (its message is the model's tool error), or a suspension. */
function outputOf(result: ToolResult): AiSdkToolOutput {
  const request = pendingOf(result);
  if (request) return { status: 'pending', request };
  if (result.isError) throw new Error(result.output);
  return result.output;
}

/** The host's context as the AI SDK hands it to a tool (its `context`), when it is an object. */
function hostState(context: unknown): object {
  return typeof context === 'object' && context !== null ? context : {};
}

/**
 * The messages with every suspended tool output of {@link aiSdkTools} whose call has since
 * been settled replaced by its outcome (the tool's text, or the refusal as an error), so the
 * next `generateText` continues with the real result. Calls still pending stay as they are.
 */
export async function withOutcomes(messages: readonly ModelMessage[], coordinator: ResumeCoordinator): Promise<ModelMessage[]> {
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
      const settled = settledOutcome(call);
      if (part.type !== 'tool-result' || !settled) {
        content.push(part);
        continue;
      }
      const next = pendingOf(settled);
      content.push({
        ...part,
        output: next
          ? { type: 'json' as const, value: { status: 'pending', id: next.id, kind: next.kind, prompt: next.prompt } }
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
  options: Pick<AiSdkToolsOptions, 'conversationId' | 'approvedBy'> = {},
): Promise<number> {
  const last = messages[messages.length - 1];
  if (last?.role !== 'tool') return 0;
  const requests = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-approval-request') requests.set(part.approvalId, part.toolCallId);
  }
  const prefix = `${AI_SDK_RUN_PREFIX}${options.conversationId === undefined ? '' : `${options.conversationId}:`}`;
  let settled = 0;
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response' || part.approved) continue;
    const toolCallId = requests.get(part.approvalId);
    if (toolCallId === undefined) continue;
    const calls = await coordinator.store.list({ runId: prefix + toolCallId, kind: 'approval', status: 'pending' });
    for (const call of calls) {
      if (call.request.data?.[APPROVAL_FOR] !== call.tool) continue;
      const answer = {
        id: call.request.id,
        ok: false,
        reason: 'declined' as const,
        ...(part.reason ? { data: { reason: part.reason } } : {}),
      };
      await coordinator.resolve(answer, undefined, options.approvedBy ? { by: options.approvedBy } : undefined);
      settled++;
    }
  }
  return settled;
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
