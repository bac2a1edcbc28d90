/**
 * Rich results over MCP (docs/mcp.md, "Results"): a served tool's PNG is an MCP `image`, a
 * file's bytes an embedded `resource` with a `blob`, media by URL a `resource_link`, as the
 * SDK's own Client (which validates every result against the protocol's schema) receives them
 * over Streamable HTTP on 127.0.0.1; and McpToolSource, calling the same server, gets them back
 * as content parts the runner shows a model (the link as media by URL).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { contentOf, defineTool, Toolkit, withContent } from 'toolnexus-ts';
import { McpToolSource, serveMcp, type McpHttpServerHandle } from 'toolnexus-ts/mcp';
import { makePng } from '../fixtures/png';

const PNG = makePng(2, 2, [0, 255, 0]);
const PNG_B64 = PNG.toString('base64');
const CSV_B64 = Buffer.from('day,sales\nmon,3\n').toString('base64');

let server: McpHttpServerHandle;
beforeAll(async () => {
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'report',
      description: 'The weekly report',
      inputSchema: { type: 'object' },
      run: () =>
        withContent('Weekly report', [
          { type: 'text', text: 'Weekly report' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'file', data: CSV_B64, mimeType: 'text/csv', filename: 'sales.csv' },
          { type: 'file', url: 'https://example.com/q3/report.pdf', mimeType: 'application/pdf' },
        ]),
    }),
  );
  server = await serveMcp(toolkit, { transport: 'http' });
});
afterAll(async () => {
  await server.close();
});

it('the SDK client receives an image, an embedded resource and a resource link', async () => {
  const client = new Client({ name: 'viewer', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  try {
    const result = await client.callTool({ name: 'report', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      { type: 'text', text: 'Weekly report' },
      { type: 'image', data: PNG_B64, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///sales.csv', mimeType: 'text/csv', blob: CSV_B64 } },
      { type: 'resource_link', uri: 'https://example.com/q3/report.pdf', name: 'report.pdf', mimeType: 'application/pdf' },
    ]);
  } finally {
    await client.close();
  }
});

it('McpToolSource brings them back as content parts, the link as a file by URL', async () => {
  const source = new McpToolSource({ config: { servers: { office: { type: 'http', url: server.url } } } });
  try {
    expect((await source.connect()).failed).toEqual([]);
    const toolkit = new Toolkit();
    source.register(toolkit);
    const result = await toolkit.execute('office_report', {});
    expect(result.output).toBe('Weekly report');
    expect(contentOf(result)).toEqual([
      { type: 'text', text: 'Weekly report' },
      { type: 'image', data: PNG_B64, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///sales.csv', mimeType: 'text/csv', blob: CSV_B64 } },
      { type: 'file', url: 'https://example.com/q3/report.pdf', mimeType: 'application/pdf', filename: 'report.pdf' },
    ]);
  } finally {
    await source.close();
  }
});
