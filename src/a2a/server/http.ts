import { checkRetention } from '../../suspension/keyed';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CARD_PATH, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { InvalidArgumentError } from '../../errors';
import { parseJson, readNodeBody } from '../../chat/body';
import { ChatRequestError } from '../../chat/errors';
import { runStoreOf } from '../../runner/durability/memory';
import type { AgentRunner } from '../../runner/agent-runner';
import type { RunStore } from '../../runner/core/store';
import type { Principal } from '../../suspension/audit';
import { agentCardOf } from './card';
import { PERMISSION_DENIED_CODE, permissionDenied } from './errors';
import { PRINCIPAL_KEY } from './executor';
import { RunRequestHandler } from './handler';
import type { A2AServeOptions } from './options';
import { RunTaskStore } from './tasks';
import { A2ATaskRecords } from './push';
import { a2aTaskStoreOf } from '../../stores/a2a-tasks';

const DEFAULT_MAX_BODY = 1024 * 1024;
const DEFAULT_MAX_PARTS = 20;

/** A node:http (and Express) route: the request, with the body Express's parser read, if any. */
export type A2ANodeHandler = (request: IncomingMessage & { body?: unknown }, response: ServerResponse) => Promise<void>;

/**
 * Serves `runner` as an A2A agent (docs/a2a.md): GET `/.well-known/agent-card.json` answers
 * the agent card (public); POST is the JSON-RPC endpoint, A2A 1.0 (`SendMessage`,
 * `SendStreamingMessage`, `GetTask`, `CancelTask`, `ListTasks`, the push notification config
 * methods) and, for a client that sends no
 * `A2A-Version` header or `0.3`, the 0.3 methods (`message/send`, `message/stream`,
 * `tasks/get`, `tasks/cancel`). Every POST is authenticated (`authenticate`; none is 401)
 * and its body bounded (413). For node:http (`createServer(handler)`) and Express
 * (`app.use('/a2a', handler)`); {@link a2aFastifyHandler} for Fastify.
 *
 * The runner needs a store that keeps sessions (an A2A context is a session) and its runs
 * (a task is the run of the same id), so a task outlives the process serving it.
 */
export function a2aHandler(runner: AgentRunner, options: A2AServeOptions): A2ANodeHandler {
  if (typeof options?.authenticate !== 'function')
    throw new InvalidArgumentError('an A2A agent needs authenticate: (request) => Principal | undefined');
  if (!runner.sessions) throw new InvalidArgumentError('an A2A agent needs a runner whose store keeps sessions (an A2A context is one)');
  const runs = options.runs ?? runStoreOf(runner.coordinator.store);
  if (typeof runs?.loadRun !== 'function')
    throw new InvalidArgumentError("an A2A agent reads the runner's checkpoints: give runs when the coordinator's store keeps none");
  const card = agentCardOf(runner, options);
  // Listing and push notifications need a store that keeps A2A tasks (the built-in ones do).
  const taskStore = a2aTaskStoreOf(runner.coordinator.store) ?? a2aTaskStoreOf(runs);
  const logger = options.logger ?? { error: (line: string) => void process.stderr.write(`${line}\n`) };
  const tasks = new RunTaskStore(runner, runs as RunStore);
  // The records read the task's durable state too: a task continued by another process (no A2A served there) is told of by the sweep.
  const records = taskStore ? new A2ATaskRecords(taskStore, options.push ?? {}, logger, (taskId) => tasks.durable(taskId)) : undefined;
  if (card.capabilities) card.capabilities.pushNotifications = records !== undefined;
  records?.start();
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const maxParts = options.maxParts ?? DEFAULT_MAX_PARTS;
  checkRetention('a2aHandler idempotencyRetentionMs', options.idempotencyRetentionMs);
  const handler = new RunRequestHandler(card, runner, tasks, {
    maxParts,
    ...(records ? { records } : {}),
    ...(options.context ? { context: options.context } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.idempotencyRetentionMs !== undefined ? { idempotencyRetentionMs: options.idempotencyRetentionMs } : {}),
  });
  const current = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);
  const cardBody = JSON.stringify(card);
  return async (request, response) => {
    // Express and Nest keep the whole path in originalUrl; node:http has only url.
    const path = ((request as { originalUrl?: string }).originalUrl ?? request.url ?? '/').split('?')[0] as string;
    if (request.method === 'GET' && path.endsWith(`/${AGENT_CARD_PATH}`)) {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
      response.end(cardBody);
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'GET, POST', 'content-type': 'application/json' });
      response.end(rpcError(null, -32600, 'POST a JSON-RPC request, or GET the agent card'));
      return;
    }
    let principal: Principal | undefined | null;
    let body: unknown;
    try {
      principal = await options.authenticate(request);
      if (!principal) {
        request.resume();
        response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        response.end(rpcError(null, -32600, 'authenticate first'));
        return;
      }
      // Express with a body parser has read it already; otherwise it is read here, bounded.
      body = request.body !== undefined ? request.body : parseJson(await readNodeBody(request, limit));
    } catch (error) {
      const status = error instanceof ChatRequestError ? error.status : 500;
      const code = status === 400 ? -32700 : -32600;
      response.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
      response.end(rpcError(null, code, error instanceof ChatRequestError ? error.message : 'the request could not be read'));
      return;
    }
    const version = headerOf(request, A2A_VERSION_HEADER);
    if (version !== undefined && version !== '1.0' && version !== '0.3') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(rpcError(idOf(body), -32009, `A2A version ${version} is not served: 1.0 and 0.3 are`));
      return;
    }
    const context = new ServerCallContext({ requestedVersion: version ?? '0.3', state: new Map([[PRINCIPAL_KEY, { ...principal }]]) });
    const useLegacy = version === undefined || version === '0.3';
    await respond(
      response,
      body,
      () =>
        useLegacy ? legacy.handle(body as Record<string, unknown>, context) : current.handle(body as Record<string, unknown>, context),
      useLegacy,
    );
  };
}

