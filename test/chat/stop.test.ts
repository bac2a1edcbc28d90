/**
 * The chat's stop (issue 36): `useChat().stop()` aborts the request; the chat route sees the
 * connection close before the run ended and cancels the run: the tool's `ctx.signal` fires,
 * the run ends `cancelled` in its checkpoint (a reload reads it), the session keeps what ran
 * and is free for the next message, and nothing continues the run. Real HTTP on 127.0.0.1,
 * a real SQLite file, the client a `fetch` aborted by its AbortController as the AI SDK's is.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { chatHandler, chatResponse } from 'toolnexus-ts/chat';

let dir: string;
let http: Server;
let store: SqliteStore;

afterEach(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function agent() {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-stop-'));
  store = new SqliteStore({ filename: join(dir, 'chat.db') });
  const seen = { aborted: 0, modelCalls: 0 };
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'research',
      description: 'Researches for a long time',
      run: (_args, ctx?: ToolContext) =>
        new Promise<string>((resolve) => {
          ctx?.signal?.addEventListener('abort', () => {
            seen.aborted++;
            resolve('stopped');
          });
        }),
    }),
  );
  const model = new FunctionModel(({ messages }) => {
    seen.modelCalls++;
    const last = messages[messages.length - 1];
    if (last?.role === 'user' && last.content === 'research') return { toolCalls: [{ id: 'r1', name: 'research', arguments: {} }] };
    return 'hello';
  });
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  return { runner, seen };
}

/** POSTs a user message, aborts once a part of `type` arrives (the stop button), and returns the run id the stream named. */
async function stopAt(url: string, chatId: string, text: string, type: string): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: chatId, messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text }] }] }),
    signal: controller.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let messageId = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before a ${type} part`);
    buffered += decoder.decode(value, { stream: true });
    const events = buffered.split('\n\n');
    buffered = events.pop() ?? '';
    for (const event of events) {
      if (!event.startsWith('data: {')) continue;
      const part = JSON.parse(event.slice('data: '.length)) as { type: string; messageId?: string };
      if (part.type === 'start') messageId = part.messageId ?? '';
      if (part.type === type) {
        controller.abort();
        return messageId.replace(/^msg-/, '');
      }
    }
  }
}

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('timed out');
}

async function serve(handle: Parameters<typeof createServer>[1]): Promise<string> {
  http = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
}

it.each(['node', 'web'])(
  '%s route: the stop cancels the run: ctx.signal fires, the checkpoint says cancelled, the session is free and keeps what ran',
  async (kind) => {
    const { runner, seen } = agent();
    const principal = { id: 'alice' };
    const handler = chatHandler(runner, { principal: () => principal, onDisconnect: 'cancel' });
    const url = await serve((req, res) => {
      if (kind === 'node') return void handler(req, res);
      // The web route (Next.js, Hono...) over node:http: the request's body and the Response's stream.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const request = new Request('http://127.0.0.1/api/chat', { method: 'POST', body: Buffer.concat(chunks), signal: abort.signal });
        void chatResponse(runner, request, { principal, onDisconnect: 'cancel' }).then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers));
          const reader = (response.body as ReadableStream<Uint8Array>).getReader();
          res.on('close', () => void reader.cancel().catch(() => undefined));
          for (;;) {
            const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
            if (done) break;
            if (!res.destroyed) res.write(value);
          }
          res.end();
        });
      });
    });

    const runId = await stopAt(url, 'c-1', 'research', 'tool-input-available');
    await until(() => seen.aborted === 1);
    await until(async () => (await store.loadRun(runId))?.state !== undefined);
    const saved = await store.loadRun(runId);
    expect(saved?.state).toMatchObject({ phase: 'cancelled', stop: { status: 'cancelled', reason: 'the page stopped the response' } });
    expect(seen.modelCalls).toBe(1); // the model was not asked again after the stop

    // The session kept what ran (the call and its result) and is free: the next message is taken.
    await until(async () => (await runner.sessions!.loadSession('alice:c-1'))?.active === undefined);
    const session = await runner.sessions!.loadSession('alice:c-1');
    expect(session?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    const next = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c-1', messages: [{ id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }),
    });
    expect(next.status).toBe(200);
    expect(await next.text()).toContain('hello');
    // Nothing continues the cancelled run.
    await expect(runner.recover(runId, { force: true })).rejects.toThrow(/already cancelled/);
  },
);

it('a stop before the run began (the web route cancels the body before its first read): the run is cancelled once it starts', async () => {
  const { runner, seen } = agent();
  http = createServer((_req, res) => res.end()); // (afterEach closes a server)
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const abort = new AbortController();
  const body = JSON.stringify({ id: 'c-2', messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'research' }] }] });
  const request = new Request('http://127.0.0.1/api/chat', { method: 'POST', body, signal: abort.signal });
  const response = await chatResponse(runner, request, { principal: { id: 'alice' }, onDisconnect: 'cancel' });
  expect(response.status).toBe(200);
  // The client is gone before the framework read a byte: it aborts the request, then cancels the body (which drains the run).
  abort.abort();
  await (response.body as ReadableStream<Uint8Array>).cancel();
  expect(seen.aborted).toBe(1);
  expect(seen.modelCalls).toBe(1);
  const session = await runner.sessions!.loadSession('alice:c-2');
  expect(session?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
});
