/**
 * A stand-in for an OpenAI-compatible API on 127.0.0.1, so the example runs offline: the first
 * turn asks for the `refund` tool, any turn after a tool result answers with what it saw.
 * Point `baseURL` at a real provider instead and nothing else changes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startMockModel(): Promise<{ url: string; server: Server }> {
  let replies = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content?: unknown }> };
      const results = body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
      const message =
        results.length > 0
          ? { role: 'assistant', content: `Done: ${results.join('; ')}` }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'refund', arguments: '{"order":"A-1","cents":500}' } }],
            };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          // Each response its own id, as a provider's are (LangGraph's message list keeps one message per id).
          id: `chatcmpl-example-${++replies}`,
          object: 'chat.completion',
          created: 0,
          model: 'example',
          choices: [{ index: 0, message, finish_reason: results.length > 0 ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}
