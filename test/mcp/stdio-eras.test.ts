/**
 * serveMcp over stdio serves both eras (docs/mcp.md, "Two eras"): the server in a child process
 * (test/fixtures/mcp-stdio-server.ts, the MCP test Toolkit), reached by the SDK's own v2 Client
 * over its StdioClientTransport at 2026-07-28 (server/discover, the per-request `_meta`
 * envelope, a suspension answered `input_required` and retried with `inputResponses`) and at
 * 2025-11-25 (the suspension asked by elicitation); and by raw JSON-RPC lines for what a client
 * library hides: tasks, a request's own log level, a discover probe that falls back to initialize,
 * and (in-process, on streams of the test's) the toolkit's changes told to each era its way.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Tool, Toolkit } from '../../src';
import { serveMcp, type McpServerHandle } from '../../src/mcp';

const REGISTER = join(__dirname, '..', 'fixtures', 'register-ts.js');
const STDIO_SERVER = join(__dirname, '..', 'fixtures', 'mcp-stdio-server.ts');
const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

jest.setTimeout(120_000);

function stdioTransport(): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: ['-r', REGISTER, STDIO_SERVER], stderr: 'pipe' });
}

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>).map((item) => item.text ?? '').join('\n');
}

async function refundRuns(client: Client): Promise<number> {
  return (JSON.parse(textOf(await client.callTool({ name: 'runs', arguments: {} }))) as { refund: number }).refund;
}

describe('serveMcp over stdio, a 2026-07-28 client (the SDK v2 Client)', () => {
  let client: Client;
  const asked: string[] = [];
  beforeAll(async () => {
    client = new Client(
      { name: 'v2-stdio', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: VERSION } } },
    );
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return { action: 'accept' };
    });
    await client.connect(stdioTransport());
  });
  afterAll(() => client.close());

  it('negotiates 2026-07-28 by server/discover and lists the tools', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(VERSION);
    expect(client.getServerVersion()).toMatchObject({ name: 'toolnexus-test', version: '1.0.0' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('refund');
  });

  it('a suspended call answers input_required; the retry with inputResponses runs it once, a repeat runs nothing', async () => {
    const before = await refundRuns(client);
    const call = { name: 'refund', arguments: { customer: 'ada' } };
    const first = (await client.callTool(call, { allowInputRequired: true })) as unknown as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
      requestState: string;
    };
    expect(first.resultType).toBe('input_required');
    const [key, request] = Object.entries(first.inputRequests)[0] ?? [];
    expect(request).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Refund ada?', requestedSchema: { type: 'object', properties: {} } },
    });
    expect(await refundRuns(client)).toBe(before);

    const retry = { ...call, inputResponses: { [key as string]: { action: 'accept' } }, requestState: first.requestState };
    const done = await client.callTool(retry, { allowInputRequired: true });
    expect(textOf(done)).toBe(`refunded ada (run ${before + 1})`);
    const again = await client.callTool(retry, { allowInputRequired: true });
    expect(textOf(again)).toBe(`refunded ada (run ${before + 1})`);
    expect(await refundRuns(client)).toBe(before + 1);
  });

  it('the client fulfils the round itself (its elicitation handler) and the tool runs once', async () => {
    const before = await refundRuns(client);
    const result = await client.callTool({ name: 'refund', arguments: { customer: 'bo' } });
    expect(textOf(result)).toBe(`refunded bo (run ${before + 1})`);
    expect(asked).toEqual(['Refund bo?']);
    expect(await refundRuns(client)).toBe(before + 1);
  });
});

describe('serveMcp over stdio, a 2025-11-25 client (the SDK v2 Client, legacy)', () => {
  it('is asked by elicitation and the refund runs once', async () => {
    const client = new Client(
      { name: 'v2-legacy', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return { action: 'accept' };
    });
    await client.connect(stdioTransport());
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const result = await client.callTool({ name: 'refund', arguments: { customer: 'cy' } });
      expect(textOf(result)).toBe('refunded cy (run 1)');
      expect(asked).toEqual(['Refund cy?']);
    } finally {
      await client.close();
    }
  });
});

interface Line {
  id?: number;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  params?: Record<string, unknown>;
}

/** A stdio MCP server spoken to in JSON-RPC lines: in a child process, or in this one on two streams. */
class RawStdio {
  private readonly child?: ChildProcessWithoutNullStreams;
  private readonly input: NodeJS.WritableStream;
  readonly lines: Line[] = [];
  private buffer = '';
  private nextId = 1;

  constructor(streams?: { input: NodeJS.WritableStream; output: NodeJS.ReadableStream }) {
    if (!streams) this.child = spawn(process.execPath, ['-r', REGISTER, STDIO_SERVER]);
    this.input = streams?.input ?? (this.child as ChildProcessWithoutNullStreams).stdin;
    const output = streams?.output ?? (this.child as ChildProcessWithoutNullStreams).stdout;
    output.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      for (let end = this.buffer.indexOf('\n'); end >= 0; end = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, end).trim();
        this.buffer = this.buffer.slice(end + 1);
        if (line) this.lines.push(JSON.parse(line) as Line);
      }
    });
  }

  /** Sends one request and waits for its answer (60 s at most). */
  async request(method: string, params: Record<string, unknown>): Promise<Line> {
    const id = this.nextId++;
    this.input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = this.lines.find((line) => line.id === id && line.method === undefined);
      if (answer) return answer;
      if (Date.now() > deadline) throw new Error(`no answer to ${method}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.input.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** Waits (60 s at most) for a line that `matches`. */
  async seen(matches: (line: Line) => boolean, what: string): Promise<Line> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = this.lines.find(matches);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`never saw ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async close(): Promise<void> {
    if (!this.child) return;
    const child = this.child;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // The stdio binding's shutdown: the client closes the server's stdin, and the server exits.
    child.stdin.end();
    await exited;
  }
}

/** A 2026-07-28 request's own `_meta` envelope. */
function envelope(capabilities: Record<string, unknown>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    ...more,
  };
}

