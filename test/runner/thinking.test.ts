/**
 * Anthropic extended thinking, programmatic tool calls and prompt caching, against a real
 * messages-API server on 127.0.0.1 that plays back responses recorded from the real API
 * (test/fixtures/runner/recorded/PROVENANCE.md; one stream there is hand-written, and says so).
 */
import { IsString } from 'class-validator';
import { InvalidArgumentError, Toolkit, defineTool } from 'toolnexus-ts';
import { AnthropicModel, ModelResponseError, type AnthropicModelOptions, type AssistantMessage } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent, type RunResult } from 'toolnexus-ts/agents';
import { anthropicText, json, sse, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { recordedBody, recordedEvents, recordedStream, recordedText } from '../fixtures/runner/recorded';
import { weatherToolkit } from '../fixtures/runner/tools';

const servers: MockServer[] = [];
async function serve(replies: Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function model(server: MockServer, options: Partial<AnthropicModelOptions> = {}): AnthropicModel {
  return new AnthropicModel({
    baseUrl: server.url,
    apiKey: 'ak-test-thinking',
    model: 'claude-sonnet-4-5',
    maxTokens: 2048,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    retry: { maxAttempts: 1 },
    ...options,
  });
}

class InvoiceArgs {
  @IsString() invoice!: string;
}
class CustomerArgs {
  @IsString() id!: string;
}

function toolkit(): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'checkSandboxErrors',
      description: 'Lists sandbox errors',
      inputSchema: { type: 'object', properties: {} },
      run: () => 'no errors',
    }),
    defineTool({ name: 'pay_invoice', description: 'Pays an invoice', args: InvoiceArgs, run: (args) => `paid ${args.invoice}` }),
    defineTool({ name: 'lookup_customer', description: 'Finds a customer', args: CustomerArgs, run: (args) => `customer ${args.id}: Ada` }),
  );
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function doneOf(events: RunEvent[]): RunResult {
  return (events.at(-1) as Extract<RunEvent, { type: 'done' }>).result;
}

/** The assistant content blocks a request sent back. */
function assistantBlocks(server: MockServer, request: number): unknown[] {
  const messages = server.requests[request]?.body.messages as Array<{ role: string; content: unknown[] }>;
  return messages.filter((m) => m.role === 'assistant').at(-1)?.content ?? [];
}

