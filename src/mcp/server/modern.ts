import { incomingMcpKey } from '../idempotency';
import {
  createMcpHandler,
  ProtocolError,
  Server,
  type AuthInfo,
  type CallToolRequest,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { messageOf } from '../../errors/message';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { ToolLogLevel } from '../../toolkit/context';
import type { McpCatalog } from './catalog/catalog';
import { McpCatalogError, McpInputResponseError, McpRequestStateError, McpTaskNotFoundError } from './errors';
import { AnswerRefusedError } from '../../errors';
import { elicitationPrincipal } from './elicitation';
import { inputRequired, serveModernCall, type ModernCall, type MrtrSettings } from './mrtr';
import { requestDigest } from './request-state';
import { cancelTask, takesTasks, taskOf, TASKS_EXTENSION, updateTask, type TaskView } from './tasks';
import { TaskRuns } from './task-runs';
import { MISSING_CAPABILITY } from './task-records';
import { DEFAULT_KEY_LEASE_MS } from '../../suspension/keyed';
import { progressFor, toolListing } from './listing';
import { SkillShelf } from './skills';
import { isCardTool, serveCardTool } from './approval-card';
import type { McpCallInfo, McpServerOptions, McpToolContext } from './types';
import { PARAMS, serveResources, serveSkillMethods, serverSetup, type Refusing, type Served } from './era-handlers';
import { endMcpCall, startMcpServerCall } from '../../telemetry/mcp';
import { errorTypeOf, Telemetry } from '../../telemetry/telemetry';

const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** How long a task of a call that ran here is kept after its last change, and how many are kept at once. */
const TASK_KEEP_MS = 3_600_000;
const MAX_TASK_RUNS = 1000;

/** Where serveMcp keeps the principal `authorize` named, on the SDK's pass-through `authInfo`. */
export const PRINCIPAL_EXTRA = 'toolnexus/principal';

/**
 * What every 2026-07-28 request served by one server (an HTTP endpoint, a stdio connection)
 * shares: its MRTR settings, its skills (published, read and digested, once) and the tasks of
 * calls still running when they had to answer, whichever request asks.
 */
export interface ModernServing {
  mrtr: MrtrSettings;
  shelf?: SkillShelf;
  runs: TaskRuns;
  /** How requests arrive, for telemetry: `tcp` over HTTP, `pipe` over stdio. */
  transport: 'tcp' | 'pipe';
}

/** The {@link ModernServing} of one server. */
export function modernServing(
  coordinator: ResumeCoordinator,
  options: McpServerOptions,
  mrtr: MrtrSettings,
  transport: 'tcp' | 'pipe',
): ModernServing {
  // The tasks of calls still running when they had to answer, whichever request asks about them.
  // Kept in the coordinator's store when it keeps them, so every process on it answers for them;
  // held by a lease as long as a served call's idempotency key is (docs/mcp.md, "Tasks").
  const runs = new TaskRuns(
    coordinator,
    {
      afterMs: mrtr.taskAfterMs,
      keepMs: TASK_KEEP_MS,
      maxTasks: MAX_TASK_RUNS,
      leaseMs: mrtr.idempotencyLeaseMs ?? DEFAULT_KEY_LEASE_MS,
      clock: mrtr.clock,
    },
    (name) => {
      const tool = coordinator.toolkit.get(name);
      return tool ? (given: ModernCall) => serveModernCall(coordinator, given, mrtr, tool.outputSchema) : undefined;
    },
  );
  return { mrtr, runs, transport, ...(options.skills ? { shelf: new SkillShelf(options.skills) } : {}) };
}

/**
 * The 2026-07-28 half of serveMcp over HTTP (docs/mcp.md, "Two eras"): the SDK's per-request
 * handler (`server/discover`, the `_meta` envelope, the `Mcp-Method`/`Mcp-Name` header checks,
 * `subscriptions/listen`, cache hints) around one fresh low-level server per request whose
 * tools are the coordinator's. 2025-era requests never reach it (`legacy: 'reject'`): serveMcp
 * routes them to its sessions first. Changes of the toolkit and the catalog are published to
 * the open `subscriptions/listen` streams; `close` stops that and the handler.
 */
export function modernHandler(
  coordinator: ResumeCoordinator,
  options: McpServerOptions,
  mrtr: MrtrSettings,
  maxRequestBodySize: number,
): { handler: McpHttpHandler; close(): Promise<void> } {
  const serving = modernServing(coordinator, options, mrtr, 'tcp');
  const handler = createMcpHandler(({ authInfo }) => modernServer(coordinator, options, serving, principalOfAuth(authInfo)), {
    legacy: 'reject',
    maxRequestBodySize,
  });
  const stops = forwardChanges(coordinator, options.catalog, handler.notify);
  return {
    handler,
    async close() {
      for (const stop of stops) stop();
      await handler.close();
    },
  };
}

/** Where the toolkit's and the catalog's changes are told: the HTTP handler's `notify`, or a stdio connection's server. */
export interface ChangeListener {
  toolsChanged(): void;
  resourceUpdated(uri: string): void;
  resourcesChanged(): void;
  promptsChanged(): void;
}

/** Tells `to` of each change of the toolkit and the catalog, until the returned stops are called. */
export function forwardChanges(coordinator: ResumeCoordinator, catalog: McpCatalog | undefined, to: ChangeListener): Array<() => void> {
  const stops = [coordinator.toolkit.onChange(() => to.toolsChanged())];
  if (catalog) {
    stops.push(
      catalog.onChange((change) => {
        if ('updated' in change) to.resourceUpdated(change.updated);
        else if (change.list === 'resources') to.resourcesChanged();
        else to.promptsChanged();
      }),
    );
  }
  return stops;
}

/** The SDK's `authInfo` carrying the principal serveMcp's `authorize` named (never read from the request by the SDK). */
export function authInfoOf(principal: Principal): AuthInfo {
  return { token: '', clientId: principal.id, scopes: [], extra: { [PRINCIPAL_EXTRA]: { ...principal } } };
}

function principalOfAuth(authInfo: AuthInfo | undefined): Principal | undefined {
  const principal = authInfo?.extra?.[PRINCIPAL_EXTRA] as Principal | undefined;
  return principal && typeof principal.id === 'string' ? principal : undefined;
}

/**
 * One low-level server of the 2026-07-28 era whose tools are the coordinator's: one per request
 * over HTTP (its principal the one `authorize` named), one per connection over stdio.
 */
export function modernServer(
  coordinator: ResumeCoordinator,
  options: McpServerOptions,
  serving: ModernServing,
  principal: Principal | undefined,
): Server {
  const { mrtr, shelf, runs } = serving;
  const served: Served = { catalog: options.catalog, shelf, card: options.approvalCard === true };
  const { catalog, card } = served;
  const server = new Server(...serverSetup(options, served, { [TASKS_EXTENSION]: {} }));
  server.setRequestHandler('tools/list', () => ({ tools: toolListing(coordinator, card) }));
  const telemetry = new Telemetry(options.telemetry, 'serveMcp');
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tracing = telemetry.active();
    const call = () => modernToolCall(request, ctx);
    if (!tracing) return call();
    // The same server span as at 2025-11-25, parented to the caller's traceparent in `_meta`; no MCP session here.
    const { span, context } = startMcpServerCall(
      tracing,
      request.params.name,
      { transport: serving.transport, requestId: ctx.mcpReq.id },
      request.params._meta,
    );
    try {
      const result = await tracing.within(context, call);
      endMcpCall(tracing, span, { output: '', isError: (result as { isError?: unknown }).isError === true });
      return result;
    } catch (error) {
      endMcpCall(tracing, span, { thrown: errorTypeOf(error) });
      throw error;
    }
  });
  const modernToolCall = async (request: CallToolRequest, ctx: ServerContext) => {
    const name = request.params.name;
    if (card && isCardTool(name))
      return (await serveCardTool(
        coordinator,
        name,
        request.params.arguments ?? {},
        principal ?? elicitationPrincipal({}),
        toolContext(ctx, name, principal),
      )) as never;
    const tool = coordinator.toolkit.get(name);
    if (!tool) return { content: [{ type: 'text' as const, text: `unknown tool: ${name}` }], isError: true };
    const by = principal ?? elicitationPrincipal({});
    const raw = ctx.mcpReq.requestState();
    const call = {
      name,
      args: request.params.arguments ?? {},
      by,
      support: supportOf(ctx),
      ctx: toolContext(ctx, name, principal),
      ...(raw !== undefined ? { requestState: raw } : {}),
      ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
      ...keyOf(ctx.mcpReq._meta),
    };
    const support = mrtr.taskSupport(name);
    const tasks = takesTasks(call.ctx.mcp.clientCapabilities);
    if (support === 'always' && !tasks)
      throw new ProtocolError(MISSING_CAPABILITY, `${name} runs as a task: declare the ${TASKS_EXTENSION} extension`, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    try {
      const serve = (given: ModernCall) => serveModernCall(coordinator, given, mrtr, tool.outputSchema);
      // For a client that takes tasks, a call still running after `taskAfterMs` answers a `working` task.
      const result = tasks && support !== 'never' ? await runs.serve(call, serve) : await serve(call);
      if (!('resultType' in result) || result.resultType === 'task' || result.suspension === undefined) return result as never;
      const { suspension, ...roundTrip } = result;
      // A suspended call for a client that takes tasks: the task is the suspension, already recorded.
      // `content: []` because the SDK (2.4.0) checks a tools/call result as a CallToolResult and
      // has no CreateTaskResult yet; the task's fields pass through it unchanged.
      if (!tasks || support === 'never') return roundTrip as never;
      return { resultType: 'task', content: [], ...(await taskOf(coordinator, suspension, taskView(call, mrtr))) };
    } catch (error) {
      if (error instanceof McpRequestStateError || error instanceof McpInputResponseError)
        throw new ProtocolError(INVALID_PARAMS, error.message, { reason: error.code });
      return { content: [{ type: 'text' as const, text: messageOf(error) }], isError: true };
    }
  };
  serveTasks(server, coordinator, mrtr, principal, runs);
  // An unknown resource is -32602 at 2026-07-28 (the -32002 of 2025-11-25 was retired), naming its URI.
  const refusing: Refusing = (work, read) => asProtocolError(read ? { uri: read.uri } : undefined, work);
  if (catalog || shelf || card) serveResources(server, served, refusing, (ctx) => ({ signal: ctx.mcpReq.signal, mcp: {} }));
  if (catalog) servePrompts(server, catalog, mrtr, principal ?? elicitationPrincipal({}));
  // The cache fields the revision requires: a skill may change when the server loads its skills again.
  if (shelf) serveSkillMethods(server, shelf, refusing, { ttlMs: 0, cacheScope: 'private' });
  return server;
}

