import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolRequest,
  type JSONRPCMessage,
  type RequestId,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import { InvalidArgumentError } from '../../errors';
import { messageOf } from '../../errors/message';
import { failure, pendingOf } from '../../results/helpers';
import { answerAs } from '../../runner/answer-as';
import type { ToolResult } from '../../results/wire';
import type { Principal } from '../../suspension/audit';
import { ResumeCoordinator } from '../../suspension/coordinator';
import { executeOnce } from '../../suspension/keyed';
import { incomingMcpKey } from '../idempotency';
import { Redactor } from '../../suspension/redact';
import type { ToolLogLevel } from '../../toolkit/context';
import { Toolkit } from '../../toolkit/toolkit';
import { answerOf, answerProblem, elicitationFor, elicitationPrincipal, type ElicitationSupport } from './elicitation';
import type { McpCatalog } from './catalog/catalog';
import { McpCatalogError } from './errors';
import { outOfBandResult, toMcpResult, type McpCallResult } from './results';
import { samplerFor } from './sampling';
import { SkillShelf } from './skills';
import { serveResources, serveSkillMethods, serverSetup, type Refusing, type Served } from './era-handlers';
import { progressFor, toolListing } from './listing';
import { isCardTool, rendersApps, serveCardTool } from './approval-card';
import type { McpCallInfo, McpServerOptions, McpToolContext, McpToolHost } from './types';
import { endMcpCall, startMcpServerCall, type McpCallSite } from '../../telemetry/mcp';
import { errorTypeOf, Telemetry } from '../../telemetry/telemetry';

const DEFAULT_ELICITATION_TIMEOUT_MS = 600_000;
const LOG_RANK: Record<ToolLogLevel, number> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };

/** The not-found code of `resources/read` at 2025-11-25 (the MCP spec's `-32002`; 2026-07-28 retired it for `-32602`). */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

/**
 * The SDK's server for one 2025-11-25 session (or stdio connection), keeping the spec's
 * `-32002` for an unknown resource: the SDK (2.4) writes every `-32002` as `-32602`, the code
 * 2026-07-28 standardized, on both eras; a 2025-11-25 client of this server has always been
 * told `-32002`, so the requests answered so are put back as they were.
 */
class SessionServer extends Server {
  /** Requests answered "no such resource", until their error is sent. */
  readonly notFound = new Set<RequestId>();

  override async connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(this.restoreNotFound(message), options);
    await super.connect(transport);
  }

  private restoreNotFound(message: JSONRPCMessage): JSONRPCMessage {
    if (!('error' in message) || message.id === undefined || !this.notFound.delete(message.id)) return message;
    // The SDK's own mapping of the code thrown: anything else is left as the SDK wrote it.
    return message.error.code === INVALID_PARAMS ? { ...message, error: { ...message.error, code: RESOURCE_NOT_FOUND } } : message;
  }
}

/** The coordinator a host's calls go through; a bare Toolkit gets one with an in-memory store. */
export function coordinatorOf(host: McpToolHost): ResumeCoordinator {
  if (host instanceof ResumeCoordinator) return host;
  if (host instanceof Toolkit) return new ResumeCoordinator({ toolkit: host });
  throw new InvalidArgumentError('serveMcp needs a Toolkit or a ResumeCoordinator');
}

/**
 * One SDK server for the 2025-11-25 era (one per session over HTTP, one per connection over
 * stdio) whose tools are the coordinator's toolkit's; suspensions are asked by elicitation.
 */
