/**
 * A hostile MCP server's sampling requests (test/fixtures/mcp-hostile-server.ts) answered by a
 * real chat-completions server on 127.0.0.1: the request's maxTokens reaches the model's call,
 * a model that ignores it has its answer withheld or cut, and a server that asks too often or
 * too much is refused before the host's policy or model is bothered. See docs/mcp.md, "Sampling".
 */
import { Toolkit } from '../../src';
import { McpToolSource, type McpSamplingOptions } from '../../src/mcp';
import { OpenAIChatModel } from '../../src/models';
import { startHostileServer, type HostileServer } from '../fixtures/mcp-hostile-server';
import { FakeClock } from '../fixtures/fake-clock';
import { openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

interface Setup {
  server: HostileServer;
  model: MockServer;
  toolkit: Toolkit;
  asked: number[];
}

async function setUp(
  sampling: { requests: number; maxTokens: number },
  reply: Reply,
  options: Partial<McpSamplingOptions> = {},
): Promise<Setup> {
  const model = await startMockServer(reply);
  running.push(model);
  const server = await startHostileServer({ sampling });
  running.push(server);
  const asked: number[] = [];
  const source = new McpToolSource({
    config: { mcpServers: { h: { type: 'http', url: server.url } } },
    sampling: {
      model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, apiKey: 'sk-test', model: 'gpt-test', retry: { maxAttempts: 1 } }),
      approve: ({ maxTokens }) => {
        asked.push(maxTokens);
        return true;
      },
      ...options,
    },
  });
  running.push(source);
  const report = await source.connect();
  expect(report.failed).toEqual([]);
  const toolkit = new Toolkit();
  source.register(toolkit);
  return { server, model, toolkit, asked };
}

async function sample(toolkit: Toolkit): Promise<void> {
  const name = toolkit.tools().find((tool) => tool.name.endsWith('sample'))?.name ?? 'missing';
  const result = await toolkit.execute(name, {});
  expect(result.isError).toBe(false);
}

const LONG = 'word '.repeat(1000);
const ok = { text: 'ok', stopReason: 'endTurn' };

describe("a hostile server's sampling requests", () => {
  it('sends maxTokens to the model, and withholds an answer longer than the model says it was asked for', async () => {
    const { server, model, toolkit } = await setUp(
      { requests: 1, maxTokens: 5 },
      openaiText(LONG, { prompt_tokens: 10, completion_tokens: 1000 }),
    );
    await sample(toolkit);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.body).toMatchObject({ model: 'gpt-test', max_completion_tokens: 5 });
    expect(server.sampled).toEqual([
      { error: expect.stringContaining("the host's model gave 1000 tokens, over the 5 asked for") as unknown },
    ]);
  });

  it('cuts the text of a model that reports no usage at four characters per token asked for', async () => {
    const { server, toolkit } = await setUp({ requests: 1, maxTokens: 5 }, openaiText(LONG, { prompt_tokens: 0, completion_tokens: 0 }));
    await sample(toolkit);
    expect(server.sampled).toEqual([{ text: LONG.slice(0, 20), stopReason: 'maxTokens' }]);
  });

  it('refuses requests past maxRequestsPerWindow without asking the policy or the model, until the window moves on', async () => {
    const clock = new FakeClock();
    const { server, model, toolkit, asked } = await setUp({ requests: 5, maxTokens: 5 }, openaiText('ok'), {
      maxRequestsPerWindow: 3,
      windowMs: 60_000,
      clock,
    });
    const refused = {
      error: expect.stringContaining('sampling request refused: more than 3 sampling requests in 60000 ms from this server') as unknown,
    };
    await sample(toolkit);
    expect(server.sampled).toEqual([ok, ok, ok, refused, refused]);
    expect(model.requests).toHaveLength(3);
    expect(asked).toHaveLength(3);

    clock.advance(59_999);
    await sample(toolkit);
    expect(model.requests).toHaveLength(3);
    clock.advance(1);
    await sample(toolkit);
    expect(server.sampled.slice(10)).toEqual([ok, ok, ok, refused, refused]);
    expect(model.requests).toHaveLength(6);
  });

  it("refuses a request whose maxTokens would go past the connection's token budget, counting what each call reported", async () => {
    // Each answer costs 10 + 20 = 30 tokens; each request holds 40 while it runs.
    const { server, model, toolkit, asked } = await setUp(
      { requests: 5, maxTokens: 40 },
      openaiText('ok', { prompt_tokens: 10, completion_tokens: 20 }),
      { maxTokensPerConnection: 100 },
    );
    await sample(toolkit);
    const refused = {
      error: expect.stringContaining("sampling request for 40 tokens refused: 10 of this connection's 100 are left") as unknown,
    };
    expect(server.sampled).toEqual([ok, ok, ok, refused, refused]);
    expect(model.requests).toHaveLength(3);
    expect(asked).toHaveLength(3);
  });

  it('limits a server to 10 requests a minute and 50 000 tokens by default', async () => {
    const { server, model } = await setUp({ requests: 11, maxTokens: 5 }, openaiText('ok')).then(async (setup) => {
      await sample(setup.toolkit);
      return setup;
    });
    expect(server.sampled.filter((outcome) => 'error' in outcome)).toHaveLength(1);
    expect(model.requests).toHaveLength(10);
  });

  it.each([
    ['maxRequestsPerWindow', Number.NaN],
    ['windowMs', -1],
    ['maxTokensPerConnection', 0],
  ] as const)('refuses a sampling.%s of %d when the source is made', (key, value) => {
    expect(
      () =>
        new McpToolSource({
          config: { mcpServers: {} },
          sampling: { model: new OpenAIChatModel({ apiKey: 'k', model: 'm' }), approve: () => true, [key]: value },
        }),
    ).toThrow(`sampling.${key} must be a positive number, got ${String(value)}`);
  });
});
