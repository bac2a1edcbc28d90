import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '../errors';
import type { ToolCall } from '../models/types';
import type { AgentRunner } from '../runner/agent-runner';
import type { RunEvent } from '../runner/core/types';
import type { StoredSession } from '../sessions/store';
import type { Principal } from '../suspension/audit';
import { parseJson, readNodeBody, readWebBody, sseBody } from './body';
import { ChatRequestError, errorBody, refusal, signedIn } from './errors';
import { checkApproval, haltedChat, refuseDuplicates, refuseStrayEdits } from './approvals';
import { answerApprovals } from './answer';
import { failureLog, logFailure, recoverHalted, STDERR_LOGGER, type ChatLogger } from './log';
import { UI_STREAM_HEADERS, type UIStreamPart } from './parts';
import { checkIssued, checkPrincipalOption, defaultSessionOf, readChatBody, toolParts, userText } from './request';
import { messageIdOf, uiPartBatches, UIPartWriter, type UIStreamOptions } from './ui-stream';
import { withApprovalData } from './approval-data';
import { storedReply } from './resend';
import { steeredReply } from './steer';
import type { ChatApprovalData } from './parts';
import type { Clock } from '../timing/clock';
import { openChatLog, type ChatStreamLogOptions, type StreamLogWriter } from './stream-log';
import { CHAT_STREAM_HEADER, reconnectNode, reconnectResponse } from './reconnect';