/**
 * `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663): a suspension's task from the store, by
 * any process; the task of a call that was still running after `taskAfterMs` from `runs`: from the
 * store too when it keeps such tasks, else this process's.
 */
function serveTasks(
  server: Server,
  coordinator: ResumeCoordinator,
  mrtr: MrtrSettings,
  principal: Principal | undefined,
  runs: TaskRuns,
): void {
  const view = (ctx: ServerContext): TaskView => {
    const by = principal ?? elicitationPrincipal({});
    return taskView({ by, support: supportOf(ctx), ctx: toolContext(ctx, 'tasks', principal) }, mrtr);
  };
  const guarded = async <T>(ctx: ServerContext, work: () => Promise<T>): Promise<T> => {
    // The extension's methods are for clients that declared it, on this very request (stateless).
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    if (!takesTasks(envelope?.[CLIENT_CAPABILITIES] as Record<string, unknown> | undefined))
      throw new ProtocolError(MISSING_CAPABILITY, `declare the ${TASKS_EXTENSION} extension to use tasks`, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    try {
      return await work();
    } catch (error) {
      if (error instanceof McpTaskNotFoundError || error instanceof McpInputResponseError || error instanceof AnswerRefusedError)
        throw new ProtocolError(INVALID_PARAMS, error.message);
      throw error;
    }
  };
  server.setRequestHandler('tasks/get', { params: PARAMS }, (params, ctx) =>
    guarded(ctx, async () => {
      const id = params.taskId;
      return { ...(runs.has(id) ? await runs.get(id, view(ctx)) : await taskOf(coordinator, id, view(ctx))) } as never;
    }),
  );
  server.setRequestHandler('tasks/update', { params: PARAMS }, (params, ctx) =>
    guarded(ctx, async () => {
      // The SDK lifts `inputResponses` out of the params (as for tools/call) onto the context.
      const responses = ctx.mcpReq.inputResponses ?? params.inputResponses;
      const id = params.taskId;
      if (runs.has(id)) await runs.update(id, responses, view(ctx));
      else await updateTask(coordinator, id, responses, view(ctx));
      return {} as never;
    }),
  );
  server.setRequestHandler('tasks/cancel', { params: PARAMS }, (params, ctx) =>
    guarded(ctx, async () => {
      const id = params.taskId;
      if (runs.has(id)) await runs.cancel(id, view(ctx));
      else await cancelTask(coordinator, id, view(ctx));
      return {} as never;
    }),
  );
}

function taskView(call: Pick<ModernCall, 'by' | 'support' | 'ctx'>, mrtr: MrtrSettings): TaskView {
  return { by: call.by, support: call.support, ctx: call.ctx, settings: mrtr };
}

/** What the client declared it can be asked, from the request's own `_meta` envelope (2026-07-28 is stateless). */
function supportOf(ctx: ServerContext): { form: boolean; url: boolean } {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const elicitation = (envelope?.[CLIENT_CAPABILITIES] as { elicitation?: { form?: unknown; url?: unknown } } | undefined)?.elicitation;
  if (!elicitation) return { form: false, url: false };
  // `elicitation: {}` declares form mode, as 2025-11-25 has it.
  const none = elicitation.form === undefined && elicitation.url === undefined;
  return { form: none || elicitation.form !== undefined, url: elicitation.url !== undefined };
}

/** The request's idempotency key as a {@link ModernCall} field (docs/mcp.md, "Idempotency keys"). */
function keyOf(meta: Record<string, unknown> | undefined): { key?: string } {
  const key = incomingMcpKey(meta);
  return key === undefined ? {} : { key };
}

function toolContext(ctx: ServerContext, name: string, principal: Principal | undefined): McpToolContext {
  const log = (level: ToolLogLevel, message: string, data?: unknown): void => {
    // Sent only when the request's envelope asked for logs at this level (the SDK filters).
    void ctx.mcpReq.log(level, data === undefined ? message : { message, data }, name).catch(() => undefined);
  };
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES] as Record<string, unknown> | undefined;
  const mcp: McpCallInfo = { protocol: 'modern' };
  if (principal) mcp.principal = { ...principal };
  if (capabilities) mcp.clientCapabilities = capabilities;
  if (ctx.mcpReq.inputResponses) mcp.inputResponses = ctx.mcpReq.inputResponses;
  const tool: McpToolContext = { signal: ctx.mcpReq.signal, log, mcp };
  const progress = progressFor(ctx.mcpReq._meta?.progressToken, (notification) => ctx.mcpReq.notify(notification));
  if (progress) tool.progress = progress;
  return tool;
}

