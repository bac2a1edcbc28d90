import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentRunner } from '../runner/agent-runner';
import { isStreamLogStore, type StreamLogStore } from '../sessions/stream-log';
import type { SessionStore } from '../sessions/store';
import type { Principal } from '../suspension/audit';
import { systemClock, type Clock } from '../timing/clock';
import { sleep } from '../timing/sleep';
import { ChatRequestError, errorBody, refusal, signedIn } from './errors';
import { sseBody } from './body';
import type { ChatOptions } from './handler';
import { UI_STREAM_HEADERS } from './parts';
import { defaultSessionOf } from './request';
import { STREAM_LOG_DEFAULTS } from './stream-log';

/**
 * The header that names a position in a run's stream log, `<run id>:<cursor>`: on every
 * chat response, the cursor of its first part; on a reconnect (`GET …/<chat id>/stream`),
 * the cursor of the first part the page still needs (the response's cursor plus the parts
 * it read). Without it a reconnect replays the session's active run from its first part, as
 * the AI SDK's `DefaultChatTransport` expects (docs/chat.md, "Reconnecting").
 */
export const CHAT_STREAM_HEADER = 'x-toolnexus-stream';

/** Parts read per statement: a replay of a long run is a few statements, each bounded. */
const READ_BATCH = 500;

/** A reconnect that has something to send: the run, the cursor of its first part, and the parts (JSON texts) in batches. */
export interface Reattached {
  runId: string;
  from: number;
  batches: AsyncIterable<string[]>;
}

/** The chat id of a reconnect's URL, `…/<chat id>/stream`; `undefined` for any other path. */
export function reconnectChatId(url: string | undefined): string | undefined {
  const path = new URL(url ?? '/', 'http://chat.invalid').pathname;
  const match = /\/([^/]+)\/stream\/?$/.exec(path);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    throw new ChatRequestError(400, 'bad_body', 'the chat id in the path is not valid percent-encoding');
  }
}

function parsePosition(header: string): { runId: string; cursor: number } {
  const match = /^([\x21-\x7e]{1,200}):(\d{1,15})$/.exec(header.trim());
  if (!match) throw new ChatRequestError(400, 'bad_position', `${CHAT_STREAM_HEADER} must be <run id>:<cursor>`);
  return { runId: match[1] as string, cursor: Number(match[2]) };
}

/**
 * A page reattaching to its chat (`useChat({ resume: true })`): the parts of the chat's run
 * after the page's position (`position`, the {@link CHAT_STREAM_HEADER} it sent), then the
 * run followed live until the response that writes it ends. Without a position, the
 * session's active run (running, or halted on a question) from its first part. `undefined`
 * when there is nothing to send (no active run, a position at the end of an ended run):
 * answered 204. Only the principal's own chats are reached: the session is the principal's
 * (`sessionOf`), and a position naming a run of another session is refused 404.
 */
export async function reattach(
  runner: AgentRunner,
  chatId: string,
  principal: Principal,
  position: string | undefined,
  signal: AbortSignal,
  options: ChatOptions,
): Promise<Reattached | undefined> {
  const store = runner.sessions;
  if (!store || !isStreamLogStore(store) || options.streamLog === false) return undefined;
  const sessionId = (options.sessionOf ?? defaultSessionOf)(chatId, principal);
  let runId: string;
  let from = 0;
  if (position !== undefined) {
    ({ runId, cursor: from } = parsePosition(position));
    const slice = await store.readStream(runId, from, 1);
    if (!slice || slice.sessionId !== sessionId) throw new ChatRequestError(404, 'not_found', 'this chat has no stream at that position');
    if (!slice.open && from >= slice.next) return undefined;
  } else {
    const active = (await store.loadSession(sessionId))?.active;
    if (!active || !(await store.readStream(active.runId, 0, 1))) return undefined;
    runId = active.runId;
  }
  const follow = { ...(options.streamLog || {}), clock: options.clock ?? systemClock };
  return { runId, from, batches: followLog(store, sessionId, runId, from, signal, follow) };
}

/**
 * The parts of `runId`'s log from `from`, read by polling the store every `pollMs` while a
 * response still writes it. Polling, not PostgreSQL's LISTEN/NOTIFY: the same on the three
 * stores (a SQLite file shared by processes has no notifications), no connection held per
 * waiting page, and a part reaches the page at most one interval after it was written.
 */