/** Options of every chat front end ({@link chatResponse}, {@link chatHandler}). */
export interface ChatOptions {
  /** The session a chat is kept in. Default: the principal's id and the chat id together, so nobody reaches another's thread. */
  sessionOf?: (chatId: string, principal: Principal) => string;
  /** The host's context for the run's tool calls (a DI scope, the tenant...). */
  context?: (principal: Principal) => object;
  /** The largest request body read, in bytes. Default 1 MiB; a larger one is refused with 413. */
  maxBodyBytes?: number;
  /** The `errorText` of a failed run (default: the error's code only, never its message). */
  errorText?: (error: unknown) => string;
  /**
   * Where failures the page is not told in full are logged on the server: a failed run (a model
   * outage after its retries, a store down) and a halted run that could not be recovered after a
   * crash. One line naming the run and the error's code (for a model, its provider and HTTP
   * status); never the error's message, which may quote the conversation. Default: stderr.
   * (`ToolnexusChatModule` gives Nest's `Logger`.) A logger that throws is ignored.
   */
  logger?: ChatLogger;
  /** What the page sees of a sub-agent's own work: nothing (`'hidden'`, default) or a part per sub-agent call (`'part'`); see {@link UIStreamOptions.subAgents}. */
  subAgents?: 'hidden' | 'part';
  /**
   * What a response's connection closing before its run ended means. `'continue'` (default):
   * the page went away, and the run goes on to its end unread, so its session records what ran.
   * `'cancel'`: the page's Stop (`useChat().stop()` aborts the request): the run is cancelled
   * (`AgentRunner.cancel`), its tools' `ctx.signal` fire, and it ends `cancelled` (docs/chat.md, "Stop").
   */
  onDisconnect?: 'continue' | 'cancel';
  /**
   * What a user message to a chat whose run is in flight does. `'steer'` (default): it joins that
   * run, read by the model at its next turn (`AgentRunner.steer`), and its response says it was
   * queued (docs/chat.md, "Steering"). `'busy'`: it is refused with 409 `busy`, as before steering.
   */
  whileRunning?: 'steer' | 'busy';
  /**
   * The run's stream log (docs/chat.md, "Reconnecting"): every response's parts are kept in
   * the session store, so a page that lost its connection reattaches (`GET <path>/<chat
   * id>/stream`, what `useChat({ resume: true })` calls) from any process on the store. On by
   * default when the runner's session store keeps stream logs (the three built-in ones do);
   * `false` keeps none, and a reconnect is answered 204.
   */
  streamLog?: ChatStreamLogOptions | false;
  /** Where a response's stream log writes are timed and a reconnect waits between reads. Default: the system clock. */
  clock?: Clock;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

/**
 * Handles one chat request: the body `useChat` sends (`{ id, messages }`), from `principal`
 * (the host's auth). A user message starts a run in the chat's session; an assistant message
 * carrying approval responses answers them, each checked against its pending request and
 * settled through `answerAs` once, and continues the run into the same assistant message.
 * Returns the UI message stream parts; refuses bad input with {@link ChatRequestError}
 * before anything changes.
 */
export async function chatStream(
  runner: AgentRunner,
  rawBody: unknown,
  principal: Principal,
  signal: AbortSignal | undefined,
  options: ChatOptions = {},
): Promise<AsyncIterable<UIStreamPart>> {
  const { events, stream, failed, replay, log: target } = await chatEvents(runner, rawBody, principal, signal, options);
  const log = await openChatLog(runner, target, options);
  return (async function* () {
    if (replay) {
      yield* replay;
      return;
    }
    try {
      for await (const batch of uiPartBatches(logFailure(events, failed), stream)) {
        log?.push(batch.map((part) => JSON.stringify(part)));
        yield* batch;
      }
    } finally {
      await log?.end();
    }
  })();
}

/** The run events a chat request streams, and how they become the response. */
interface ChatEvents {
  events: AsyncIterable<RunEvent>;
  stream: UIStreamOptions;
  /** Tells the server's log that the run failed. */
  failed: (error: unknown) => void;
  /** The answer policy refused an approval of the request, or it was settled already: the response says so (its header, and the approval's data part). */
  refused?: 'answer_refused' | 'not_pending';
  /** The whole response, from the session: a message it has already (docs/chat.md, "Retries and regenerate"); nothing runs. */
  replay?: UIStreamPart[];
  /** The run whose stream log the response writes: set when the response streams a run. */
  log?: { runId: string; sessionId: string };
}

/**
 * The header of a chat response that explains a refused approval (docs/chat.md, "A refused
 * approval"): the response is the UI message stream, so `useChat` shows why; a client that
 * reads no stream tells it by this header.
 */
export const CHAT_REFUSED_HEADER = 'x-toolnexus-refused';

/** What {@link chatStream} streams, before it becomes parts (the front ends convert as they write). */
async function chatEvents(
  runner: AgentRunner,
  rawBody: unknown,
  principal: Principal,
  signal: AbortSignal | undefined,
  options: ChatOptions,
): Promise<ChatEvents> {
  const sessions = runner.sessions;
  if (!sessions) throw new InvalidArgumentError('a chat back end needs a runner whose store keeps sessions');
  // A page gone before anything started changes nothing; once started, a run goes on to its end.
  signal?.throwIfAborted();
  const { chatId, last, edits, regenerate } = readChatBody(rawBody);
  const sessionId = (options.sessionOf ?? defaultSessionOf)(chatId, principal);
  const session = await sessions.loadSession(sessionId);
  const context = options.context?.(principal);
  // Every response is redacted by the runner's toolkit, knowing the thread's earlier calls (a result may quote one).
  const redaction = {
    toolkit: runner.toolkit,
    calls: threadCalls(session),
    ...(options.subAgents ? { subAgents: options.subAgents } : {}),
  };
  const errorText = options.errorText;
  // What the principal may do with each approval the run asks, decided as its event passes (docs/chat.md).
  const approvals = new Map<string, ChatApprovalData>();
  const approvalData = (id: string) => approvals.get(id);
  const rights = (events: AsyncIterable<RunEvent>) => withApprovalData(events, runner.coordinator, principal, approvals);
  if (last.role === 'user') {
    if (edits) throw new ChatRequestError(400, 'bad_body', 'edits come with approval responses, not with a user message');
    const text = userText(last);
    let current = session;
    const halted = current?.active?.phase === 'halted' ? current.active.runId : undefined;
    if (halted !== undefined && (await runner.coordinator.store.list({ runId: halted, status: 'pending' })).length === 0) {
      // Its questions were all answered, but its continuation stopped (the page went away
      // mid-resume, an answer came without a runner, a process died mid-replay): finish it
      // first, then take (or answer) the message.
      await recoverHalted(runner, halted, context, options.logger ?? STDERR_LOGGER);
      current = await sessions.loadSession(sessionId);
    }
    // The same message sent again (its page lost the connection) is answered from the session,
    // so nothing it ran runs twice; `regenerate()` asks for a new turn on purpose.
    const replay = regenerate ? undefined : await storedReply(runner, current, { id: last.id, text }, principal);
    if (replay) return { events: NO_EVENTS, stream: { messageId: '' }, failed: () => undefined, replay };
    const active = current?.active;
    // Waiting for an answer: the message is not taken; the 409 lists what to answer (docs/chat.md, "After a crash").
    if (active?.phase === 'halted') throw await haltedChat(runner, active.runId, current);
    if (active && (active.until ?? 0) >= Date.now()) {
      const steered =
        options.whileRunning === 'busy' ? undefined : await steeredReply(runner, active.runId, { id: last.id, text }, principal);
      if (steered) return { events: NO_EVENTS, stream: { messageId: '' }, failed: () => undefined, replay: steered };
      throw new ChatRequestError(409, 'busy', 'this chat is busy: another request of it is still running; send again when it has ended');
    }
    const runId = `run-${randomUUID()}`;
    // The run is made on the principal's behalf: its requests record them, so they cannot approve their own (docs/who-may-answer.md).
    // Not the page's signal: a run keeps going when the page goes away, so its session records what ran.
    // The message keeps the page's id in the thread: sent again, it is recognised (above).
    const run = runner.stream([{ role: 'user', content: text, id: last.id }], {
      session: sessionId,
      runId,
      principal,
      ...(context ? { context } : {}),
    });
    const events = stopsOn(runner, runId, signal, options, rights(run));
    return {
      events,
      stream: { messageId: messageIdOf(runId), approvalData, ...redaction, ...(errorText ? { errorText } : {}) },
      failed: failureLog(options.logger, runId),
      log: { runId, sessionId },
    };
  }

  const parts = toolParts(last);
  checkIssued(parts, session);
  const responded = parts.filter((part) => part.state === 'approval-responded');
  if (responded.length === 0) throw new ChatRequestError(400, 'bad_body', 'the assistant message answers no approval request');
  refuseDuplicates(responded);
  refuseStrayEdits(responded, edits);
  const runId = session?.active?.phase === 'halted' ? session.active.runId : undefined;
  // Every answer is checked before any is applied: a forged one, or a bad edit, changes nothing.
  const checked = await Promise.all(
    responded.map((part) => checkApproval(runner, part, session, principal, edits?.get(part.approval?.id as string))),
  );
  // The page's own assistant message, continued; a halted run's is `msg-<runId>` (the same id).
  const stream = { messageId: runId ? messageIdOf(runId) : last.id, approvalData, ...redaction, ...(errorText ? { errorText } : {}) };
  const failed = failureLog(options.logger, runId ?? last.id);
  const { before, refused, applied } = await answerApprovals(runner, checked, principal, context);
  const open = applied && runId ? await runner.coordinator.store.list({ runId, status: 'pending' }) : [];
  // Nothing applied (refused, or answered already), or some calls of the turn still wait: the run continues when the last is given.
  const continues = applied && runId !== undefined && open.length === 0;
  const events = continues
    ? stopsOn(runner, runId, signal, options, rights(runner.continueStream(runId, context ? { context } : {})))
    : NO_EVENTS;
  // Only a response that moves the run is a segment of its log: one that answers nothing yet adds nothing to replay.
  const log = continues ? { runId, sessionId } : undefined;
  return { events, stream: { ...stream, before }, failed, ...(refused ? { refused } : {}), ...(log ? { log } : {}) };
}

/**
 * With `onDisconnect: 'cancel'`, the page's stop (its request aborted) cancels the run. A stop
 * before the run's loop began (the body cancelled before its first read) finds nothing to
 * cancel yet: it is made again at the run's first event, once `cancel` reaches it.
 */
function stopsOn(
  runner: AgentRunner,
  runId: string,
  signal: AbortSignal | undefined,
  options: ChatOptions,
  events: AsyncIterable<RunEvent>,
): AsyncIterable<RunEvent> {
  if (options.onDisconnect !== 'cancel' || !signal) return events;
  const reason = 'the page stopped the response';
  let cancelling = false;
  const cancel = () => {
    if (cancelling) return;
    cancelling = true;
    runner.cancel(runId, { reason }).catch(() => {
      cancelling = false; // not started yet: the next event tries again
    });
  };
  signal.addEventListener('abort', cancel, { once: true });
  return (async function* () {
    for await (const event of events) {
      if (signal.aborted) cancel();
      yield event;
    }
  })();
}

/** A response that runs nothing. */
const NO_EVENTS: AsyncIterable<RunEvent> = {
  [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true, value: undefined }) }),
};

