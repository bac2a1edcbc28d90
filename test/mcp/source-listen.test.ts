/**
 * McpToolSource learns a 2026-07-28 server's resource and prompt list changes through
 * `subscriptions/listen`: the server (the SDK's own v2 `McpServer` behind `createMcpHandler`,
 * on 127.0.0.1) lets clients keep its lists for an hour (`ttlMs`), so only the change
 * notifications on the stream make the source read them afresh. See docs/mcp.md, "Both eras,
 * as a client".
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { McpToolSource } from '../../src/mcp';
import { sendWebResponse, webRequestOf } from '../../src/mcp/server/node-fetch';

const HOUR = { ttlMs: 3_600_000, cacheScope: 'private' as const };

describe('McpToolSource and a 2026-07-28 server whose lists may be kept an hour', () => {
  const resources = ['first'];
  const prompts = ['greet'];
  const handler = createMcpHandler(() => {
    const mcp = new McpServer(
      { name: 'listen-test', version: '1.0.0' },
      {
        capabilities: { resources: { listChanged: true }, prompts: { listChanged: true } },
        cacheHints: { 'resources/list': HOUR, 'prompts/list': HOUR },
      },
    );
    mcp.registerTool('ping', { description: 'Answers pong' }, () => ({ content: [{ type: 'text' as const, text: 'pong' }] }));
    for (const name of resources)
      mcp.registerResource(name, `test://${name}`, { description: `the ${name} resource` }, (uri) => ({
        contents: [{ uri: uri.href, text: name }],
      }));
    for (const name of prompts)
      mcp.registerPrompt(name, { description: `the ${name} prompt` }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: name } }],
      }));
    return mcp;
  });
  let http: Server;
  let url: string;

  beforeAll(async () => {
    http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body: unknown = text ? JSON.parse(text) : undefined;
        void handler.fetch(webRequestOf(req, res, body)).then((answer) => sendWebResponse(answer, res));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it('reads the resource and prompt lists afresh when the server tells of a change on the stream', async () => {
    const source = new McpToolSource({ config: { mcpServers: { kb: { type: 'http', url } } } });
    try {
      expect((await source.connect()).failed).toEqual([]);
      expect((await source.resources('kb')).map((resource) => resource.uri)).toEqual(['test://first']);
      expect((await source.prompts('kb')).map((prompt) => prompt.name)).toEqual(['greet']);

      resources.push('second');
      prompts.push('farewell');
      // Kept for an hour: without the notification the source would still read the old lists.
      expect((await source.resources('kb')).map((resource) => resource.uri)).toEqual(['test://first']);
      handler.notify.resourcesChanged();
      handler.notify.promptsChanged();
      let uris: string[] = [];
      let names: string[] = [];
      // Polled (jest's timeout bounds it): the notification reaches the client on its own stream.
      for (;;) {
        uris = (await source.resources('kb')).map((resource) => resource.uri);
        names = (await source.prompts('kb')).map((prompt) => prompt.name);
        if (uris.length > 1 && names.length > 1) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(uris).toEqual(['test://first', 'test://second']);
      expect(names).toEqual(['greet', 'farewell']);
    } finally {
      await source.close();
    }
  });
});
