/**
 * Rich tool results (docs/agents.md, "Rich results"): a tool returns a real PNG (and a PDF, and
 * media by URL), and each provider's request, as a server on 127.0.0.1 receives it, carries them
 * in that provider's documented shape:
 * - OpenAI Responses: `function_call_output.output` as a list of `input_text`, `input_image`
 *   (`image_url`, a data URL or the URL) and `input_file` (`filename` + `file_data` data URL, or
 *   `file_url`) (platform.openai.com/docs/api-reference/responses/create, function tool call output);
 * - Anthropic: `tool_result.content` as `text`, `image` (`source` base64 with `media_type`, or url)
 *   and `document` blocks (docs.anthropic.com, "Vision" and "PDF support", tool_result content);
 * - Gemini: `functionResponse.parts` of `inlineData {mimeType, data}` / `fileData {mimeType,
 *   fileUri}` (ai.google.dev, "Function calling", multimodal function responses);
 * - OpenAI Chat Completions, whose tool messages are text only: each part described in words.
 */
import { defineTool, Toolkit, withContent } from 'toolnexus-ts';
import { AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel, type ChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import {
  anthropicCalls,
  anthropicText,
  openaiCalls,
  openaiText,
  startMockServer,
  type MockServer,
  type Reply,
} from '../fixtures/runner/mock-servers';
import { geminiJson, responsesCall, responsesJson, responsesMessage } from '../fixtures/runner/provider-replies';
import { makePng, PNG_SIGNATURE } from '../fixtures/png';

const PNG = makePng(2, 2);
const PNG_B64 = PNG.toString('base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const PDF_B64 = PDF.toString('base64');

type Kind = 'responses' | 'anthropic' | 'gemini' | 'chat';

const servers: MockServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function modelOf(kind: Kind, url: string, name?: string): ChatModel {
  const retry = { maxAttempts: 1 };
  switch (kind) {
    case 'responses':
      return new OpenAIResponsesModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'gpt-5', retry });
    case 'anthropic':
      return new AnthropicModel({ baseUrl: url, apiKey: 'sk-ant-test', model: 'claude-sonnet-4-5', retry });
    case 'gemini':
      return new GeminiModel({ baseUrl: url, apiKey: 'AIza-test', model: name ?? 'gemini-3-pro-preview', retry });
    case 'chat':
      return new OpenAIChatModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'gpt-4.1', retry });
  }
}

const CALL_THEN_ANSWER: Record<Kind, [Reply, Reply]> = {
  responses: [responsesJson([responsesCall('call_1', 'snapshot', {})]), responsesJson([responsesMessage('I see a red square.')])],
  anthropic: [anthropicCalls([{ id: 'toolu_1', name: 'snapshot', args: {} }]), anthropicText('I see a red square.')],
  gemini: [geminiJson([{ functionCall: { id: 'fc_1', name: 'snapshot', args: {} } }]), geminiJson([{ text: 'I see a red square.' }])],
  chat: [openaiCalls([{ id: 'call_1', name: 'snapshot', args: {} }]), openaiText('I see a red square.')],
};

/** Runs one turn of `snapshot` (which returns `content`) and an answer; the second request's body. */
async function secondRequest(kind: Kind, content: Parameters<typeof withContent>[1], modelName?: string): Promise<Record<string, unknown>> {
  const server = await startMockServer(CALL_THEN_ANSWER[kind]);
  servers.push(server);
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'snapshot',
      description: 'Takes a picture',
      inputSchema: { type: 'object' },
      run: () => withContent('A red square', content),
    }),
  );
  const result = await new AgentRunner({ model: modelOf(kind, server.url, modelName), toolkit }).run('What colour is it?');
  expect(result.status).toBe('done');
  expect(server.requests).toHaveLength(2);
  return server.requests[1]?.body as Record<string, unknown>;
}

/** The tool result in a request body, wherever its provider puts it. */
function toolResultOf(kind: Kind, body: Record<string, unknown>): unknown {
  switch (kind) {
    case 'responses':
      return (body.input as Array<{ type: string }>).find((item) => item.type === 'function_call_output');
    case 'anthropic':
      return (body.messages as Array<{ content: unknown }>)[2]?.content;
    case 'gemini':
      return (body.contents as Array<{ parts: unknown[] }>)[2]?.parts;
    case 'chat':
      return (body.messages as Array<{ role: string }>).find((message) => message.role === 'tool');
  }
}

