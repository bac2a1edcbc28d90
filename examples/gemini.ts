/**
 * An agent on the Gemini API, with thought signatures carried between turns. It runs offline:
 * a small server on 127.0.0.1 answers the way `streamGenerateContent?alt=sse` and
 * `generateContent` do (two parallel function calls, the first carrying a thought signature and
 * no call ids, as Gemini 3 sends them; once the results come back, the answer), and checks that
 * the signature came back in place. Drop `baseUrl`, give your `apiKey` and a model
 * (`gemini-2.5-flash`, `gemini-3-pro-preview`), and the same code talks to Google.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Toolkit, defineTool } from 'toolnexus-ts';
import { GeminiModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

export async function main(): Promise<void> {
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'weather',
        description: 'Current weather for a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        run: (args) => `${String(args.city)}: ${args.city === 'Oslo' ? '4°C, rain' : '18°C, clear'}`,
      }),
    );
    const model = new GeminiModel({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'AIza-local-example', // sent as the x-goog-api-key header, never in the URL
      model: 'gemini-3-pro-preview',
      params: { generationConfig: { thinkingConfig: { includeThoughts: true } } },
    });
    const runner = new AgentRunner({ model, toolkit });
    for await (const event of runner.stream('Weather in Oslo and Lima?')) {
      if (event.type === 'tool_call')
        console.log(`call   ${event.call.name}(${event.call.arguments})  [id made up here: ${event.call.id.slice(0, 12)}...]`);
      if (event.type === 'tool_result') console.log(`result ${String(event.result.output)}`);
      if (event.type === 'text') process.stdout.write(event.delta);
      if (event.type === 'done') {
        console.log(`\n${event.result.status} after ${event.result.turns} turns; usage ${JSON.stringify(event.result.usage)}`);
        if (event.result.text.includes('did not come back')) throw new Error('the thought signature was not sent back');
      }
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---- The stand-in for the Gemini API -----------------------------------------------------------

const SIGNATURE = 'Q2lnbmF0dXJlLW9mLXRoZS1maXJzdC1jYWxs';

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  const body = JSON.parse(raw) as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> };
  const results = body.contents.flatMap((c) => c.parts).filter((p) => p.functionResponse !== undefined);
  let parts: Array<Record<string, unknown>>;
  if (results.length === 0) {
    parts = [
      { functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: SIGNATURE },
      { functionCall: { name: 'weather', args: { city: 'Lima' } } },
    ];
  } else {
    // Gemini 3 refuses a function call sent back without its signature: check it came back on the first call.
    const model = body.contents.find((c) => c.role === 'model');
    const signed = model?.parts[0]?.thoughtSignature === SIGNATURE;
    const said = results.map((p) => String((p.functionResponse as { response: { output: string } }).response.output)).join('; ');
    parts = [{ text: `Here it is: ${said}.${signed ? '' : ' (the signature did not come back!)'}` }];
  }
  const usageMetadata = { promptTokenCount: 30, candidatesTokenCount: 10, thoughtsTokenCount: 25 };
  if (!(req.url ?? '').includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }], usageMetadata }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  parts.forEach((part, index) => {
    const last = index === parts.length - 1;
    const chunk = { candidates: [{ content: { role: 'model', parts: [part] }, ...(last ? { finishReason: 'STOP' } : {}) }], usageMetadata };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  res.end();
}

if (require.main === module) void main();