/** The tool calls of a stored thread, in order. */
function threadCalls(session: StoredSession | undefined): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const message of session?.messages ?? []) if (message.role === 'assistant') calls.push(...(message.toolCalls ?? []));
  return calls;
}

/** Encodes parts as server-sent events, ending with `data: [DONE]` as the AI SDK's own responses do. */
export async function* sseOf(parts: AsyncIterable<UIStreamPart>): AsyncGenerator<string> {
  for await (const part of parts) yield `data: ${JSON.stringify(part)}\n\n`;
  yield 'data: [DONE]\n\n';
}

/**
 * The SSE text of a chat's run: one string (one write) per run event, converted as it is
 * read; each part also goes to the run's stream log, whose segment is closed before the
 * response's last part, so a page that saw the end finds it all in the log.
 */
async function* sseOfEvents({ events, stream, failed, replay }: ChatEvents, log: StreamLogWriter | undefined): AsyncGenerator<string> {
  if (replay) {
    yield `${sseText(replay)}data: [DONE]\n\n`;
    return;
  }
  const sse = log ? (parts: readonly UIStreamPart[]) => log.sse(parts) : sseText;
  const writer = new UIPartWriter(stream);
  try {
    yield sse(writer.start());
    let last: string;
    try {
      for await (const event of events) {
        const text = sse(writer.next(event));
        if (text !== '') yield text;
      }
      last = sse(writer.finish());
    } catch (error) {
      failed(error);
      last = sse(writer.fail(error));
    }
    await log?.end();
    yield `${last}data: [DONE]\n\n`;
  } finally {
    // Left before its end (the consumer stopped): the segment is closed with what it has.
    await log?.end();
  }
}

