// A scripted OpenAI-compatible chat-completions server on 127.0.0.1, run as its own
// process so its CPU is not charged to the client frameworks being measured.
//
// Script, decided from the request alone (stateless, so any number of agents can share it):
//   - no `tool` message yet  -> one assistant turn with two parallel tool calls
//                               get_weather {"city":"Paris"} and add {"a":2,"b":3}
//   - tool results present   -> the final answer FINAL_TEXT
// Every response (and every tool call) gets an id never used before: LangChain merges
// messages that share an id. Every adapter here asks without streaming; a `stream: true`
// request is refused with a 400 so an adapter that streams fails loudly, not unfairly, unless
// the mock runs with MOCK_STREAM=1 (guardrails.mjs, which measures streamed runs): it then
// streams the same answer as chat-completion chunks, the final text a word at a time.
import http from 'node:http';

import scenario from './scenario.cjs';

const { FINAL_TEXT } = scenario;
const MODEL = 'mock-gpt';

let sequence = 0;
const nextId = () => `${process.pid.toString(36)}${(++sequence).toString(36)}`;
const stats = { requests: 0, toolTurns: 0, finalTurns: 0, badFinal: 0 };

function plan(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const toolMessages = messages.filter((m) => m && m.role === 'tool');
  if (toolMessages.length === 0) {
    const id = nextId();
    return {
      kind: 'tools',
      id: `chatcmpl-${id}`,
      calls: [
        { id: `call_${id}_w`, name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) },
        { id: `call_${id}_a`, name: 'add', arguments: JSON.stringify({ a: 2, b: 3 }) },
      ],
    };
  }
  // The agent must have fed back both results, in the provider's shape, with our call ids.
  const contents = toolMessages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
  const ok =
    toolMessages.length === 2 && contents.some((c) => c.includes('Paris')) && contents.some((c) => /(^|[^0-9])5([^0-9]|$)/.test(c));
  if (!ok) stats.badFinal++;
  return { kind: 'final', id: `chatcmpl-${nextId()}`, text: ok ? FINAL_TEXT : `BAD TOOL RESULTS: ${contents.join(' | ')}` };
}

const usage = { prompt_tokens: 42, completion_tokens: 17, total_tokens: 59 };

function jsonResponse(p, created) {
  const message =
    p.kind === 'tools'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: p.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        }
      : { role: 'assistant', content: p.text };
  return {
    id: p.id,
    object: 'chat.completion',
    created,
    model: MODEL,
    choices: [{ index: 0, message, finish_reason: p.kind === 'tools' ? 'tool_calls' : 'stop', logprobs: null }],
    usage,
  };
}

/** The same answer as server-sent chat-completion chunks: the text word by word, each call whole, then usage. */
function streamed(p, created) {
  const chunk = (delta, finish = null) => ({
    id: p.id,
    object: 'chat.completion.chunk',
    created,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events = [chunk({ role: 'assistant', content: '' })];
  if (p.kind === 'tools') {
    p.calls.forEach((c, index) =>
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }] })),
    );
  } else {
    for (const word of p.text.split(/(?<= )/)) events.push(chunk({ content: word }));
  }
  events.push(chunk({}, p.kind === 'tools' ? 'tool_calls' : 'stop'));
  events.push({ id: p.id, object: 'chat.completion.chunk', created, model: MODEL, choices: [], usage });
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `mock serves POST /v1/chat/completions only, got ${req.method} ${req.url}` } }));
    return;
  }
  const parts = [];
  req.on('data', (d) => parts.push(d));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'body is not JSON' } }));
      return;
    }
    if (body.stream && process.env.MOCK_STREAM === '1') {
      stats.requests++;
      const p = plan(body);
      if (p.kind === 'tools') stats.toolTurns++;
      else stats.finalTurns++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': p.id });
      res.end(streamed(p, Math.floor(Date.now() / 1000)));
      return;
    }
    if (body.stream) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'this mock does not stream: ask with stream unset' } }));
      return;
    }
    stats.requests++;
    const p = plan(body);
    if (p.kind === 'tools') stats.toolTurns++;
    else stats.finalTurns++;
    const payload = JSON.stringify(jsonResponse(p, Math.floor(Date.now() / 1000)));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-request-id': p.id });
    res.end(payload);
  });
});
server.keepAliveTimeout = 60_000;

/** Starts listening; resolves to the base URL (…/v1). */
export function start(port = 0) {
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/v1`));
  });
}

export function close() {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

// As a child process: print the URL, answer "stats" on stdin, stop on "close" or when
// the parent goes away (stdin ends), so it never outlives the benchmark.
if (import.meta.url === `file://${process.argv[1]}`) {
  const url = await start(Number(process.env.MOCK_PORT ?? 0));
  process.stdout.write(JSON.stringify({ url }) + '\n');
  process.stdin.setEncoding('utf8');
  let buffered = '';
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line === 'stats') process.stdout.write(JSON.stringify({ stats }) + '\n');
      if (line === 'close') void close().then(() => process.exit(0));
    }
  });
  process.stdin.on('end', () => void close().then(() => process.exit(0)));
}
