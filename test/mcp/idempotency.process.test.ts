/**
 * A served call runs once per idempotency key (docs/mcp.md, "Idempotency keys"; issue 50): two
 * serveMcp processes on one store (a SQLite file; the jest global setup's PostgreSQL), a client
 * connection to each, the same `_meta` key from the same principal: the tool runs once and both
 * get its outcome. Another principal's same key is its own call. McpToolSource sends
 * `ctx.idempotencyKey` itself (2026-07-28, the stateless era, through the same door).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Toolkit } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';
import { startChild, until, type Started } from '../fixtures/children';
import { TOKENS } from '../fixtures/mcp-mrtr-server';
import { SHARED_STORES, type SharedStore } from '../fixtures/store-spec';

const META_KEY = 'io.toolnexus/idempotency-key';

interface Served {
  child: Started;
  url: string;
}

async function serve(store: string, ledger: string, env: Record<string, string> = {}): Promise<Served> {
  const child = startChild('mcp-mrtr-server.ts', ['serve', store, ledger, '0', 'none'], {
    MRTR_KEY: 'idempotency-test-key-0123456789abcdef',
    ...env,
  });
  await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the server to print its URL');
  const url = child.stdout().split('\n')[0]?.trim() ?? '';
  if (!url.startsWith('http')) throw new Error(`the server did not start: ${child.stderr()}`);
  return { child, url };
}

function charges(ledger: string, tool = 'charge'): string[] {
  return existsSync(ledger)
    ? readFileSync(ledger, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${tool} `))
    : [];
}

/** The key lease of the slow-call test: renewed every third of it, with two thirds to spare on a loaded machine. */
const KEY_LEASE_MS = 1_500;

describe.each(SHARED_STORES)('served MCP calls keyed by idempotency key, across server processes on $name', ({ make }) => {
  jest.setTimeout(180_000);
  let shared: SharedStore;
  const running: Served[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    shared = await make(mkdtempSync(join(tmpdir(), 'mcp-keyed-')));
  });
  afterAll(async () => shared.drop());
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const served of running.splice(0)) {
      served.child.kill('SIGKILL');
      await served.child.exited;
    }
  });

  async function connect(url: string, token: string): Promise<Client> {
    const client = new Client({ name: 'keyed', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    return client;
  }

  it('runs the tool once for two connections to two processes with the same key; another principal’s key is its own', async () => {
    const ledger = join(mkdtempSync(join(tmpdir(), 'mcp-keyed-ledger-')), 'ledger');
    const [a, b] = [await serve(shared.spec, ledger), await serve(shared.spec, ledger)];
    running.push(a, b);
    const call = { name: 'charge', arguments: { customer: 'ada', cents: 700 }, _meta: { [META_KEY]: 'order-77' } };
    const first = (await (await connect(a.url, TOKENS.alice)).callTool(call)) as { content: Array<{ text: string }> };
    const second = (await (await connect(b.url, TOKENS.alice)).callTool(call)) as { content: Array<{ text: string }> };
    expect(first.content[0]?.text).toBe(`charged 700 cents to ada in process ${a.child.pid}`);
    // The second process ran nothing: it answered with the first process's outcome.
    expect(second.content[0]?.text).toBe(first.content[0]?.text);
    expect(charges(ledger)).toEqual([`charge ada 700 ${a.child.pid}`]);
    const bobs = (await (await connect(b.url, TOKENS.bob)).callTool(call)) as { content: Array<{ text: string }> };
    expect(bobs.content[0]?.text).toBe(`charged 700 cents to ada in process ${b.child.pid}`);
    expect(charges(ledger)).toHaveLength(2);
    // Without a key, every call runs.
    await (await connect(a.url, TOKENS.alice)).callTool({ name: 'charge', arguments: { customer: 'ada', cents: 700 } });
    expect(charges(ledger)).toHaveLength(3);
  });

  it('keeps the key of a call that runs longer than its lease: a repeat to another process meanwhile runs nothing, and gets the outcome after', async () => {
    const ledger = join(mkdtempSync(join(tmpdir(), 'mcp-keyed-ledger-')), 'ledger');
    const env = { KEY_LEASE_MS: String(KEY_LEASE_MS) };
    const [a, b] = [await serve(shared.spec, ledger, env), await serve(shared.spec, ledger, env)];
    running.push(a, b);
    const call = { name: 'slow_charge', arguments: { customer: 'cy', cents: 900 }, _meta: { [META_KEY]: 'order-slow' } };
    const first = (await connect(a.url, TOKENS.alice)).callTool(call, undefined, { timeout: 120_000 });
    await until(() => charges(ledger, 'slow_charge').length === 1, 60_000, 'the slow charge to start');
    // Three leases of real time: without renewals, the key would have lapsed and the repeat run the charge again.
    await new Promise((resolve) => setTimeout(resolve, 3 * KEY_LEASE_MS));
    type Text = { content: Array<{ text: string }>; isError?: boolean };
    let meanwhile: Text | undefined;
    const repeat = (await connect(b.url, TOKENS.alice)).callTool(call).then(
      (result) => (meanwhile = result as Text),
      (error: unknown) => (meanwhile = { content: [{ text: String(error) }], isError: true }),
    );
    // Settled as soon as it is answered, or as soon as it ran the charge a second time (the hole).
    await until(() => meanwhile !== undefined || charges(ledger, 'slow_charge').length > 1, 60_000, 'the repeat to be answered');
    expect(charges(ledger, 'slow_charge')).toHaveLength(1);
    await repeat;
    expect(meanwhile?.isError).toBe(true);
    expect(meanwhile?.content[0]?.text).toContain('still running');
    writeFileSync(`${ledger}.go`, '');
    const done = (await first) as { content: Array<{ text: string }> };
    expect(done.content[0]?.text).toBe(`charged 900 cents to cy in process ${a.child.pid}, slowly`);
    const after = (await (await connect(b.url, TOKENS.alice)).callTool(call)) as { content: Array<{ text: string }> };
    expect(after.content[0]?.text).toBe(done.content[0]?.text);
    expect(charges(ledger, 'slow_charge')).toEqual([`slow_charge cy 900 ${a.child.pid}`]);
  });

  it('McpToolSource sends the call’s idempotency key: the same call again, through another source, runs once', async () => {
    const ledger = join(mkdtempSync(join(tmpdir(), 'mcp-keyed-ledger-')), 'ledger');
    const served = await serve(shared.spec, ledger);
    running.push(served);
    const outputs: string[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const source = new McpToolSource({
        config: { mcpServers: { pay: { url: served.url, headers: { Authorization: `Bearer ${TOKENS.alice}` } } } },
      });
      clients.push(source);
      await source.connect();
      const toolkit = new Toolkit();
      source.register(toolkit);
      // A replay of one call after a crash: the same idempotency key (docs/tools.md).
      const result = await toolkit.execute('pay_charge', { customer: 'bo', cents: 300 }, { idempotencyKey: 'tnx_same-call' });
      outputs.push(result.output);
    }
    expect(outputs[1]).toBe(outputs[0]);
    expect(charges(ledger)).toHaveLength(1);
  });
});
