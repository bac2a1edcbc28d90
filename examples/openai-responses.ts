/**
 * An agent on the OpenAI Responses API, with reasoning carried between turns. It runs offline:
 * a small server on 127.0.0.1 answers the way /v1/responses does (a reasoning item with its
 * encrypted content, then a function call; once the call's output comes back, the answer), and
 * checks that the reasoning came back with the output. Point `baseUrl` at
 * https://api.openai.com/v1, give an `apiKey` and a reasoning model (`o4-mini`, `gpt-5`), and
 * the same code talks to OpenAI.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Toolkit, defineTool } from 'toolnexus-ts';
import { OpenAIResponsesModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

export async function main(): Promise<void> {
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  try {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'get_weather',
        description: 'Current weather for a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        run: (args) => `${String(args.city)}: 21°C, sunny`,
      }),
    );
    const model = new OpenAIResponsesModel({
      baseUrl,
      apiKey: 'sk-local-example',
      model: 'o4-mini',
      // Summaries of the reasoning stream as `reasoning` events; its encrypted content is asked for by default (store: false).
      params: { reasoning: { effort: 'low', summary: 'auto' } },
    });

    // The model on its own, streamed: reasoning summaries as they come, then the turn.
    let reasoning = '';
    for await (const event of model.stream({ messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: toolkit.tools() })) {
      if (event.type === 'reasoning') reasoning += event.delta;
      if (event.type === 'response') console.log(`turn 1: ${event.response.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ')}`);
    }
    console.log(`reasoning summary: ${reasoning}`);

    // In the loop: the reasoning item goes back before the call it led to, then the call's output.
    const result = await new AgentRunner({ model, toolkit }).run('Weather in Paris?');
    console.log(`${result.status} after ${result.turns} turns: ${result.text}`);
    if (result.text.includes('did not come back')) throw new Error('the reasoning item was not sent back');
    const kept = result.messages.flatMap((m) => (m.role === 'assistant' ? (m.items ?? []) : []));
    console.log(`provider items kept in the transcript: ${kept.map((i) => i.type).join(', ')}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---- The stand-in for /v1/responses ----------------------------------------------------------

const reasoningItem = {
  id: 'rs_example',
  type: 'reasoning',
  encrypted_content: 'gAAAAB-example-encrypted-reasoning',
  summary: [{ type: 'summary_text', text: 'The user wants the weather; ask the tool.' }],
};
const callItem = {
  id: 'fc_example',
  type: 'function_call',
  status: 'completed',
  call_id: 'call_paris',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
};

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  const body = JSON.parse(raw) as { input: Array<Record<string, unknown>>; stream?: boolean };
  const output = body.input.find((item) => item.type === 'function_call_output');
  let items: unknown[];
  if (!output) items = [reasoningItem, callItem];
  else {
    // The API needs the reasoning item back, right before its call: check it did come back.
    const at = body.input.findIndex((item) => item.id === 'rs_example');
    const intact = at >= 0 && JSON.stringify(body.input[at]) === JSON.stringify(reasoningItem) && body.input[at + 1]?.id === 'fc_example';
    const text = `${String(output.output)}.${intact ? '' : ' (the reasoning did not come back!)'}`;
    items = [
      {
        id: 'msg_example',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
    ];
  }
  const response = {
    id: 'resp_example',
    object: 'response',
    status: 'completed',
    output: items,
    usage: { input_tokens: 40, output_tokens: 12, output_tokens_details: { reasoning_tokens: 8 } },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(response));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (data: Record<string, unknown>): void => void res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
  items.forEach((item, index) => {
    send({ type: 'response.output_item.added', output_index: index, item });
    if (item === reasoningItem)
      for (const word of reasoningItem.summary[0]?.text.split(/(?<= )/) ?? [])
        send({ type: 'response.reasoning_summary_text.delta', output_index: index, delta: word });
    send({ type: 'response.output_item.done', output_index: index, item });
  });
  send({ type: 'response.completed', response });
  res.end();
}

if (require.main === module) void main();