export function createMcpServer(coordinator: ResumeCoordinator, options: McpServerOptions = {}, principal?: Principal): Server {
  const catalog = options.catalog;
  const shelf = options.skills ? new SkillShelf(options.skills) : undefined;
  const served: Served = { catalog, shelf, card: options.approvalCard === true };
  const card = served.card;
  const server = new SessionServer(...serverSetup(options, served, {}));
  // An unknown resource is -32002 at 2025-11-25, as the MCP spec names it; bad input -32602.
  const refusing: Refusing = (work, read) => asProtocolError(read ? notFoundOf(server, read.ctx) : undefined, work);
  if (catalog || shelf || card) serveResources(server, served, refusing, catalogContext);
  if (catalog) serveCatalog(server, catalog, refusing);
  if (shelf) serveSkillMethods(server, shelf, refusing, {});
  const stopTools = coordinator.toolkit.onChange(() => void server.sendToolListChanged().catch(() => undefined));
  const previousClose = server.onclose;
  server.onclose = () => {
    stopTools();
    previousClose?.();
  };
  const elicitationTimeoutMs = options.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS;
  const telemetry = new Telemetry(options.telemetry, 'serveMcp');
  let minLevel = 0;
  // Our own level, in place of the SDK's: one per session, and no level set means every line is sent.
  server.setRequestHandler('logging/setLevel', (request) => {
    minLevel = LOG_RANK[request.params.level];
    return {};
  });
  server.setRequestHandler('tools/list', () => ({ tools: toolListing(coordinator, card) }));
  server.setRequestHandler('tools/call', async (request, ctx) => ({ ...(await serveCall(request, ctx)) }));
  const serveCall = async (request: CallToolRequest, ctx: ServerContext): Promise<McpCallResult> => {
    if (card && isCardTool(request.params.name)) {
      const by = principal ?? elicitationPrincipal({ clientId: ctx.http?.authInfo?.clientId, sessionId: ctx.sessionId });
      const mcp: McpCallInfo = { protocol: 'legacy', ...(principal ? { principal: { ...principal } } : {}) };
      return serveCardTool(coordinator, request.params.name, request.params.arguments ?? {}, by, { signal: ctx.mcpReq.signal, mcp });
    }
    const log = (level: ToolLogLevel, message: string, data?: unknown): void => {
      if ((LOG_RANK[level] ?? 0) < minLevel) return;
      const payload = data === undefined ? message : { message, data };
      ctx.mcpReq
        .notify({ method: 'notifications/message', params: { level, logger: request.params.name, data: payload } })
        .catch(() => undefined);
    };
    const call = () => callTool(server, coordinator, request, ctx, log, elicitationTimeoutMs, principal, options);
    const tracing = telemetry.active();
    if (!tracing) return call();
    const site: McpCallSite = { transport: ctx.sessionId === undefined ? 'pipe' : 'tcp', requestId: ctx.mcpReq.id };
    if (ctx.sessionId !== undefined) site.sessionId = ctx.sessionId;
    const { span, context } = startMcpServerCall(tracing, request.params.name, site, request.params._meta);
    try {
      const result = await tracing.within(context, call);
      endMcpCall(tracing, span, { output: '', isError: result.isError === true });
      return result;
    } catch (error) {
      endMcpCall(tracing, span, { thrown: errorTypeOf(error) });
      throw error;
    }
  };
  return server;
}

async function callTool(
  server: Server,
  coordinator: ResumeCoordinator,
  request: CallToolRequest,
  extra: ServerContext,
  log: McpToolContext['log'],
  elicitationTimeoutMs: number,
  principal: Principal | undefined,
  options: McpServerOptions,
): Promise<McpCallResult> {
  const name = request.params.name;
  const tool = coordinator.toolkit.get(name);
  if (!tool) return { content: [{ type: 'text', text: `unknown tool: ${name}` }], isError: true };
  const mcp: McpCallInfo = { protocol: 'legacy' };
  if (extra.sessionId !== undefined) mcp.sessionId = extra.sessionId;
  const closeStream = extra.http?.closeSSE;
  if (closeStream) mcp.closeStream = closeStream;
  if (principal) mcp.principal = { ...principal };
  const signal = extra.mcpReq.signal;
  const ctx: McpToolContext = { signal, log, mcp };
  // Asking the client's model is offered only to a client that declared it can be asked.
  if (server.getClientCapabilities()?.sampling) ctx.sample = samplerFor(server, extra, options.sampling);
  const progress = progressFor(request.params._meta?.progressToken, (notification) => extra.mcpReq.notify(notification));
  if (progress) ctx.progress = progress;
  // Who calls, and so who answers what is elicited from this client: the principal the host's
  // authorize hook named, else the MCP client or session (never a name the client gives itself).
  const by = principal ?? elicitationPrincipal({ clientId: extra.http?.authInfo?.clientId, sessionId: extra.sessionId });
  let result: ToolResult;
  try {
    // The call is made on the caller's behalf: with an answer policy, they may not approve it themselves.
    // A repeat of a call by its idempotency key (another connection, another process) runs nothing: it gets the first outcome.
    result = await executeOnce(coordinator, 'mcp', name, request.params.arguments ?? {}, ctx, {
      principal: by,
      key: incomingMcpKey(request.params._meta),
      ...(options.idempotencyRetentionMs !== undefined ? { retentionMs: options.idempotencyRetentionMs } : {}),
      ...(options.idempotencyLeaseMs !== undefined ? { leaseMs: options.idempotencyLeaseMs } : {}),
    });
    const redactor = new Redactor(coordinator.toolkit);
    for (let pending = pendingOf(result); pending; pending = pendingOf(result)) {
      // What the client and its user are shown passes the one redaction path (docs/deploying.md, "What is redacted where");
      // the url a person must open and the form's schema are kept as asked.
      const shown = redactor.request(name, request.params.arguments ?? {}, pending);
      const capability = server.getClientCapabilities()?.elicitation;
      const support: ElicitationSupport = { form: capability?.form !== undefined, url: capability?.url !== undefined };
      if (!capability) return outOfBandResult(shown, 'the client did not declare the elicitation capability');
      // A host that renders MCP Apps shows the card this tool names (a declared approval), which answers through the card's tools.
      if (options.approvalCard && tool.approval !== undefined && pending.kind === 'approval' && rendersApps(server.getClientCapabilities()))
        return outOfBandResult(shown, 'the approval card answers it');
      // A request this caller may not answer is not put to it: it stays recorded for someone who may (the inbox).
      if (coordinator.hasPolicy) {
        const stored = await coordinator.get(pending.id);
        const decision = stored ? await coordinator.decide(by, stored, { id: pending.id, ok: true }) : 'allow';
        if (decision !== 'allow') return outOfBandResult(shown, `this client may not answer it (${decision.deny})`);
      }
      const plan = elicitationFor({ ...pending, prompt: shown.prompt }, support);
      if ('outOfBand' in plan) return outOfBandResult(shown, plan.outOfBand);
      let reply;
      try {
        // formSchemaOf checked the fields against what MCP forms allow; the SDK's type lists each shape.
        const params = plan.elicit as Parameters<Server['elicitInput']>[0];
        // Tied to the call (`relatedRequestId`), so over HTTP it goes on the call's own stream.
        reply = await server.elicitInput(params, { signal, timeout: elicitationTimeoutMs, relatedRequestId: extra.mcpReq.id });
      } catch (error) {
        if (signal.aborted) return { content: [{ type: 'text', text: `${name} cancelled` }], isError: true };
        return outOfBandResult(shown, `the elicitation failed: ${messageOf(error)}`);
      }
      const refused = answerProblem(plan.elicit, reply);
      if (refused) return outOfBandResult(shown, `the answer was refused: ${refused}`);
      // Answered as a principal, as the inbox and the CLI answer (docs/design.md, "the path of an answer").
      const answered = await answerAs(coordinator, answerOf(pending, reply), { by, context: ctx, signal });
      result = answered.outcome ?? failure(`suspension ${pending.id} is ${answered.call.status}`);
    }
  } catch (error) {
    return { content: [{ type: 'text', text: messageOf(error) }], isError: true };
  }
  return toMcpResult(result, tool.outputSchema);
}