describe('Anthropic extended thinking', () => {
  it('streams the recorded thinking as reasoning events, keeps the signed block, and sends it back verbatim on the next turn', async () => {
    const server = await serve([recordedStream('anthropic-clear-thinking.1.chunks.txt'), anthropicText('Done.')]);
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });

    const events = await collect(runner.stream('What is 925 / 5?'));

    const reasoning = events.filter((e) => e.type === 'reasoning').map((e) => (e as { delta: string }).delta);
    expect(reasoning.join('')).toBe('The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185');
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta)).toEqual(['925', ' ÷ 5 ', '= 185']);
    const first = doneOf(events);
    expect(first).toMatchObject({ status: 'done', text: '925 ÷ 5 = 185' });
    expect(first.usage).toEqual({ inputTokens: 69, outputTokens: 53, cachedInputTokens: 0, cacheWriteInputTokens: 0 });
    const signature = (recordedEvents('anthropic-clear-thinking.1.chunks.txt')[13]?.delta as { signature: string }).signature;
    const turn = first.messages[1] as AssistantMessage;
    expect(turn.items).toEqual([
      {
        provider: 'anthropic',
        type: 'thinking',
        data: { type: 'thinking', thinking: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185', signature },
      },
      { provider: 'anthropic', type: 'text', data: { type: 'text', text: '925 ÷ 5 = 185' } },
    ]);
    expect(server.requests[0]?.body).toMatchObject({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, stream: true });

    // The transcript continues: the signed block goes back first, exactly as it came.
    await runner.run([...first.messages, { role: 'user', content: 'Thanks' }]);
    expect(assistantBlocks(server, 1)).toEqual(turn.items?.map((item) => item.data));
    expect(server.requests[1]?.raw).toContain(JSON.stringify(turn.items?.[0]?.data));
  });

  it('sends the recorded thinking block of a tool call back byte for byte with the tool result (non-streaming)', async () => {
    const server = await serve([recordedBody('issue-13430-thinking-tool-call.json'), anthropicText('No sandbox errors.')]);
    const result = await new AgentRunner({ model: model(server), toolkit: toolkit() }).run('Check the sandbox now');

    expect(result).toMatchObject({ status: 'done', text: 'No sandbox errors.', turns: 2 });
    const recorded = JSON.parse(recordedText('issue-13430-thinking-tool-call.json')) as { content: Array<Record<string, unknown>> };
    // What the provider sent, untouched: key order, the `caller` field, the signature.
    expect(assistantBlocks(server, 1)).toEqual(recorded.content);
    const raw = server.requests[1]?.raw ?? '';
    expect(raw).toContain(`"content":${JSON.stringify(recorded.content)}`);
    expect((server.requests[1]?.body.messages as unknown[])[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_017R7ACrx7NF7sLDDtvdQ1u9', content: 'no errors' }],
    });
    // thinking_tokens of the recorded usage is the turn's reasoning count.
    expect(result.turnUsage[0]).toEqual({
      inputTokens: 599,
      outputTokens: 59,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 18,
    });
  });

  it('keeps thinking, redacted_thinking, text and tool_use in their order from a stream (hand-written fixture)', async () => {
    const server = await serve([recordedStream('handwritten-thinking-redacted-tool-use.chunks.txt'), anthropicText('Paid.')]);
    const events = await collect(new AgentRunner({ model: model(server), toolkit: toolkit() }).stream('Pay inv-7'));

    expect(events.map((e) => e.type)).toEqual(['reasoning', 'reasoning', 'text', 'tool_call', 'tool_result', 'text', 'done']);
    const lines = recordedEvents('handwritten-thinking-redacted-tool-use.chunks.txt');
    const signature = (lines[5]?.delta as { signature: string }).signature;
    const redacted = lines[7]?.content_block;
    expect(assistantBlocks(server, 1)).toEqual([
      { type: 'thinking', thinking: 'Invoice inv-7 needs paying; the pay tool asks for approval.', signature },
      redacted,
      { type: 'text', text: 'Paying it now.' },
      { type: 'tool_use', id: 'toolu_01HandWrittenPay7', name: 'pay_invoice', input: { invoice: 'inv-7' }, caller: { type: 'direct' } },
    ]);
    const result = doneOf(events);
    expect(result.turnUsage[0]).toEqual({
      inputTokens: 412 + 2048 + 1024,
      outputTokens: 96,
      cachedInputTokens: 2048,
      cacheWriteInputTokens: 1024,
    });
    expect(result.toolCalls.map((c) => [c.name, c.arguments, c.result.output])).toEqual([
      ['pay_invoice', '{"invoice": "inv-7"}', 'paid inv-7'],
    ]);
  });

  it('reads thinking_tokens from the recorded message_delta as reasoning tokens', async () => {
    const server = await serve([recordedStream('anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt')]);
    const events = await collect(new AgentRunner({ model: model(server), toolkit: toolkit() }).stream('gcd(1071, 462)?'));
    const result = doneOf(events);
    expect(result.usage).toEqual({
      inputTokens: 47,
      outputTokens: 373,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 62,
    });
    expect(result.text).toContain('The last non-zero remainder is **21**.');
    expect(events.filter((e) => e.type === 'reasoning').length).toBe(4);
  });

  it('turns a whole thinking answer from a gateway that cannot stream into reasoning and text events', async () => {
    const server = await serve([
      json(200, {
        type: 'message',
        content: [
          { type: 'thinking', thinking: 'Short.', signature: 'sig-whole' },
          { type: 'text', text: 'Hi.' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, output_tokens: 2 },
      }),
    ]);
    const events = await collect(new AgentRunner({ model: model(server), toolkit: toolkit() }).stream('x'));
    expect(events.slice(0, 2)).toEqual([
      { type: 'reasoning', delta: 'Short.' },
      { type: 'text', delta: 'Hi.' },
    ]);
  });

  it('retries an overloaded answer and then plays the recorded stream', async () => {
    const server = await serve([
      json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      recordedStream('anthropic-clear-thinking.1.chunks.txt'),
    ]);
    const runner = new AgentRunner({ model: model(server, { retry: { maxAttempts: 2, baseDelayMs: 5 } }), toolkit: toolkit() });
    const result = doneOf(await collect(runner.stream('x')));
    expect(result.text).toBe('925 ÷ 5 = 185');
    expect(server.requests).toHaveLength(2);
  });

  it('bounds the content blocks one stream may open', async () => {
    const events: Array<{ event: string; data: unknown }> = [
      { event: 'message_start', data: { type: 'message_start', message: { content: [] } } },
    ];
    for (let index = 0; index <= 1024; index++)
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: 'x' } },
      });
    const server = await serve([sse(events)]);
    const consume = collect(new AgentRunner({ model: model(server), toolkit: toolkit() }).stream('x'));
    await expect(consume).rejects.toThrow(ModelResponseError);
    await expect(consume).rejects.toThrow('a stream has more than 1024 content blocks');
  });

  it('refuses a thinking budget the API would refuse, naming the bounds', () => {
    const base = { apiKey: 'k', model: 'c', maxTokens: 2048 };
    expect(() => new AnthropicModel({ ...base, thinking: { type: 'enabled', budget_tokens: 100 } })).toThrow(InvalidArgumentError);
    expect(() => new AnthropicModel({ ...base, thinking: { type: 'enabled', budget_tokens: 4096 } })).toThrow(
      'thinking.budget_tokens must be an integer from 1024 to below maxTokens (2048), got 4096',
    );
    expect(() => new AnthropicModel({ ...base, thinking: { type: 'sometimes' } as never })).toThrow(InvalidArgumentError);
    expect(() => new AnthropicModel({ ...base, promptCache: { ttl: '2h' as never } })).toThrow(
      'promptCache.ttl must be "5m" or "1h", got 2h',
    );
  });
});

