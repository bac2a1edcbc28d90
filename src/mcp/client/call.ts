import {
  ProtocolError,
  ProtocolErrorCode,
  UnauthorizedError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type LoggingMessageNotification,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import { failure, newPendingId } from '../../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { WaitFor } from '../../suspension/answers';
import { endMcpCall, startMcpClientCall, type McpCallSite } from '../../telemetry/mcp';
import { errorTypeOf, type Telemetry } from '../../telemetry/telemetry';
import type { ToolContext, ToolLogLevel } from '../../toolkit/context';
import type { ElicitationReply } from '../elicitation';
import { MCP_IDEMPOTENCY_META } from '../idempotency';
import { RECONNECT_ATTEMPTS, type Connection, type Connections, type ElicitParams, type ServerRequests } from './connection';
import { replyOf, withDefaults } from './elicitation';
import {
  afterAnswer,
  isInputRequired,
  keptInputOf,
  splitInputRequests,
  suspendFor,
  type InputRequired,
  type Retry,
} from './input-required';
import { McpLoginRequiredError } from './errors';
import { isConnectionLost, isDroppedSession, said } from './failures';
import { logLevelFor } from './listen';
import type { Logins } from './oauth/logins';
import type { LoginOutcome } from './oauth/outcome';
import type { SourceSettings } from './options';
import { fromMcpResult } from './results';
import { answerSampling, SamplingMeter } from './sampling';
import { RemoteTasks, type TaskSite } from './task-follow';
import { TASKS_EXTENSION } from './tasks';
import type { McpSamplingOptions } from './types';

/** The call's idempotency key as `_meta` carries it; nothing when the call has none. */
function idempotencyMeta(ctx: ToolContext | undefined): Record<string, string> {
  const key = ctx?.idempotencyKey;
  return key === undefined ? {} : { [MCP_IDEMPOTENCY_META]: key };
}

/** Most `input_required` rounds one call answers in process before it fails (the SDK's own default). */
const MAX_INPUT_ROUNDS = 10;
/** The `_meta` key of a 2026-07-28 request's client capabilities. */
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

const LOG_LEVELS = new Set<ToolLogLevel>(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
/** A server's log lines passed to one call's `ctx.log`; one more says the rest were dropped. */
const MAX_LOG_LINES_PER_CALL = 1000;

/** One call of a remote tool, as it goes down to the request: `retry`, the replay's answers to the server's input round. */
interface OutgoingCall {
  readonly connection: Connection;
  readonly tool: McpTool;
  readonly args: Record<string, unknown>;
  readonly ctx: ToolContext | undefined;
  readonly retry: Retry | undefined;
}

/**
 * Calls of a server's tools, and what the server asks while they run: its progress and log
 * lines reach the caller's context, its elicitations become `pending` requests answered by
 * `waitFor`, its sampling requests go to the host's model. A lost session is opened again.
 */
export class RemoteCalls implements Omit<ServerRequests, 'toolsChanged'> {
  /** How many of a server's log lines each call has been told (at most {@link MAX_LOG_LINES_PER_CALL}). */
  private readonly logLines = new WeakMap<ToolContext, number>();
  /** What each connection's sampling requests have used: a new connection starts afresh. */
  private readonly samplingUse = new WeakMap<Connection, SamplingMeter>();
  /** The remote tasks these calls follow (SEP-2663), when the source takes them. */
  private readonly tasks: RemoteTasks;

  constructor(
    private readonly settings: SourceSettings,
    private readonly telemetry: Telemetry,
    private readonly connections: Connections,
    private readonly logins: Logins,
    /** Finishes a login a call's replay carries the redirect of. */
    private readonly finishLogin: (server: string, outcome: LoginOutcome) => Promise<unknown>,
  ) {
    this.tasks = new RemoteTasks(settings, connections);
  }

  /** Calls `tool` of `server`; the result redacted of the server's secrets, never thrown. */
  async call(server: string, tool: McpTool, args: Record<string, unknown>, ctx: ToolContext | undefined): Promise<ToolResult> {
    const connection = this.connections.get(server);
    if (!connection || this.connections.closed) return failure(`MCP server ${server} is not connected`);
    const login = await this.logins.answered(server, ctx, this.finishLogin);
    if (login) return login;
    // The replay of a call a server's input_required suspended: the retry, or the next elicitation to ask.
    const round = keptInputOf(ctx, server);
    let retry: Retry | undefined;
    if (round) {
      const next = afterAnswer(round, ctx?.replay?.request.kind === 'authorization');
      if ('result' in next) return next.result;
      retry = next.retry;
    }
    const result = await this.callRedacted({ connection, tool, args, ctx, retry });
    return connection.redactor.deep(result);
  }

  /** A server's log line, told to every call of it now running (a bounded number per call). */
  logged(connection: Connection, params: LoggingMessageNotification['params']): void {
    const server = connection.name;
    const level = LOG_LEVELS.has(params.level) ? params.level : 'info';
    const data = params.data;
    const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? '');
    for (const ctx of connection.active) {
      // A server that logs without end must not flood the host's log: a bounded number per call.
      const told = this.logLines.get(ctx) ?? 0;
      if (told > MAX_LOG_LINES_PER_CALL) continue;
      this.logLines.set(ctx, told + 1);
      if (told === MAX_LOG_LINES_PER_CALL)
        ctx.log?.('warning', `[${server}] more log lines than ${MAX_LOG_LINES_PER_CALL} in one call; the rest are dropped`);
      else ctx.log?.(level, `[${server}] ${connection.redactor.text(text.slice(0, 10_000))}`);
    }
  }

  /** A server's sampling request, answered through the host's model when its policy says yes. */
  sampled(server: string, params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult> {
    const options = this.settings.sampling as McpSamplingOptions;
    const connection = this.connections.get(server);
    if (!connection) return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, `MCP server ${server} is not connected`));
    let meter = this.samplingUse.get(connection);
    if (!meter) {
      meter = new SamplingMeter(options.clock);
      this.samplingUse.set(connection, meter);
    }
    return answerSampling(server, params, options, meter, this.settings.waitFor, signal);
  }

  /** A server's elicitation, asked as a pending request of this library while the call waits. */
  async elicited(server: string, params: ElicitParams): Promise<ElicitationReply> {
    const waitFor = this.settings.waitFor as WaitFor;
    const redactor = this.connections.get(server)?.redactor;
    if (redactor) params = redactor.deep(params);
    const request: PendingRequest = {
      id: newPendingId(),
      kind: params.mode === 'url' ? 'authorization' : 'input',
      prompt: params.message,
      data: { server, ...(params.requestedSchema !== undefined ? { schema: params.requestedSchema } : {}) },
    };
    if (params.mode === 'url' && typeof params.url === 'string') request.url = params.url;
    try {
      this.settings.onPending?.(request, server);
    } catch {
      // a listener that throws does not decide the answer
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.settings.elicitationTimeoutMs);
    });
    try {
      const answer: Answer | undefined = await Promise.race([Promise.resolve(waitFor(request)), timedOut]);
      if (!answer || answer.id !== request.id) return { action: 'decline' };
      const reply = replyOf(answer);
      return reply.action === 'accept' ? { action: 'accept', content: withDefaults(params.requestedSchema, reply.content ?? {}) } : reply;
    } catch {
      return { action: 'decline' };
    } finally {
      clearTimeout(timer);
    }
  }

  private async callRedacted(call: OutgoingCall): Promise<ToolResult> {
    const { connection, tool, ctx } = call;
    const server = connection.name;
    const callCtx: ToolContext = ctx ?? {};
    connection.active.add(callCtx);
    try {
      try {
        return await this.callOnce(call);
      } catch (error) {
        if (connection.spec.transport === 'stdio') throw error;
        if (isDroppedSession(error)) {
          // The server forgot the session (it restarted) and said so: nothing ran, so open a new one and ask again once.
          await this.connections.reconnect(connection);
          return await this.callOnce(call);
        }
        if (!isConnectionLost(error)) throw error;
        await this.connections.reconnect(connection);
        // The request may have reached the server before the connection broke: only a tool that
        // says repeating it changes nothing is asked again.
        if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) {
          for (let attempt = 1; ; attempt++) {
            try {
              return await this.callOnce(call);
            } catch (again) {
              if (attempt >= RECONNECT_ATTEMPTS || !isConnectionLost(again)) throw again;
            }
          }
        }
        return failure(
          `MCP server ${server}, tool ${tool.name}: the connection was lost during the call (${said(error)}), so it may or may not have run; ` +
            'a new session is open for the next call',
        );
      }
    } catch (error) {
      if (error instanceof UnauthorizedError) return this.logins.pending(server, tool.name, this.logins.required(server, error));
      // A reconnect (the session was lost) that finds the login gone.
      if (error instanceof McpLoginRequiredError) return this.logins.pending(server, tool.name, error);
      if (ctx?.signal?.aborted) return failure(`${server}_${tool.name} cancelled`);
      return failure(`MCP server ${server}, tool ${tool.name}: ${said(error)}`);
    } finally {
      connection.active.delete(callCtx);
    }
  }

  private async callOnce(call: OutgoingCall): Promise<ToolResult> {
    const { connection, tool } = call;
    const tracing = this.telemetry.active();
    if (!tracing) return this.request(call, undefined);
    const sessionId = (connection.client.transport as { sessionId?: string } | undefined)?.sessionId;
    const site: McpCallSite = { transport: connection.spec.transport === 'stdio' ? 'pipe' : 'tcp' };
    if (sessionId !== undefined) site.sessionId = sessionId;
    const { span, meta } = startMcpClientCall(tracing, tool.name, site);
    let result: ToolResult;
    try {
      result = await tracing.within(tracing.contextOf(span), () => this.request(call, meta));
    } catch (error) {
      endMcpCall(tracing, span, { thrown: errorTypeOf(error) });
      throw error;
    }
    endMcpCall(tracing, span, result);
    return result;
  }

  /**
   * Sends the call and, while a 2026-07-28 server answers `input_required`, answers it: its
   * sampling requests through the host's model, its elicitations through `waitFor` in process,
   * or, without `waitFor`, by suspending the call (the replay sends the retry). A retry is a
   * new request with the same arguments, the responses and the state echoed as it came.
   */
  private async request(call: OutgoingCall, meta: Record<string, string> | undefined): Promise<ToolResult> {
    const { connection, tool: definition, args, ctx, retry } = call;
    const tool = definition.name;
    const progress = ctx?.progress;
    const modern = connection.client.getProtocolEra() === 'modern';
    const tasks = this.tasks.declares(connection);
    // A 2026-07-28 server may ask for input in its answer, which this client can always take (by
    // suspending), and sends log lines only when the request asks (as a 2025-11-25 session sends every one).
    const capabilities = modern ? { [CLIENT_CAPABILITIES]: this.capabilities(tasks), ...logLevelFor(ctx) } : {};
    // The replay of a call suspended on its task's input: the answers go to the task, the call is not sent again.
    // The extension is declared whatever the options say now: the server refuses tasks/* to a client that does not.
    if (retry?.taskId !== undefined)
      return this.tasks.resume(
        this.taskSite(connection, tool, ctx, { [CLIENT_CAPABILITIES]: this.capabilities(true) }, true),
        retry.taskId,
        retry.inputResponses,
        retry.answered ?? [],
      );
    const catcher = tasks ? this.tasks.catcher(connection) : undefined;
    let inputs = retry;
    for (let round = 1; ; round++) {
      // The same key on every attempt of the call (a replay, a takeover), for the server to deduplicate on.
      const callMeta = { ...meta, ...capabilities, ...idempotencyMeta(ctx) };
      const params = {
        name: tool,
        arguments: args,
        ...(Object.keys(callMeta).length > 0 ? { _meta: callMeta } : {}),
        ...(inputs ? { inputResponses: inputs.inputResponses } : {}),
        ...(inputs?.requestState !== undefined ? { requestState: inputs.requestState } : {}),
      };
      const result: unknown = await connection.client.callTool(params, {
        timeout: this.connections.timeoutOf(connection),
        resetTimeoutOnProgress: true,
        allowInputRequired: true,
        // The listed definition, for the SDK's output-schema check and Mcp-Param headers (SEP-2243).
        toolDefinition: definition,
        ...(ctx?.signal ? { signal: ctx.signal } : {}),
        ...(progress
          ? {
              onprogress: (update: { progress: number; total?: number; message?: string }) =>
                progress(update.progress, update.total, update.message),
            }
          : {}),
      });
      const task = catcher?.taken(result);
      if (task) return this.tasks.follow(this.taskSite(connection, tool, ctx, capabilities, round > 1 || retry !== undefined), task);
      if (!isInputRequired(result))
        return fromMcpResult(result as { content?: unknown; isError?: unknown; structuredContent?: unknown }, this.settings.maxOutputChars);
      if (round > MAX_INPUT_ROUNDS)
        return failure(`MCP server ${connection.name}, tool ${tool}: still asking for input after ${MAX_INPUT_ROUNDS} rounds`);
      const next = await this.inputFor(connection, tool, result, ctx, round > 1 || retry !== undefined);
      if ('result' in next) return next.result;
      inputs = next.retry;
    }
  }

  /** The capabilities a 2026-07-28 request declares: elicitation always, sampling with the option, tasks when followed. */
  private capabilities(tasks: boolean): Record<string, unknown> {
    return {
      elicitation: { form: {}, url: {} },
      ...(this.settings.sampling ? { sampling: {} } : {}),
      ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    };
  }

  /** Where a call's task is followed: its requests carry the call's capabilities, and what it asks is answered as MRTR's is. */
  private taskSite(
    connection: Connection,
    tool: string,
    ctx: ToolContext | undefined,
    meta: Record<string, unknown>,
    followUp: boolean,
  ): TaskSite {
    return {
      connection,
      tool,
      ctx,
      meta,
      answer: async (asked, task) => {
        const next = await this.inputFor(connection, tool, asked, ctx, followUp || task.answered.length > 0, task);
        return 'result' in next ? next : { inputResponses: next.retry.inputResponses };
      },
    };
  }

  /** Answers what a server's `input_required` asks: at once where nobody is needed, else by asking or suspending. */
  private async inputFor(
    connection: Connection,
    tool: string,
    asked: InputRequired,
    ctx: ToolContext | undefined,
    followUp: boolean,
    /** The remote task that asks, kept with a suspension so its replay answers the task. */
    task?: { taskId: string; answered: string[] },
  ): Promise<{ retry: Retry } | { result: ToolResult }> {
    const server = connection.name;
    const { elicitations, others } = splitInputRequests(connection.redactor.deep(asked.inputRequests));
    const responses: Record<string, unknown> = {};
    for (const { key, method, params } of others) {
      if (method !== 'sampling/createMessage' || !this.settings.sampling)
        return {
          result: failure(
            `MCP server ${server}, tool ${tool}: it asked for ${method.slice(0, 100) || 'an unknown request'}, which this client did not declare`,
          ),
        };
      try {
        responses[key] = await this.sampled(server, params as CreateMessageRequest['params'], ctx?.signal ?? new AbortController().signal);
      } catch (error) {
        return { result: failure(`MCP server ${server}, tool ${tool}: its sampling request was refused: ${said(error)}`) };
      }
    }
    const state = asked.requestState !== undefined ? { requestState: asked.requestState } : {};
    if (Object.keys(elicitations).length === 0) return { retry: { inputResponses: responses, ...state } };
    if (!this.settings.waitFor) return { result: suspendFor({ server, ...state, ...task, asked: elicitations, responses }, followUp) };
    for (const [key, { params }] of Object.entries(elicitations)) {
      const reply = await this.elicited(server, params as unknown as ElicitParams);
      responses[key] = params.mode === 'url' && reply.action === 'accept' ? { action: 'accept' } : reply;
    }
    return { retry: { inputResponses: responses, ...state } };
  }
}