/**
 * What the catalog adds at 2025-11-25 to what {@link serveResources} serves (on one SDK server,
 * one per session over HTTP): `prompts/get`, and subscriptions kept per session. The session is
 * told when a list changes or a resource it subscribed to is updated, until it closes.
 */
function serveCatalog(server: SessionServer, catalog: McpCatalog, refusing: Refusing): void {
  const subscribed = new Set<string>();
  server.setRequestHandler('prompts/get', (request, ctx) =>
    refusing(async () => ({ ...(await catalog.getPrompt(request.params.name, request.params.arguments ?? {}, catalogContext(ctx))) })),
  );
  server.setRequestHandler('resources/subscribe', (request) => {
    if (subscribed.size >= MAX_SUBSCRIPTIONS && !subscribed.has(request.params.uri))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `at most ${MAX_SUBSCRIPTIONS} resources may be subscribed to in one session`,
      );
    subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  const stop = catalog.onChange((change) => {
    const sent =
      'updated' in change
        ? subscribed.has(change.updated)
          ? server.sendResourceUpdated({ uri: change.updated })
          : undefined
        : change.list === 'resources'
          ? server.sendResourceListChanged()
          : server.sendPromptListChanged();
    // Not yet initialized, or closed: there is nobody to tell.
    sent?.catch(() => undefined);
  });
  const previous = server.onclose;
  server.onclose = () => {
    stop();
    previous?.();
  };
}

/** Most resources one session may subscribe to: a client cannot grow the server's memory without bound. */
const MAX_SUBSCRIPTIONS = 1000;

function catalogContext(ctx: ServerContext): { signal: AbortSignal; mcp: { sessionId?: string } } {
  return { signal: ctx.mcpReq.signal, mcp: ctx.sessionId !== undefined ? { sessionId: ctx.sessionId } : {} };
}

/** Marks the request as answered "no such resource", so its error goes out as `-32002`. */
function notFoundOf(server: SessionServer, ctx: ServerContext): () => void {
  return () => void server.notFound.add(ctx.mcpReq.id);
}

/**
 * The catalog's refusals as the protocol's errors: an unknown resource is -32002, as the MCP
 * spec (2025-11-25) names it, where `notFound` is given; bad input -32602.
 */
async function asProtocolError<T>(notFound: (() => void) | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof McpCatalogError) {
      if (error.reason === 'not-found' && notFound) {
        notFound();
        throw new ProtocolError(RESOURCE_NOT_FOUND, error.message);
      }
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    }
    throw new ProtocolError(ProtocolErrorCode.InternalError, messageOf(error));
  }
}