/**
 * `prompts/get` at 2026-07-28: a prompt may ask an input round first (docs/mcp.md, "Input
 * rounds"), answered as a tool's is: `input_required` with its state sealed for this principal
 * and this prompt with these arguments, then the same request again with `inputResponses`.
 */
function servePrompts(server: Server, catalog: McpCatalog, mrtr: MrtrSettings, by: Principal): void {
  server.setRequestHandler('prompts/get', (request, ctx) =>
    asProtocolError(undefined, async () => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      const digest = requestDigest('prompts/get', name, args);
      const raw = ctx.mcpReq.requestState();
      const state = raw === undefined ? undefined : mrtr.sealer.open(raw, { now: mrtr.clock.now(), principal: by.id, digest });
      const mcp = {
        ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
        ...(state?.data !== undefined ? { requestState: state.data } : {}),
      };
      const answer = await catalog.promptOrRound(name, args, { signal: ctx.mcpReq.signal, mcp });
      return ('inputRound' in answer ? inputRequired(answer.inputRound, by, digest, mrtr) : answer) as never;
    }),
  );
}

/** The catalog's refusals as protocol errors; an unknown resource names its URI in `data` (SEP-2164). */
async function asProtocolError<T>(data: { uri: string } | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof McpCatalogError)
      throw new ProtocolError(INVALID_PARAMS, error.message, error.reason === 'not-found' ? data : undefined);
    if (error instanceof McpRequestStateError) throw new ProtocolError(INVALID_PARAMS, error.message, { reason: error.code });
    throw new ProtocolError(INTERNAL_ERROR, messageOf(error));
  }
}
