/**
 * A suspended call over MCP 2026-07-28 (docs/mcp.md, "A suspended call over MCP"): the refund's
 * approval is an MRTR round trip whose sealed `requestState` names the stored suspension; the
 * retry is an answer, judged, claimed and replayed once, by whichever server process on the
 * store it reaches. Real parts: serveMcp in child processes (test/fixtures/mcp-mrtr-server.ts)
 * on one SQLite file and on the jest global setup's PostgreSQL, killed with SIGKILL; the SDK's own v2 Client; raw JSON-RPC for what a
 * well-behaved client never sends (a changed state, another principal's).
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startChild, until, outputOf, type Started } from '../fixtures/children';
import { TOKENS } from '../fixtures/mcp-mrtr-server';
import { rpc } from '../fixtures/mcp-rpc';
import { SHARED_STORES, type SharedStore } from '../fixtures/store-spec';

const KEY = 'mrtr-test-key-0123456789abcdef0123456789';
const VERSION = '2026-07-28';

interface Served {
  child: Started;
  url: string;
}

async function serve(
  store: string,
  ledger: string,
  port: number,
  policy: 'none' | 'manager',
  env: Record<string, string> = {},
): Promise<Served> {
  const child = startChild('mcp-mrtr-server.ts', ['serve', store, ledger, String(port), policy], { MRTR_KEY: KEY, ...env });
  await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the server to print its URL');
  const url = child.stdout().split('\n')[0]?.trim() ?? '';
  if (!url.startsWith('http')) throw new Error(`the server did not start: ${child.stderr()}`);
  return { child, url };
}

async function killed(served: Served): Promise<void> {
  served.child.kill('SIGKILL');
  await served.child.exited;
}

const refund = { name: 'refund', arguments: { customer: 'ada', cents: 1200 } };

function ledgerLines(ledger: string): string[] {
  return existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [];
}

describe.each(SHARED_STORES)('a suspended call over MCP 2026-07-28, across server processes on $name', ({ make }) => {
  jest.setTimeout(180_000);
  let shared: SharedStore;
  let ledger: string;
  const running: Served[] = [];

  // One store for the file's tests (each call is its own suspension); a ledger per test counts its runs.
  beforeAll(async () => {
    shared = await make(mkdtempSync(join(tmpdir(), 'mcp-mrtr-')));
  });
  afterAll(() => shared.drop());
  beforeEach(() => {
    ledger = join(mkdtempSync(join(tmpdir(), 'mcp-mrtr-ledger-')), 'ledger.txt');
  });
  afterEach(async () => {
    for (const served of running.splice(0)) await killed(served).catch(() => undefined);
  });

  const start = async (port: number, policy: 'none' | 'manager', env?: Record<string, string>): Promise<Served> => {
    const served = await serve(shared.spec, ledger, port, policy, env);
    running.push(served);
    return served;
  };

  it('the SDK v2 Client confirms the refund; the retry reaches a new process after a SIGKILL and the refund runs once', async () => {
    const first = await start(0, 'none');
    const port = new URL(first.url).port;
    let second: Served | undefined;
    const client = new Client(
      { name: 'v2-client', version: '1.0.0' },
      { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: { pin: VERSION } } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      // Between the round trips the server that asked dies; another process takes its port.
      await killed(first);
      second = await start(Number(port), 'none');
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(first.url), { requestInit: { headers: { authorization: `Bearer ${TOKENS.alice}` } } }),
    );
    const result = await client.callTool(refund);
    expect(result.content).toEqual([{ type: 'text', text: 'refunded 1200 cents to ada' }]);
    expect(asked).toEqual(['Refund 1200 cents to ada?']);
    const lines = ledgerLines(ledger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`ada 1200 ${second?.child.pid}`);
    await client.close();
  });

  it('a retry is answered once: again it gets the stored result; changed, foreign and expired states are refused and change nothing', async () => {
    const first = await start(0, 'none');
    const asked = await rpc(first.url, TOKENS.alice, 'tools/call', refund);
    expect(asked.result?.resultType).toBe('input_required');
    const [key] = Object.keys(asked.result?.inputRequests ?? {});
    expect(asked.result?.inputRequests?.[key as string]).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Refund 1200 cents to ada?', requestedSchema: { type: 'object', properties: {} } },
    });
    const state = asked.result?.requestState as string;
    await killed(first);
    const second = await start(0, 'none');
    const retry = { ...refund, requestState: state, inputResponses: { [key as string]: { action: 'accept' } } };

    // A changed state, another principal's and another request's: refused before anything is looked up.
    const [head, body, kid, mac] = state.split('.') as [string, string, string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = [head, Buffer.from(JSON.stringify({ ...payload, sub: 'bob' })).toString('base64url'), kid, mac].join('.');
    const tampered = await rpc(second.url, TOKENS.alice, 'tools/call', { ...retry, requestState: forged });
    expect(tampered.error).toMatchObject({ code: -32602, message: expect.stringContaining('signature does not verify') as string });
    const foreign = await rpc(second.url, TOKENS.bob, 'tools/call', retry);
    expect(foreign.error).toMatchObject({ code: -32602, message: expect.stringContaining('given to another principal') as string });
    const other = await rpc(second.url, TOKENS.alice, 'tools/call', { ...retry, arguments: { customer: 'ada', cents: 99_900 } });
    expect(other.error).toMatchObject({ code: -32602, message: expect.stringContaining('belongs to another request') as string });
    // A process whose clock reads two hours later: past the state's TTL (one hour).
    const later = await start(0, 'none', { CLOCK_OFFSET_MS: String(2 * 3_600_000) });
    const expired = await rpc(later.url, TOKENS.alice, 'tools/call', retry);
    expect(expired.error).toMatchObject({ code: -32602, message: expect.stringContaining('past its TTL') as string });
    expect(ledgerLines(ledger)).toHaveLength(0);

    // Two retries at the same instant, to two processes: one refund.
    const third = await start(0, 'none');
    const [a, b] = await Promise.all([
      rpc(second.url, TOKENS.alice, 'tools/call', retry),
      rpc(third.url, TOKENS.alice, 'tools/call', retry),
    ]);
    for (const done of [a, b]) expect(done.result?.content).toEqual([{ type: 'text', text: 'refunded 1200 cents to ada' }]);
    const again = await rpc(second.url, TOKENS.alice, 'tools/call', retry);
    expect(again.result?.content).toEqual([{ type: 'text', text: 'refunded 1200 cents to ada' }]);
    expect(ledgerLines(ledger)).toHaveLength(1);
  });

  it('when a manager must approve: the requester is sent to the inbox, her own approval is refused, the manager approves elsewhere and her retry gets the result', async () => {
    const first = await start(0, 'manager');
    const asked = await rpc(first.url, TOKENS.alice, 'tools/call', refund);
    expect(asked.result?.resultType).toBe('input_required');
    const waiting = Object.values(asked.result?.inputRequests ?? {});
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.params.mode).toBe('url');
    const id = decodeURIComponent(new URL(waiting[0]?.params.url as string).hash.slice(1));
    expect(id).toMatch(/^pnd-/);
    const state = asked.result?.requestState as string;

    // Her own approval, as if she had been asked the form: separation of duties refuses it, nothing changes.
    const own = await rpc(first.url, TOKENS.alice, 'tools/call', {
      ...refund,
      requestState: state,
      inputResponses: { [id]: { action: 'accept' } },
    });
    expect(own.result?.isError).toBe(true);
    expect(own.result?.content?.[0]?.text).toContain('refused');
    const still = await rpc(first.url, TOKENS.alice, 'tools/call', { ...refund, requestState: state });
    expect(still.result?.resultType).toBe('input_required');
    expect(ledgerLines(ledger)).toHaveLength(0);

    // The manager approves in another process (the inbox's path); the tool runs there, once.
    const answered = await outputOf<{ won: boolean; status: string }>(
      startChild('mcp-mrtr-server.ts', ['answer', shared.spec, ledger, id, 'mgr']),
      'answer',
    );
    expect(answered.won).toBe(true);
    await killed(first);
    const second = await start(0, 'manager');
    const done = await rpc(second.url, TOKENS.alice, 'tools/call', { ...refund, requestState: state });
    expect(done.result?.content).toEqual([{ type: 'text', text: 'refunded 1200 cents to ada' }]);
    expect(ledgerLines(ledger)).toHaveLength(1);
  });
});
