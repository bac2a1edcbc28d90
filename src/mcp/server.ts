import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  type CallToolRequest,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import { failure, pendingOf } from '../results/helpers';
import { answerAs } from '../runner/answer-as';
import type { ToolResult } from '../results/wire';
import type { Principal } from '../suspension/audit';
import { ResumeCoordinator } from '../suspension/coordinator';
import type { ToolLogLevel } from '../toolkit/context';
import { Toolkit } from '../toolkit/toolkit';
import { answerOf, answerProblem, elicitationFor, elicitationPrincipal, type ElicitationSupport } from './elicitation';
import { outOfBandResult, toMcpResult, type McpCallResult } from './results';
import type { McpCallInfo, McpServerOptions, McpToolContext, McpToolHost } from './types';
import { endMcpCall, startMcpServerCall, type McpCallSite } from '../telemetry/mcp';
import { errorTypeOf, Telemetry } from '../telemetry/telemetry';

const DEFAULT_ELICITATION_TIMEOUT_MS = 600_000;
const LOG_RANK: Record<ToolLogLevel, number> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The coordinator a host's calls go through; a bare Toolkit gets one with an in-memory store. */
export function coordinatorOf(host: McpToolHost): ResumeCoordinator {
  if (host instanceof ResumeCoordinator) return host;
  if (host instanceof Toolkit) return new ResumeCoordinator({ toolkit: host });
  throw new InvalidArgumentError('serveMcp needs a Toolkit or a ResumeCoordinator');
}

/** One SDK server (one per session over HTTP) whose tools are the coordinator's toolkit's. */
export function createMcpServer(coordinator: ResumeCoordinator, options: McpServerOptions = {}, principal?: Principal): Server {
  const server = new Server(
    { name: options.name ?? 'toolnexus', version: options.version ?? '0.0.0' },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const elicitationTimeoutMs = options.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS;
  const telemetry = new Telemetry(options.telemetry, 'serveMcp');
  let minLevel = 0;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minLevel = LOG_RANK[request.params.level];
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: coordinator.toolkit.tools().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const log = (level: ToolLogLevel, message: string, data?: unknown): void => {
      if ((LOG_RANK[level] ?? 0) < minLevel) return;
      const payload = data === undefined ? message : { message, data };
      extra
        .sendNotification({ method: 'notifications/message', params: { level, logger: request.params.name, data: payload } })
        .catch(() => undefined);
    };
    const call = () => callTool(server, coordinator, request, extra, log, elicitationTimeoutMs, principal);
    const tracing = telemetry.active();
    if (!tracing) return call();
    const site: McpCallSite = { transport: extra.sessionId === undefined ? 'pipe' : 'tcp', requestId: extra.requestId };
    if (extra.sessionId !== undefined) site.sessionId = extra.sessionId;
    const { span, context } = startMcpServerCall(tracing, request.params.name, site, request.params._meta);
    try {
      const result = await tracing.within(context, call);
      endMcpCall(tracing, span, { output: '', isError: result.isError === true });
      return result;
    } catch (error) {
      endMcpCall(tracing, span, { thrown: errorTypeOf(error) });
      throw error;
    }
  });
  return server;
}

async function callTool(
  server: Server,
  coordinator: ResumeCoordinator,
  request: CallToolRequest,
  extra: Extra,
  log: McpToolContext['log'],
  elicitationTimeoutMs: number,
  principal: Principal | undefined,
): Promise<McpCallResult> {
  const name = request.params.name;
  const tool = coordinator.toolkit.get(name);
  if (!tool) return { content: [{ type: 'text', text: `unknown tool: ${name}` }], isError: true };
  const mcp: McpCallInfo = {};
  if (extra.sessionId !== undefined) mcp.sessionId = extra.sessionId;
  if (extra.closeSSEStream) mcp.closeStream = extra.closeSSEStream;
  if (principal) mcp.principal = { ...principal };
  const ctx: McpToolContext = { signal: extra.signal, log, mcp };
  const token = request.params._meta?.progressToken;
  if (token !== undefined) {
    ctx.progress = (progress, total, message) => {
      const params = {
        progressToken: token,
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      };
      extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
    };
  }
  let result: ToolResult;
  try {
    result = await coordinator.execute(name, request.params.arguments ?? {}, ctx);
    for (let pending = pendingOf(result); pending; pending = pendingOf(result)) {
      const capability = server.getClientCapabilities()?.elicitation;
      const support: ElicitationSupport = { form: capability?.form !== undefined, url: capability?.url !== undefined };
      if (!capability) return outOfBandResult(pending, 'the client did not declare the elicitation capability');
      const plan = elicitationFor(pending, support);
      if ('outOfBand' in plan) return outOfBandResult(pending, plan.outOfBand);
      let reply;
      try {
        // formSchemaOf checked the fields against what MCP forms allow; the SDK's type lists each shape.
        const params = plan.elicit as Parameters<Server['elicitInput']>[0];
        reply = await server.elicitInput(params, {
          signal: extra.signal,
          timeout: elicitationTimeoutMs,
          relatedRequestId: extra.requestId,
        });
      } catch (error) {
        if (extra.signal.aborted) return { content: [{ type: 'text', text: `${name} cancelled` }], isError: true };
        return outOfBandResult(pending, `the elicitation failed: ${messageOf(error)}`);
      }
      const refused = answerProblem(plan.elicit, reply);
      if (refused) return outOfBandResult(pending, `the answer was refused: ${refused}`);
      // Answered as a principal, as the inbox and the CLI answer (docs/design.md, "the path of an answer"):
      // the one the host's authorize hook named, else the MCP client or session.
      const by =
        principal ??
        elicitationPrincipal({
          clientId: extra.authInfo?.clientId,
          sessionId: extra.sessionId,
          clientName: server.getClientVersion()?.name,
        });
      const answered = await answerAs(coordinator, answerOf(pending, reply), { by, context: ctx, signal: extra.signal });
      result = answered.outcome ?? failure(`suspension ${pending.id} is ${answered.call.status}`);
    }
  } catch (error) {
    return { content: [{ type: 'text', text: messageOf(error) }], isError: true };
  }
  return toMcpResult(result, tool.outputSchema);
}
