import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import type { ToolMessage } from '@langchain/core/messages';
import type { StructuredTool, ToolRunnableConfig } from '@langchain/core/tools';
import { InvalidAnswerError } from '../../errors';
import { messageOf } from '../../errors/message';
import { coordinatorOf, hostState, keyPrefix, pendingOutput, sessionOf, toolsOf, type PendingOutput } from '../durable-call';
import { pendingOf } from '../../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { settledAtOnce } from '../../suspension/standing';
import type { ToolContext } from '../../toolkit/context';
import type { RegisteredTool, Toolkit } from '../../toolkit/toolkit';
import { langchain } from './peer';

/** Options of {@link langchainTools}. */
export interface LangChainToolsOptions {
  /**
   * Names the conversation (a LangGraph thread, say), so that its tool call ids key its
   * durable calls apart from another's. Stored as the calls' `runId`:
   * `langchain:<conversationId>:<toolCallId>`.
   */
  conversationId?: string;
  /** Only these tools (default: every tool registered). */
  names?: readonly string[];
  /** Recorded as who answered a request through `Command({ resume })` (the audit trail). */
  answeredBy?: Principal;
  /**
   * On whose behalf the calls are made (the signed-in user): recorded with each request, so
   * with an answer policy they may not approve their own (docs/who-may-answer.md).
   */
  principal?: Principal;
}

/** One toolnexus tool as a LangChain structured tool; its schema is the DTO's JSON Schema. */
export type LangChainTool = StructuredTool<Record<string, unknown>, unknown, unknown, string | ToolMessage>;

/**
 * What a tool of {@link langchainTools} passes to LangGraph's `interrupt()` when its call
 * suspends: the request to show a human, whose `id` the `Answer` given back as
 * `new Command({ resume: answer })` names.
 */
export type LangChainInterruptValue = PendingOutput;

/** The durable call key prefix of the LangChain adapter: `runId` of the calls it records. */
export const LANGCHAIN_RUN_PREFIX = 'langchain:';

/**
 * The Toolkit's tools as LangChain structured tools, for a LangGraph `ToolNode`,
 * `createReactAgent` or `tool.invoke` (docs/interop.md). Each tool's schema is its DTO's JSON
 * Schema (what `bindTools` shows the model), and our validation is the only one that runs:
 * invalid arguments come back as an error `ToolMessage` with our `invalid arguments for
 * NAME: ...` and `run` never sees them. An error result is an error `ToolMessage` too.
 *
 * Inside a LangGraph run (with a checkpointer), a call that suspends — a declared approval,
 * a login, an input — is recorded in the coordinator's store keyed by the tool call id and
 * raises LangGraph's `interrupt()` with the request ({@link LangChainInterruptValue}) as the
 * value. Resuming the graph with `new Command({ resume: answer })`, `answer` an `Answer` for
 * that request (`{ id, ok: true, data? }`, or `ok: false` to decline), settles the call
 * through the coordinator's claim: however often the graph is resumed from that checkpoint,
 * in however many processes, the tool runs once and every resume gets the same outcome. An
 * Answer given elsewhere first (the inbox, the CLI) settles the same call; the resume then
 * gets its stored outcome. Outside a graph, or without a tool call id, a suspension is the
 * JSON `{ status: 'pending', id, kind, prompt, url? }` and a durable pending call.
 *
 * Given a Toolkit rather than a coordinator, calls are kept in memory: exactly once within
 * this process only.
 */
export function langchainTools(source: ResumeCoordinator | Toolkit, options: LangChainToolsOptions = {}): LangChainTool[] {
  const coordinator = coordinatorOf(source, 'langchainTools');
  const prefix = keyPrefix('langchain', options.conversationId);
  const Class = toolClass();
  return toolsOf(coordinator, options.names, 'langchainTools').map(
    (tool) => new Class(new LangChainCall(coordinator, tool, prefix, options)),
  );
}

/** One tool's calls from LangChain: validation, the durable key, and the interrupt loop. */
class LangChainCall {
  /** The conversation's key, recorded as each call's `session`: what a grant of scope `session` names. */
  private readonly session?: string;

  constructor(
    readonly coordinator: ResumeCoordinator,
    readonly tool: RegisteredTool,
    private readonly prefix: string,
    private readonly options: LangChainToolsOptions,
  ) {
    this.session = sessionOf('langchain', options.conversationId);
  }

  /** Our validation's problem text, or undefined when the arguments are valid. */
  async problemOf(input: unknown): Promise<string | undefined> {
    const parsed = await this.coordinator.toolkit.parseArguments(this.tool.name, input);
    return parsed?.ok ? undefined : `invalid arguments for ${this.tool.name}: ${parsed?.problem ?? 'unknown tool'}`;
  }