describe('a tool returning a PNG', () => {
  it('is a real PNG (the fixture makes one)', () => {
    expect(PNG.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(PNG.subarray(12, 16).toString('ascii')).toBe('IHDR');
  });

  const image = [{ type: 'image' as const, data: new Uint8Array(PNG), mimeType: 'image/png' }];
  const expected: Record<Kind, unknown> = {
    responses: {
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'A red square' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG_B64}` },
      ],
    },
    anthropic: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'text', text: 'A red square' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
        ],
      },
    ],
    gemini: [
      {
        functionResponse: {
          id: 'fc_1',
          name: 'snapshot',
          response: { output: 'A red square' },
          parts: [{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }],
        },
      },
    ],
    chat: {
      role: 'tool',
      tool_call_id: 'call_1',
      content: `A red square\n[image (image/png, ${PNG.length} bytes): not shown, this API takes only text in a tool result]`,
    },
  };

  it.each(['responses', 'anthropic', 'gemini', 'chat'] as const)(
    '%s: the request carries it in the provider’s image format',
    async (kind) => {
      const body = await secondRequest(kind, image);
      expect(toolResultOf(kind, body)).toEqual(expected[kind]);
    },
  );
});

describe('Gemini before 3', () => {
  it('takes the media beside the function response, each after a line saying whose it is', async () => {
    const body = await secondRequest('gemini', [{ type: 'image', data: PNG, mimeType: 'image/png' }], 'gemini-2.5-flash');
    expect(toolResultOf('gemini', body)).toEqual([
      { functionResponse: { id: 'fc_1', name: 'snapshot', response: { output: 'A red square' } } },
      { text: 'The result of snapshot shows this image:' },
      { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
    ]);
  });
});

describe('files and media by URL', () => {
  const content = [
    { type: 'file' as const, data: PDF_B64, mimeType: 'application/pdf', filename: 'invoice.pdf' },
    { type: 'image' as const, url: 'https://example.com/chart.png', mimeType: 'image/png' },
    { type: 'file' as const, url: 'https://example.com/terms.pdf', mimeType: 'application/pdf' },
    { type: 'audio' as const, data: 'UklGRg==', mimeType: 'audio/wav' },
  ];

  it('responses: input_file with file_data or file_url, input_image by URL, audio in words', async () => {
    const body = await secondRequest('responses', content);
    expect(toolResultOf('responses', body)).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'A red square\n[audio (audio/wav, 4 bytes): not shown, this API takes no audio in a tool result]' },
        { type: 'input_file', filename: 'invoice.pdf', file_data: `data:application/pdf;base64,${PDF_B64}` },
        { type: 'input_image', image_url: 'https://example.com/chart.png' },
        { type: 'input_file', file_url: 'https://example.com/terms.pdf' },
      ],
    });
  });

  it('anthropic: document blocks for PDFs (base64 or URL), an image by URL, audio in words', async () => {
    const body = await secondRequest('anthropic', content);
    expect(toolResultOf('anthropic', body)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'text', text: 'A red square\n[audio (audio/wav, 4 bytes): not shown, this API takes no audio]' },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_B64 }, title: 'invoice.pdf' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/chart.png' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/terms.pdf' } },
        ],
      },
    ]);
  });

  it('gemini: inlineData for the PDF, fileData for URLs, audio in words', async () => {
    const body = await secondRequest('gemini', content);
    expect(toolResultOf('gemini', body)).toEqual([
      {
        functionResponse: {
          id: 'fc_1',
          name: 'snapshot',
          response: {
            output:
              'A red square\n[audio (audio/wav, 4 bytes): not shown, Gemini takes PNG, JPEG and WebP images, PDF and plain text in a function response]',
          },
          parts: [
            { inlineData: { mimeType: 'application/pdf', data: PDF_B64 } },
            { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/chart.png' } },
            { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/terms.pdf' } },
          ],
        },
      },
    ]);
  });
});
