/**
 * MCP across two processes shares one trace: the test process calls a tool through
 * McpToolSource (CLIENT span, trace context in `_meta`), a child serves it with serveMcp
 * (SERVER span, exported over OTLP/HTTP to a receiver on 127.0.0.1) as the client span's child.
 */
import { SpanKind } from '@opentelemetry/api';
import { Toolkit } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';
import { startChild, until, type Started } from '../fixtures/children';
import { startOtlpReceiver, type OtlpReceiver } from '../fixtures/telemetry/otlp-receiver';
import { only, startOtel, type Otel } from '../fixtures/telemetry/sdk';

let receiver: OtlpReceiver;
let server: Started;
let otel: Otel;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  otel = startOtel();
  server = startChild('telemetry/mcp-traced-server.ts', [receiver.url]);
  await until(() => server.stdout().includes('\n'), 30_000, 'the MCP server to print its URL');
});
afterAll(async () => {
  server.kill('SIGTERM');
  await server.exited;
  await receiver.close();
  await otel.shutdown();
});

it('the client span and the server span in another process share one trace, parent and child', async () => {
  const url = server.stdout().trim();
  const source = new McpToolSource({
    config: { servers: { shop: { type: 'http', url } } },
    telemetry: { tracerProvider: otel.tracerProvider },
  });
  try {
    expect((await source.connect()).failed).toEqual([]);
    const toolkit = new Toolkit({ telemetry: { tracerProvider: otel.tracerProvider } });
    source.register(toolkit);
    const result = await toolkit.execute('shop_stock', { sku: 'A-1' }, { callId: 'call_1' });
    expect(result).toEqual({ output: 'A-1: 12 units', isError: false });
  } finally {
    await source.close();
  }
  const tool = only(otel.spans(), 'execute_tool shop_stock');
  const client = only(otel.spans(), 'tools/call stock');
  expect(client.kind).toBe(SpanKind.CLIENT);
  expect(client.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
  expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'stock', 'network.transport': 'tcp' });
  // The source speaks 2026-07-28 to this server (docs/mcp.md, "Both eras, as a client"): stateless,
  // so no MCP session to name on either side; the trace travels in each request's _meta.
  expect(client.attributes['mcp.session.id']).toBeUndefined();

  await until(() => receiver.spans().some((span) => span.name === 'tools/call stock'), 30_000, 'the server span');
  const served = receiver.spans().filter((span) => span.name === 'tools/call stock');
  expect(served).toHaveLength(1);
  const [span] = served;
  expect(span?.service).toBe('mcp-server');
  expect(span?.kind).toBe(2); // SERVER
  expect(span?.traceId).toBe(client.spanContext().traceId);
  expect(span?.parentSpanId).toBe(client.spanContext().spanId);
  expect(span?.attributes).toMatchObject({ 'mcp.method.name': 'tools/call' });
  expect(span?.attributes['mcp.session.id']).toBeUndefined();
  // The served tool's own span is the server span's child, in the same trace.
  await until(() => receiver.spans().some((s) => s.name === 'execute_tool stock'), 30_000, 'the served tool span');
  const servedTool = receiver.spans().find((s) => s.name === 'execute_tool stock');
  expect(servedTool?.parentSpanId).toBe(span?.spanId);
});