/** The headers of a chat's stream: {@link CHAT_REFUSED_HEADER} says when it explains a refused approval; {@link CHAT_STREAM_HEADER} where its first part is in the run's stream log. */
function streamHeaders(chat: ChatEvents, log: StreamLogWriter | undefined): Record<string, string> {
  const headers: Record<string, string> = { ...UI_STREAM_HEADERS };
  if (chat.refused) headers[CHAT_REFUSED_HEADER] = chat.refused;
  if (log) headers[CHAT_STREAM_HEADER] = `${log.runId}:${log.from}`;
  return headers;
}

function sseText(parts: readonly UIStreamPart[]): string {
  let text = '';
  for (const part of parts) text += `data: ${JSON.stringify(part)}\n\n`;
  return text;
}

/** Options of {@link chatResponse}: who asks, from the host's auth. */
export interface ChatResponseOptions extends ChatOptions {
  /** The principal the host authenticated; `undefined` answers 401. */
  principal: Principal | undefined;
}

/**
 * A chat request as a web `Request` (a Next.js route, Hono, Deno, Bun) answered with a web
 * `Response`: the UI message stream, or a JSON refusal with its 4xx status. A run goes on to
 * its end when the page goes away (the stream is cancelled), so its session records what ran.
 *
 * @example
 * ```ts
 * export async function POST(request: Request) {
 *   return chatResponse(runner, request, { principal: await auth(request) })
 * }
 * ```
 */