async function* followLog(
  store: SessionStore & StreamLogStore,
  sessionId: string,
  runId: string,
  from: number,
  signal: AbortSignal,
  options: { pollMs?: number; staleMs?: number; maxParts?: number; clock: Clock },
): AsyncGenerator<string[]> {
  const pollMs = Math.max(10, options.pollMs ?? STREAM_LOG_DEFAULTS.pollMs);
  const staleMs = options.staleMs ?? STREAM_LOG_DEFAULTS.staleMs;
  const { clock } = options;
  let cursor = from;
  let quietSince = clock.now();
  while (!signal.aborted) {
    const slice = await store.readStream(runId, cursor, READ_BATCH);
    if (!slice) return;
    if (slice.parts.length > 0) {
      cursor += slice.parts.length;
      quietSince = clock.now();
      yield slice.parts;
      continue;
    }
    if (cursor < slice.next) {
      // No part at the cursor, yet the log went past it: the parts past its cap were not kept.
      yield [JSON.stringify({ type: 'error', errorText: OVERFLOW_TEXT })];
      return;
    }
    if (!slice.open) return;
    if (clock.now() - quietSince >= staleMs) {
      // Quiet for long: still driven (a slow tool), or its writer died with the log open?
      const active = (await store.loadSession(sessionId))?.active;
      if (active?.runId !== runId || active.phase !== 'running' || (active.until ?? 0) < clock.now()) return;
      quietSince = clock.now();
    }
    // An abort ends the wait, and the loop with it.
    await sleep(pollMs, signal, clock).catch(() => undefined);
  }
}

/** Said when a reconnect needs a part its log did not keep (past its cap, `streamLog.maxParts`). */
const OVERFLOW_TEXT = 'this run streamed more parts than its stream log keeps: the rest is in the thread once the run has ended';

/** The SSE text of a reattached stream, one string per batch, ending with `data: [DONE]`. */
export async function* sseOfBatches(batches: AsyncIterable<string[]>): AsyncGenerator<string> {
  for await (const batch of batches) {
    let text = '';
    for (const part of batch) text += `data: ${part}\n\n`;
    yield text;
  }
  yield 'data: [DONE]\n\n';
}

/** The headers of a reattached stream: the UI stream's, and its position. */
export function reattachedHeaders(attached: Reattached): Record<string, string> {
  return { ...UI_STREAM_HEADERS, [CHAT_STREAM_HEADER]: `${attached.runId}:${attached.from}` };
}

/**
 * Answers a reconnect over node:http (`chatHandler`'s GET): 401 without a principal, 204 when
 * there is nothing to send, else the stream until the run's response ends or the page goes.
 */
export async function reconnectNode(
  runner: AgentRunner,
  principalOf: (request: IncomingMessage) => Principal | undefined | Promise<Principal | undefined>,
  options: ChatOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  response.on('close', () => abort.abort());
  let attached: Reattached | undefined;
  try {
    const principal = signedIn(await principalOf(request));
    const chatId = reconnectChatId(request.url);
    if (chatId === undefined) throw new ChatRequestError(404, 'not_found', 'a chat stream is read at <chat path>/<chat id>/stream');
    attached = await reattach(runner, chatId, principal, headerOf(request.headers[CHAT_STREAM_HEADER]), abort.signal, options);
  } catch (error) {
    const refused = refusal(error);
    response.writeHead(refused.status, { 'content-type': 'application/json', connection: 'close' });
    response.end(errorBody(refused));
    return;
  }
  if (!attached) {
    response.writeHead(204, { 'cache-control': 'no-store' });
    response.end();
    return;
  }
  response.writeHead(200, reattachedHeaders(attached));
  response.flushHeaders();
  try {
    for await (const chunk of sseOfBatches(attached.batches)) {
      if (abort.signal.aborted) break;
      if (!response.write(chunk)) await new Promise<void>((resolve) => response.once('drain', resolve).once('close', resolve));
    }
  } finally {
    response.end();
  }
}

/** A reconnect as a web `Request` (`chatResponse`'s GET): as {@link reconnectNode}, with a web `Response`. */
export async function reconnectResponse(
  runner: AgentRunner,
  request: Request,
  principal: Principal | undefined,
  options: ChatOptions,
): Promise<Response> {
  let attached: Reattached | undefined;
  try {
    const by = signedIn(principal);
    const chatId = reconnectChatId(request.url);
    if (chatId === undefined) throw new ChatRequestError(404, 'not_found', 'a chat stream is read at <chat path>/<chat id>/stream');
    attached = await reattach(runner, chatId, by, request.headers.get(CHAT_STREAM_HEADER) ?? undefined, request.signal, options);
  } catch (error) {
    const refused = refusal(error);
    return new Response(errorBody(refused), { status: refused.status, headers: { 'content-type': 'application/json' } });
  }
  if (!attached) return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
  return new Response(sseBody(sseOfBatches(attached.batches), 'stop'), { status: 200, headers: reattachedHeaders(attached) });
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