  /**
   * Runs the call, or on a resumed graph picks up its recorded first request; every request
   * is raised as an interrupt and settled by the Answer the graph is resumed with.
   */
  async run(input: unknown, config: ToolRunnableConfig | undefined): Promise<ToolResult> {
    const ctx: ToolContext = { ...hostState(config?.context) };
    if (config?.signal) ctx.signal = config.signal;
    const callId = config?.toolCall?.id;
    if (callId === undefined || !insideGraph(config)) return this.coordinator.execute(this.tool.name, input, ctx);
    const runId = this.prefix + callId;
    // LangGraph re-runs the whole node on resume: the call recorded the first time is the one
    // to answer, never a second execution.
    const recorded = (await this.coordinator.list({ runId })).find((c) => c.tool === this.tool.name);
    // Settled by a standing grant when it was recorded: its outcome, no interrupt.
    if (recorded && settledAtOnce(recorded) && recorded.outcome) return recorded.outcome;
    let result = recorded
      ? undefined
      : await this.coordinator.execute(this.tool.name, input, ctx, {
          callId,
          runId,
          ...(this.options.principal ? { principal: this.options.principal } : {}),
          ...(this.session === undefined ? {} : { session: this.session }),
        });
    let request = recorded ? recorded.request : pendingOf(result);
    while (request) {
      const answer = answerFor(request, langchain().langgraph.interrupt(pendingOutput(request)));
      const audit = this.options.answeredBy ? { by: this.options.answeredBy } : undefined;
      result = await this.coordinator.resolve(answer, ctx, audit);
      request = pendingOf(result);
    }
    return result as ToolResult;
  }
}

/** Whether LangChain called the tool inside a LangGraph run with a checkpointer, where `interrupt()` works. */
function insideGraph(config: ToolRunnableConfig | undefined): boolean {
  const configurable: Record<string, unknown> | undefined = config?.configurable;
  return configurable?.__pregel_checkpointer !== undefined;
}

/** The resume value as the Answer to `request`: its `id` may be left out; another request's id is an error. */
function answerFor(request: PendingRequest, resume: unknown): Answer {
  if (typeof resume !== 'object' || resume === null || Array.isArray(resume))
    throw new InvalidAnswerError(`resume ${request.id} with an Answer { id, ok, data? }, got ${typeof resume}`);
  const answer = { id: request.id, ...resume } as Answer;
  if (answer.id !== request.id)
    throw new InvalidAnswerError(`the graph was resumed with an Answer for ${String(answer.id)}, but waits for ${request.id}`);
  return answer;
}

let cached: (new (call: LangChainCall) => LangChainTool) | undefined;

/** The StructuredTool subclass, made once the peer is loaded (its base class comes from the peer). */
function toolClass(): new (call: LangChainCall) => LangChainTool {
  if (cached) return cached;
  const { tools, messages } = langchain();
  class ToolnexusStructuredTool extends tools.StructuredTool<Record<string, unknown>, unknown, unknown, string | ToolMessage> {
    static override lc_name(): string {
      return 'ToolnexusStructuredTool';
    }
    readonly name: string;
    readonly description: string;
    /** Set only while `super.call` starts, so that LangChain's own JSON Schema check accepts what ours accepted. */
    private ours = false;

    constructor(private readonly call_: LangChainCall) {
      super();
      this.name = call_.tool.name;
      this.description = call_.tool.description;
    }

    /** The DTO's JSON Schema, what `bindTools` shows the model; during our call, a schema that accepts all. */
    get schema(): Record<string, unknown> {
      return this.ours ? {} : this.call_.tool.inputSchema;
    }

    /** Our validation first: its message is the model's error ToolMessage, and `_call` never runs on bad input. */
    override async call(arg: never, configArg?: never, tags?: string[]): Promise<never> {
      const config = configArg as ToolRunnableConfig | undefined;
      const raw: unknown = arg;
      const toolCall = isToolCall(raw) ? raw : undefined;
      const input: unknown = toolCall ? toolCall.args : raw;
      const callId = toolCall?.id ?? config?.toolCall?.id;
      const problem = await this.call_.problemOf(input);
      if (problem !== undefined) {
        if (callId === undefined) throw new tools.ToolInputParsingException(problem, JSON.stringify(input));
        return new messages.ToolMessage({ status: 'error', content: problem, tool_call_id: callId, name: this.name }) as never;
      }
      // LangChain checks `this.schema` synchronously as call starts, before its first await.
      this.ours = true;
      try {
        return super.call(arg, configArg, tags) as Promise<never>;
      } finally {
        this.ours = false;
      }
    }

    protected async _call(
      input: Record<string, unknown>,
      _runManager?: CallbackManagerForToolRun,
      config?: ToolRunnableConfig,
    ): Promise<string | ToolMessage> {
      let result: ToolResult;
      try {
        result = await this.call_.run(input, config);
      } catch (error) {
        // An interrupt is LangGraph's own control flow; anything else is the model's tool error.
        if (langchain().langgraph.isGraphInterrupt(error)) throw error;
        result = { output: `${this.name}: ${messageOf(error)}`, isError: true };
      }
      const request = pendingOf(result);
      const content = request ? JSON.stringify(pendingOutput(request)) : result.output;
      const callId = config?.toolCall?.id;
      if (!result.isError || callId === undefined) return content;
      return new messages.ToolMessage({ status: 'error', content, tool_call_id: callId, name: this.name });
    }
  }
  cached = ToolnexusStructuredTool;
  return cached;
}

function isToolCall(value: unknown): value is { args: unknown; id?: string } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'tool_call' && 'args' in value;
}
