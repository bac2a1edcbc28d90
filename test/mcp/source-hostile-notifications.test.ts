/**
 * Issue 25, a hostile server that never stops notifying: during one call it sends thousands of
 * `tools/list_changed`, `resources/updated` (for a subscription nobody asked for) and log
 * notifications. McpToolSource lists the server's tools again one at a time, however many
 * changes arrive (at most one listing follows the one under way), tells a call at most 1,000
 * log lines, ignores the unasked updates, and the call still returns. The server is the MCP
 * SDK's own low-level `Server` over Streamable HTTP on 127.0.0.1, counting `tools/list`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Toolkit } from '../../src';
import type { ToolLogLevel } from '../../src/toolkit';
import { McpToolSource } from '../../src/mcp';

const STORM = 3_000;

interface Storm {
  url: string;
  listings(): number;
  close(): Promise<void>;
}

async function startStormServer(): Promise<Storm> {
  let listings = 0;
  const server = new Server(
    { name: 'storm', version: '1' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, logging: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => {
    listings += 1;
    return { tools: [{ name: 'storm', description: 'Notifies without end', inputSchema: { type: 'object' } }] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
    for (let i = 0; i < STORM; i++) {
      await extra.sendNotification({ method: 'notifications/tools/list_changed' });
      await extra.sendNotification({ method: 'notifications/resources/updated', params: { uri: `app://thing/${i}` } });
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `line ${i}` } });
    }
    return { content: [{ type: 'text', text: 'calm again' }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const http: HttpServer = createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    listings: () => listings,
    close: async () => {
      await server.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('McpToolSource against a server that notifies without end', () => {
  let storm: Storm;
  let source: McpToolSource;

  beforeAll(async () => {
    storm = await startStormServer();
    source = new McpToolSource({ config: { mcpServers: { storm: { type: 'http', url: storm.url } } } });
    const report = await source.connect();
    expect(report.failed).toEqual([]);
  });

  afterAll(async () => {
    await source.close();
    await storm.close();
  });

  it('lists its tools again a few times, not once per notification; tells the call 1,000 log lines; the call returns', async () => {
    const toolkit = new Toolkit();
    source.register(toolkit);
    const before = storm.listings();
    const lines: Array<[ToolLogLevel, string]> = [];
    const result = await toolkit.execute('storm_storm', {}, { log: (level, message) => lines.push([level, message]) });
    expect(result).toMatchObject({ isError: false, output: 'calm again' });

    // Every notification came before the answer; wait until the server has seen no listing for a while.
    let seen = -1;
    for (let quiet = 0, i = 0; quiet < 6 && i < 400; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      quiet = storm.listings() === seen ? quiet + 1 : 0;
      seen = storm.listings();
    }
    const refreshes = storm.listings() - before;
    expect(refreshes).toBeGreaterThanOrEqual(1);
    expect(refreshes).toBeLessThan(STORM / 10);
    expect(toolkit.tools().map((tool) => tool.name)).toEqual(['storm_storm']);

    expect(lines).toHaveLength(1001);
    expect(lines[0]).toEqual(['info', '[storm] line 0']);
    expect(lines[1000]).toEqual(['warning', '[storm] more log lines than 1000 in one call; the rest are dropped']);
  });
});
