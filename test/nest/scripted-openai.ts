/**
 * A real OpenAI-compatible chat-completions server on 127.0.0.1 with a scripted "model":
 * asked to pay, it calls `transfer` (asked to sign, `sign`); shown a tool result, it answers with it. It decides
 * from the transcript alone, so a run resumed by another app instance gets the same replies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface WireMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
}

export interface ScriptedOpenAI {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  /** Every request body, parsed. */
  bodies: Array<{ model: string; messages: WireMessage[]; tools?: Array<{ function: { name: string } }> }>;
  close(): Promise<void>;
}

export async function startScriptedOpenAI(): Promise<ScriptedOpenAI> {
  const bodies: ScriptedOpenAI['bodies'] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw) as ScriptedOpenAI['bodies'][number];
      bodies.push(body);
      const last = body.messages[body.messages.length - 1];
      const message =
        last?.role === 'tool'
          ? { role: 'assistant', content: `Done: ${last.content ?? ''}` }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: `call_${++calls}`, type: 'function', function: toolFor(String(last?.content ?? '')) }],
            };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${bodies.length}`,
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message, finish_reason: last?.role === 'tool' ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** "pay 500 from acc-1 to acc-2" → `transfer` with its JSON arguments; "sign ..." → `sign`. */
function toolFor(prompt: string): { name: string; arguments: string } {
  if (prompt.startsWith('sign')) return { name: 'sign', arguments: '{}' };
  const match = /(\d+) from (\S+) to (\S+)/.exec(prompt);
  return { name: 'transfer', arguments: JSON.stringify(match ? { amount: Number(match[1]), from: match[2], to: match[3] } : {}) };
}
