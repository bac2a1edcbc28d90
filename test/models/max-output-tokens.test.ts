/**
 * ModelRequest.maxOutputTokens on the wire of every HTTP model, against a real server on
 * 127.0.0.1: sent as the provider's own limit field, never raising a lower limit in `params`,
 * and absent from requests that do not ask for it.
 */
import { AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel, type ChatModel } from '../../src/models';
import { json, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let server: MockServer;
beforeEach(async () => {
  // The answer does not matter here: only what each model sent is checked.
  server = await startMockServer(json(400, { error: { message: 'no' } }));
});
afterEach(() => server.close());

const retry = { maxAttempts: 1 };
type Build = (url: string, params?: Record<string, unknown>) => ChatModel;
const models: Array<[string, Build, (body: Record<string, unknown>) => unknown]> = [
  [
    'OpenAIChatModel',
    (url, params) => new OpenAIChatModel({ baseUrl: `${url}/v1`, apiKey: 'k', model: 'm', retry, ...(params ? { params } : {}) }),
    (body) => body.max_completion_tokens,
  ],
  [
    'OpenAIResponsesModel',
    (url, params) => new OpenAIResponsesModel({ baseUrl: url, apiKey: 'k', model: 'm', retry, ...(params ? { params } : {}) }),
    (body) => body.max_output_tokens,
  ],
  [
    'AnthropicModel',
    (url, params) => new AnthropicModel({ baseUrl: url, apiKey: 'k', model: 'm', retry, maxTokens: 2048, ...(params ? { params } : {}) }),
    (body) => body.max_tokens,
  ],
  [
    'GeminiModel',
    (url, params) => new GeminiModel({ baseUrl: url, apiKey: 'k', model: 'm', retry, ...(params ? { params } : {}) }),
    (body) => (body.generationConfig as Record<string, unknown> | undefined)?.maxOutputTokens,
  ],
];
const lowerParams: Record<string, Record<string, unknown>> = {
  OpenAIChatModel: { max_completion_tokens: 3 },
  OpenAIResponsesModel: { max_output_tokens: 3 },
  AnthropicModel: { max_tokens: 3 },
  GeminiModel: { generationConfig: { maxOutputTokens: 3, temperature: 0 } },
};

async function send(model: ChatModel, maxOutputTokens?: number): Promise<Record<string, unknown>> {
  const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
  await model.complete(maxOutputTokens === undefined ? request : { ...request, maxOutputTokens }).catch(() => undefined);
  return server.requests.at(-1)?.body ?? {};
}

describe.each(models)('%s', (name, build, limitOf) => {
  it('sends maxOutputTokens as its limit field, and nothing new without it', async () => {
    expect(limitOf(await send(build(server.url), 7))).toBe(7);
    const plain = await send(build(server.url));
    expect(limitOf(plain)).toBe(name === 'AnthropicModel' ? 2048 : undefined);
  });

  it('keeps a lower limit of its params, and the rest of them', async () => {
    const body = await send(build(server.url, lowerParams[name]), 7);
    expect(limitOf(body)).toBe(3);
    if (name === 'GeminiModel') expect(body.generationConfig).toEqual({ maxOutputTokens: 3, temperature: 0 });
  });
});

it('OpenAIChatModel lowers the older max_tokens when its params use it, as many compatible servers know only that one', async () => {
  const body = await send(
    new OpenAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: 'k', model: 'm', retry, params: { max_tokens: 900 } }),
    7,
  );
  expect(body).toMatchObject({ max_tokens: 7 });
  expect(body).not.toHaveProperty('max_completion_tokens');
});