describe('Anthropic programmatic tool calling', () => {
  it('runs the tool_use the recorded message_start already holds and sends the turn back as it came', async () => {
    const server = await serve([recordedStream('anthropic-message-start-prepopulated-content.chunks.txt'), anthropicText('Ada it is.')]);
    const events = await collect(new AgentRunner({ model: model(server), toolkit: toolkit() }).stream('Who is customer_123?'));

    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', 'text', 'done']);
    expect(events[0]).toEqual({
      type: 'tool_call',
      call: { id: 'toolu_followup', name: 'lookup_customer', arguments: '{"id":"customer_123"}' },
    });
    const start = recordedEvents('anthropic-message-start-prepopulated-content.chunks.txt')[0]?.message as { content: unknown[] };
    expect(assistantBlocks(server, 1)).toEqual(start.content);
    expect(doneOf(events)).toMatchObject({ status: 'done', text: 'Ada it is.' });
  });
});

describe('Anthropic prompt caching', () => {
  it('puts cache_control on the last tool, the system prompt and, when asked, the transcript', async () => {
    const server = await serve([
      json(200, {
        type: 'message',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, cache_read_input_tokens: 3000, cache_creation_input_tokens: 0, output_tokens: 2 },
      }),
    ]);
    const kit = toolkit();
    const runner = new AgentRunner({
      model: model(server, { thinking: undefined, promptCache: { messages: true, ttl: '1h' } }),
      toolkit: kit,
      systemPrompt: 'Be brief.',
    });
    const result = await runner.run('Hello');

    const body = server.requests[0]?.body as { system: unknown; tools: Array<Record<string, unknown>>; messages: unknown[] };
    const control = { type: 'ephemeral', ttl: '1h' };
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: control }]);
    expect(body.tools.map((tool) => tool.cache_control)).toEqual([undefined, undefined, control]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: control }] }]);
    expect(body).not.toHaveProperty('thinking');
    expect(result.usage).toEqual({ inputTokens: 3010, outputTokens: 2, cachedInputTokens: 3000, cacheWriteInputTokens: 0 });
  });

  it('sends a plain system string and no cache_control without the option', async () => {
    const server = await serve([anthropicText('ok')]);
    await new AgentRunner({ model: model(server, { thinking: undefined }), toolkit: toolkit(), systemPrompt: 'Be brief.' }).run('Hi');
    const raw = server.requests[0]?.raw ?? '';
    expect(raw).not.toContain('cache_control');
    expect(server.requests[0]?.body.system).toBe('Be brief.');
  });
});
