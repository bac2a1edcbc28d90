/**
 * Real HTTP servers on 127.0.0.1 that speak just enough of the OpenAI chat-completions
 * and Anthropic messages APIs for the runner tests. Each test scripts the replies; every
 * request is recorded with its parsed body so the wire shape can be checked.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON (the raw text when it is not JSON). */
  body: Record<string, unknown>;
  raw: string;
}

/** Answers one request; `index` counts requests from 0. */
export type Reply = (res: ServerResponse, req: RecordedRequest, index: number) => void | Promise<void>;

export interface MockServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a server that answers the n-th request with `replies[n]` (the last one repeats),
 * or every request with `replies` when it is one function.
 */
export async function startMockServer(replies: Reply | Reply[]): Promise<MockServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = { raw };
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw };
      const index = requests.length;
      requests.push(recorded);
      const reply = Array.isArray(replies) ? (replies[Math.min(index, replies.length - 1)] as Reply) : replies;
      Promise.resolve(reply(res, recorded, index)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** Sends server-sent events, each `data` JSON-encoded unless it is a string. */
export function sse(events: Array<{ event?: string; data: unknown }>): Reply {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const { event, data } of events) {
      res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    }
    res.end();
  };
}

/** Accepts the request and never answers. */
export const hang: Reply = () => undefined;

/** Drops the connection without a response (a network error for the client). */
export const dropConnection: Reply = (res) => {
  res.socket?.destroy();
};

// ---- OpenAI chat completions ----

export interface ScriptedCall {
  id: string;
  name: string;
  args: unknown;
}

export function openaiText(text: string, usage = { prompt_tokens: 10, completion_tokens: 5 }): Reply {
  return json(200, {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage,
  });
}

export function openaiCalls(calls: ScriptedCall[], text: string | null = null): Reply {
  return json(200, {
    id: 'chatcmpl-2',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) } })),
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 7 },
  });
}

/** A streamed answer: text in pieces, tool-call arguments split across chunks, usage at the end. */
export function openaiStream(pieces: string[], calls: ScriptedCall[] = []): Reply {
  const events: Array<{ data: unknown }> = [];
  events.push({ data: { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] } });
  for (const piece of pieces) events.push({ data: { choices: [{ index: 0, delta: { content: piece } }] } });
  calls.forEach((call, index) => {
    const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
    const half = Math.floor(args.length / 2);
    events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] } }] } });
    events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] } }] } });
    events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] } }] } });
  });
  events.push({ data: { choices: [{ index: 0, delta: {}, finish_reason: calls.length ? 'tool_calls' : 'stop' }] } });
  events.push({ data: { choices: [], usage: { prompt_tokens: 11, completion_tokens: 3 } } });
  events.push({ data: '[DONE]' });
  return sse(events);
}

// ---- Anthropic messages ----

export function anthropicText(text: string): Reply {
  return json(200, {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 12, output_tokens: 4 },
  });
}

export function anthropicCalls(calls: ScriptedCall[], text?: string): Reply {
  return json(200, {
    id: 'msg_2',
    type: 'message',
    role: 'assistant',
    content: [...(text ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args }))],
    stop_reason: 'tool_use',
    usage: { input_tokens: 30, output_tokens: 9 },
  });
}

export function anthropicStream(pieces: string[], calls: ScriptedCall[] = []): Reply {
  const events: Array<{ event: string; data: unknown }> = [];
  events.push({ event: 'message_start', data: { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 15, output_tokens: 1 } } } });
  let index = 0;
  if (pieces.length) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    events.push({ event: 'ping', data: { type: 'ping' } });
    for (const piece of pieces) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index++;
  }
  for (const call of calls) {
    const args = JSON.stringify(call.args);
    const half = Math.floor(args.length / 2);
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } } });
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(0, half) } } });
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(half) } } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index++;
  }
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: calls.length ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 6 } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return sse(events);
}