describe('serveMcp over stdio, 2026-07-28 requests in raw JSON-RPC lines', () => {
  let raw: RawStdio;
  beforeEach(() => {
    raw = new RawStdio();
  });
  afterEach(() => raw.close());

  it('a call of a client that declared the tasks extension is a task, answered by tasks/update and run once', async () => {
    const tasks = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
    const discovered = await raw.request('server/discover', { _meta: envelope(tasks) });
    expect(discovered.result).toMatchObject({ supportedVersions: [VERSION], capabilities: { extensions: { [TASKS]: {} } } });
    const created = await raw.request('tools/call', { name: 'refund', arguments: { customer: 'dee' }, _meta: envelope(tasks) });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = created.result?.taskId as string;
    // The task's methods are for a request that declares the extension, each on its own.
    const undeclared = await raw.request('tasks/get', { taskId, _meta: envelope({}) });
    expect(undeclared.error?.code).toBe(-32021);
    const updated = await raw.request('tasks/update', {
      taskId,
      inputResponses: { [taskId]: { action: 'accept' } },
      _meta: envelope(tasks),
    });
    expect(updated.error).toBeUndefined();
    const done = await raw.request('tasks/get', { taskId, _meta: envelope(tasks) });
    expect(done.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'refunded dee (run 1)' }] } });
  });

  it('reads each request on its own: its capabilities (no elicitation: out of band), its log level and progress token', async () => {
    const discovered = await raw.request('server/discover', { _meta: envelope({}) });
    expect(discovered.error).toBeUndefined();
    const unaskable = await raw.request('tools/call', { name: 'refund', arguments: { customer: 'eve' }, _meta: envelope({}) });
    // Not asked (this request declares no elicitation): the result says the call waits, out of band.
    expect(unaskable.result?.isError).toBe(true);
    expect(JSON.stringify(unaskable.result?.content)).toContain('This call is waiting for a person (approval): Refund eve?');
    const steps = await raw.request('tools/call', {
      name: 'steps',
      arguments: {},
      _meta: envelope({}, { 'io.modelcontextprotocol/logLevel': 'info', progressToken: 'p1' }),
    });
    expect(steps.result?.content).toEqual([{ type: 'text', text: 'three steps' }]);
    const logs = raw.lines.filter((line) => line.method === 'notifications/message').map((line) => line.params?.data);
    expect(logs).toEqual(['step 1 done', 'step 2 done', 'step 3 done']);
    const progress = raw.lines.filter((line) => line.method === 'notifications/progress').map((line) => line.params?.progress);
    expect(progress).toEqual([1, 2, 3]);
    // A legacy handshake on a connection that is 2026-07-28 now is refused, naming the revisions served.
    const late = await raw.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(late.error?.code).toBe(-32022);
  });

  it('a discover probe may fall back to initialize: the connection is then a 2025-11-25 session', async () => {
    await raw.request('server/discover', { _meta: envelope({}) });
    const init = await raw.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(init.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'toolnexus-test' } });
    raw.notify('notifications/initialized');
    const echoed = await raw.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(echoed.result).toMatchObject({ structuredContent: { text: 'hi' } });
  });
});

describe('serveMcp over stdio tells each era of the toolkit’s changes its own way (in-process streams)', () => {
  @Tool({ name: 'added_later', description: 'Registered while the client is connected' })
  class AddedLaterTool {
    run(): string {
      return 'here';
    }
  }

  async function served(): Promise<{ raw: RawStdio; toolkit: Toolkit; server: McpServerHandle }> {
    const toolkit = new Toolkit();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const server = await serveMcp(toolkit, { transport: 'stdio', stdin, stdout });
    return { raw: new RawStdio({ input: stdin, output: stdout }), toolkit, server };
  }

  it('2026-07-28: on the subscriptions/listen stream that asked for it, stamped with its subscription id', async () => {
    const { raw, toolkit, server } = await served();
    try {
      await raw.request('server/discover', { _meta: envelope({}) });
      const listening = raw.request('subscriptions/listen', { notifications: { toolsListChanged: true }, _meta: envelope({}) });
      const ack = await raw.seen((line) => line.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
      const subscription = (ack.params?._meta as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId'];
      toolkit.register(AddedLaterTool);
      const changed = await raw.seen((line) => line.method === 'notifications/tools/list_changed', 'the change');
      expect((changed.params?._meta as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId']).toBe(subscription);
      const listed = await raw.request('tools/list', { _meta: envelope({}) });
      expect((listed.result?.tools as Array<{ name: string }>).map((tool) => tool.name)).toEqual(['added_later']);
      await server.close();
      // Closing the server ends the stream gracefully: its listen request is answered.
      expect((await listening).result).toMatchObject({ resultType: 'complete' });
    } finally {
      await server.close();
    }
  });

  it('2025-11-25: to the session, unasked, as before', async () => {
    const { raw, toolkit, server } = await served();
    try {
      await raw.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
      raw.notify('notifications/initialized');
      toolkit.register(AddedLaterTool);
      const changed = await raw.seen((line) => line.method === 'notifications/tools/list_changed', 'the change');
      expect(changed.params?._meta).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