export async function chatResponse(runner: AgentRunner, request: Request, options: ChatResponseOptions): Promise<Response> {
  const json = (error: ChatRequestError) =>
    new Response(errorBody(error), { status: error.status, headers: { 'content-type': 'application/json' } });
  // `useChat({ resume: true })`'s reconnect: GET <path>/<chat id>/stream (docs/chat.md, "Reconnecting").
  if (request.method === 'GET') return reconnectResponse(runner, request, options.principal, options);
  try {
    const principal = signedIn(options.principal);
    const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    const text = await readWebBody(request, limit);
    const chat = await chatEvents(runner, parseJson(text), principal, request.signal, options);
    const log = await openChatLog(runner, chat.log, options);
    // The page going away lets the run go on to its end unread, so its session records what ran.
    return new Response(sseBody(sseOfEvents(chat, log), 'drain'), { status: 200, headers: streamHeaders(chat, log) });
  } catch (error) {
    return json(refusal(error));
  }
}

/** Options of {@link chatHandler}. */
export interface ChatHandlerOptions extends ChatOptions {
  /** Who asks, from the host's auth (a session cookie, a bearer token); `undefined` answers 401. */
  principal: (request: IncomingMessage) => Principal | undefined | Promise<Principal | undefined>;
}

/**
 * A chat route for node:http and Express (`app.post('/api/chat', chatHandler(runner, { principal }))`):
 * the UI message stream, or a JSON refusal with its 4xx status. A run goes on to its end,
 * unread, when the connection closes first (the page went away), so its session records what ran.
 */
export function chatHandler(
  runner: AgentRunner,
  options: ChatHandlerOptions,
): (request: IncomingMessage & { body?: unknown }, response: ServerResponse) => Promise<void> {
  checkPrincipalOption(options, 'chatHandler');
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  return async (request, response) => {
    // `useChat({ resume: true })`'s reconnect: GET <path>/<chat id>/stream (docs/chat.md, "Reconnecting").
    if (request.method === 'GET') return reconnectNode(runner, options.principal, options, request, response);
    const abort = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) abort.abort(new DOMException('the client went away', 'AbortError'));
    });
    let chat: ChatEvents;
    let log: StreamLogWriter | undefined;
    try {
      const principal = signedIn(await options.principal(request));
      // Express with a body parser has read it already; otherwise it is read here, bounded.
      const body = request.body !== undefined ? request.body : parseJson(await readNodeBody(request, limit));
      chat = await chatEvents(runner, body, principal, abort.signal, options);
      log = await openChatLog(runner, chat.log, options);
    } catch (error) {
      const refused = refusal(error);
      response.writeHead(refused.status, { 'content-type': 'application/json', connection: 'close' });
      response.end(errorBody(refused));
      return;
    }
    response.writeHead(200, streamHeaders(chat, log));
    response.flushHeaders();
    try {
      for await (const chunk of sseOfEvents(chat, log)) {
        // The page went away: the run goes on to its end unread, so its session records what ran.
        if (abort.signal.aborted) continue;
        if (!response.write(chunk)) await new Promise<void>((resolve) => response.once('drain', resolve).once('close', resolve));
      }
    } finally {
      response.end();
    }
  };
}

/** The parts of a Fastify request the chat route reads (no `fastify` import needed). */
export interface FastifyLikeRequest {
  raw: IncomingMessage;
  body?: unknown;
}

/** The parts of a Fastify reply the chat route uses. */
export interface FastifyLikeReply {
  raw: ServerResponse;
  hijack(): void;
}

/** Options of {@link chatFastifyHandler}: who asks, from the Fastify request (your auth hook's result). */
export interface ChatFastifyOptions extends ChatOptions {
  principal: (request: FastifyLikeRequest) => Principal | undefined | Promise<Principal | undefined>;
}

/**
 * A chat route for Fastify (`app.post('/api/chat', chatFastifyHandler(runner, { principal }))`):
 * Fastify parses the JSON body (its `bodyLimit` bounds it, 1 MiB by default); the route takes
 * the reply over (`hijack`) and streams as {@link chatHandler} does.
 */
export function chatFastifyHandler(
  runner: AgentRunner,
  options: ChatFastifyOptions,
): (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<void> {
  checkPrincipalOption(options, 'chatFastifyHandler');
  return async (request, reply) => {
    reply.hijack();
    const principal = await options.principal(request);
    const handler = chatHandler(runner, { ...options, principal: () => principal });
    await handler(Object.assign(request.raw, { body: request.body ?? null }), reply.raw);
  };
}