type Handled = Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;

/** Writes one JSON-RPC response, or the stream's as server-sent events once its first event is in (an error before it is a plain response). */
async function respond(response: ServerResponse, body: unknown, handle: () => Promise<Handled>, legacy: boolean): Promise<void> {
  const fail = (error: unknown) => {
    const mapped = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error) : JsonRpcTransportHandler.mapToJSONRPCError(error);
    return { jsonrpc: '2.0', id: idOf(body), error: mapped };
  };
  let handled: Handled;
  try {
    handled = await handle();
  } catch (error) {
    writeRpc(response, fail(error));
    return;
  }
  if (!isStream(handled)) {
    writeRpc(response, handled);
    return;
  }
  const iterator = handled[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await iterator.next();
  } catch (error) {
    writeRpc(response, fail(error));
    return;
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  try {
    for (let next = first; !next.done; next = await iterator.next()) {
      // The client went away: the run goes on to its end unread, so its task records what ran.
      if (response.destroyed) continue;
      if (!response.write(`data: ${JSON.stringify(next.value)}\n\n`))
        await new Promise<void>((resolve) => response.once('drain', resolve).once('close', resolve));
    }
  } catch (error) {
    if (!response.destroyed) response.write(`event: error\ndata: ${JSON.stringify(fail(error))}\n\n`);
  } finally {
    response.end();
  }
}

/**
 * Writes one JSON-RPC response: 200, or 403 for a refusal by the answer policy, the A2A spec's
 * authorization error, with its `ErrorInfo` (which the SDK's 1.0 transport leaves out of a
 * custom code's error) put back.
 */
function writeRpc(response: ServerResponse, message: object): void {
  const error = (message as { error?: { code?: unknown } }).error;
  const denied = error?.code === PERMISSION_DENIED_CODE;
  response.writeHead(denied ? 403 : 200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(denied ? { ...message, error: { ...error, data: [permissionDenied()] } } : message));
}

function isStream(value: Handled): value is Extract<Handled, AsyncGenerator> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

function idOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function rpcError(id: string | number | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

/** The parts of a Fastify request the route reads (no `fastify` import needed). */
export interface A2AFastifyRequest {
  raw: IncomingMessage;
  body?: unknown;
}

/** The parts of a Fastify reply the route uses. */
export interface A2AFastifyReply {
  raw: ServerResponse;
  hijack(): void;
}

/**
 * {@link a2aHandler} for Fastify: `app.route({ method: ['GET', 'POST'], url: '/a2a/*', handler: a2aFastifyHandler(runner, options) })`.
 * Fastify parses the JSON body (its `bodyLimit` bounds it); the route takes the reply over (`hijack`).
 */
export function a2aFastifyHandler(
  runner: AgentRunner,
  options: A2AServeOptions,
): (request: A2AFastifyRequest, reply: A2AFastifyReply) => Promise<void> {
  const handler = a2aHandler(runner, options);
  return async (request, reply) => {
    reply.hijack();
    await handler(Object.assign(request.raw, request.body === undefined ? {} : { body: request.body }), reply.raw);
  };
}
