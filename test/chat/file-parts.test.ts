/**
 * Rich results in the chat (docs/chat.md, "Rich results"): a tool that returns a real PNG and a
 * PDF by URL shows them in the UI message stream as `file` parts after its output, as the AI
 * SDK's own client (DefaultChatTransport + readUIMessageStream, ai@7) reads them into the
 * assistant message; a returning customer's stored thread (`chatThread`) shows them again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { defineTool, Toolkit, withContent } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { chatHandler, chatThread } from 'toolnexus-ts/chat';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { makePng } from '../fixtures/png';

const ai = loadAiClient();
const PNG = makePng(3, 3, [0, 128, 255]);
const PNG_URL = `data:image/png;base64,${PNG.toString('base64')}`;

let dir: string;
let model: MockServer;
let store: SqliteStore;
let runner: AgentRunner;
let http: Server;
let url: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-files-'));
  model = await startMockServer([openaiCalls([{ id: 'call_chart', name: 'chart', args: {} }]), openaiText('Here is your chart.')]);
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'chart',
      description: 'Draws the sales chart',
      inputSchema: { type: 'object' },
      run: () =>
        withContent({ drawn: true }, [
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'file', url: 'https://example.com/report.pdf', mimeType: 'application/pdf' },
        ]),
    }),
  );
  store = new SqliteStore({ filename: join(dir, 'chat.db') });
  const chat = new OpenAIChatModel({ baseUrl: `${model.url}/v1`, apiKey: 'sk-test', model: 'gpt-4.1', retry: { maxAttempts: 1 } });
  runner = new AgentRunner({ model: chat, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  const handler = chatHandler(runner, { principal: () => ({ id: 'alice' }) });
  http = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
});

afterEach(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a tool’s image and file reach the page as file parts after its output, and again in the stored thread', async () => {
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url });
  const stream = await transport.sendMessages({
    chatId: 'chat-files',
    messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Show me the sales chart' }] }],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  let message: UIMessage | undefined;
  for await (const read of ai.readUIMessageStream<UIMessage>({ stream })) message = read;

  const parts = message?.parts.filter((part) => part.type !== 'step-start') ?? [];
  expect(parts.map((part) => part.type)).toEqual(['tool-chart', 'file', 'file', 'text']);
  expect(parts[0]).toMatchObject({ state: 'output-available', output: { drawn: true } });
  expect(parts[1]).toEqual({ type: 'file', url: PNG_URL, mediaType: 'image/png' });
  expect(parts[2]).toEqual({ type: 'file', url: 'https://example.com/report.pdf', mediaType: 'application/pdf' });

  const thread = await chatThread(runner, 'chat-files', { id: 'alice' });
  const stored = thread[1]?.parts.filter((part) => part.type === 'file');
  expect(stored).toEqual([
    { type: 'file', url: PNG_URL, mediaType: 'image/png' },
    { type: 'file', url: 'https://example.com/report.pdf', mediaType: 'application/pdf' },
  ]);
});
