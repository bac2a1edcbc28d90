/**
 * The one redaction path (src/suspension/redact.ts): a `@Sensitive()` value a tool copied into
 * its prompt, its request's data and its outcome is shown nowhere — not in the webhooks'
 * pending and settled payloads (a real receiver on 127.0.0.1), not in `pending show` (text and
 * --json) or `pending history --json` (the CLI as a child process, with and without --tools),
 * not to an observer, the inbox, or an MCP client.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REDACTED, Toolkit, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator, redactCall, type SuspendedCall, type SuspensionObserver } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { Webhooks } from 'toolnexus-ts/webhooks';
import { serveMcp } from 'toolnexus-ts/mcp';
import { Redactor, viewOf } from '../../src/inbox/view';
import { startChild, type Exit } from '../fixtures/children';
import { CANARY, toolkit } from '../fixtures/canary-tools';

const TOOLS = join(__dirname, '..', 'fixtures', 'canary-tools.ts');
const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const ARGS = { cents: 700, iban: CANARY };

/** Fails with the place the canary was found. */
function expectNoCanary(label: string, shown: unknown): void {
  const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
  if (text.includes(CANARY)) throw new Error(`${label} shows the sensitive value: ${text.slice(0, 400)}`);
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-redaction-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('redactCall', () => {
  it('redacts the sensitive value in the prompt, data, answer, comment, outcome and chain, and keeps ids and deadlines', async () => {
    const coordinator = new ResumeCoordinator({ toolkit });
    const asked = pendingOf(await coordinator.execute('wire', ARGS))!;
    await coordinator.resolve({ id: asked.id, ok: true, data: { echoed: CANARY } }, undefined, {
      by: { id: 'ann' },
      comment: `ok for ${CANARY}`,
    });
    const stored = (await coordinator.get(asked.id)) as SuspendedCall;
    expect(JSON.stringify(stored)).toContain(CANARY); // the store keeps what the tool needs
    const shown = redactCall(toolkit, stored);
    expectNoCanary('redactCall', shown);
    expect(shown.args).toEqual({ cents: 700, iban: REDACTED });
    expect(shown.request).toMatchObject({ id: asked.id, kind: 'approval', prompt: `Wire 700 cents to ${REDACTED}?` });
    expect(shown.request.data).toEqual({ iban: REDACTED, summary: `to account ${REDACTED}`, nested: [{ note: `ref ${REDACTED}` }] });
    expect(shown.outcome).toEqual({ isError: false, output: `wired 700 cents to ${REDACTED}` });
    expect(shown.comment).toBe(`ok for ${REDACTED}`);
    expect(shown.answer).toMatchObject({ id: asked.id, ok: true, data: { echoed: REDACTED } });
    expect(shown.status).toBe('resolved');
    expect(shown.binding).toBeUndefined();
  });

  it('without the tool registered redacts the whole arguments and every string of them wherever it appears', async () => {
    const coordinator = new ResumeCoordinator({ toolkit });
    const asked = pendingOf(await coordinator.execute('wire', ARGS))!;
    const shown = redactCall(new Toolkit(), (await coordinator.get(asked.id))!);
    expect(shown.args).toBe(REDACTED);
    expectNoCanary('redactCall without the tool', shown);
  });

  it('tells observers and the inbox the same redacted copy', async () => {
    const seen: SuspendedCall[] = [];
    const observer: SuspensionObserver = { onPending: (c) => seen.push(c), onSettled: (c) => seen.push(c) };
    const coordinator = new ResumeCoordinator({ toolkit, observers: [observer] });
    const asked = pendingOf(await coordinator.execute('wire', ARGS))!;
    const redactor = new Redactor(toolkit);
    const viewPending = viewOf((await coordinator.get(asked.id))!, redactor, { actions: [], now: Date.now() });
    await coordinator.resolve({ id: asked.id, ok: true });
    const viewSettled = viewOf((await coordinator.get(asked.id))!, redactor, { actions: [], now: Date.now() });
    expect(seen.map((c) => c.status)).toEqual(['pending', 'resolved']);
    expectNoCanary('an observer', seen);
    expectNoCanary('the inbox', [viewPending, viewSettled]);
    expect(seen[1]!.outcome!.output).toBe(`wired 700 cents to ${REDACTED}`);
    expect(viewSettled.outcome!.output).toBe(seen[1]!.outcome!.output);
    expect(viewPending.prompt).toBe(seen[0]!.request.prompt);
  });
});

describe('webhooks', () => {
  let server: Server;
  const bodies: string[] = [];
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('send neither the pending nor the settled payload with the sensitive value', async () => {
    const hooks = new Webhooks({ url, secret: 'whsec-redaction-test-0123456789' });
    const coordinator = new ResumeCoordinator({ toolkit, observers: [hooks] });
    const asked = pendingOf(await coordinator.execute('wire', ARGS))!;
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'ann' }, comment: `paid ${CANARY}` });
    await hooks.flush();
    await hooks.close();
    expect(bodies).toHaveLength(2);
    const [first, second] = bodies.map((b) => JSON.parse(b) as { type: string; suspension: Record<string, unknown> });
    expect(first).toMatchObject({ type: 'suspension.pending', suspension: { prompt: `Wire 700 cents to ${REDACTED}?` } });
    expect(second).toMatchObject({
      type: 'suspension.settled',
      suspension: { outcome: { output: `wired 700 cents to ${REDACTED}` }, comment: `paid ${REDACTED}` },
    });
    for (const body of bodies) expectNoCanary('a webhook payload', body);
  });
});

describe('the CLI (a child process)', () => {
  const cli = (args: string[]): Promise<Exit> => startChild(CLI, args).exited;

  it('pending show (text and --json) and pending history --json never print it, with --tools or without', async () => {
    const file = join(dir, 'calls.db');
    const store = new SqliteStore(file);
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const open = pendingOf(await coordinator.execute('wire', ARGS))!;
    const settled = pendingOf(await coordinator.execute('wire', { cents: 800, iban: CANARY }))!;
    await coordinator.resolve({ id: settled.id, ok: true }, undefined, { by: { id: 'ann' }, comment: `ok ${CANARY}` });
    await store.close();

    const runs: Array<[string, string[]]> = [];
    for (const tools of [[], ['--tools', TOOLS]]) {
      for (const id of [open.id, settled.id]) {
        runs.push([`pending show ${tools.join(' ')}`, ['pending', 'show', id, '--store', `sqlite:${file}`, ...tools]]);
        runs.push([`pending show --json ${tools.join(' ')}`, ['pending', 'show', id, '--json', '--store', `sqlite:${file}`, ...tools]]);
      }
      runs.push([`pending history --json ${tools.join(' ')}`, ['pending', 'history', '--json', '--store', `sqlite:${file}`, ...tools]]);
      runs.push([`pending list --json ${tools.join(' ')}`, ['pending', 'list', '--json', '--store', `sqlite:${file}`, ...tools]]);
    }
    for (const [label, args] of runs) {
      const exit = await cli(args);
      expect({ label, code: exit.code, stderr: exit.stderr.includes(CANARY) }).toEqual({ label, code: 0, stderr: false });
      expect(exit.stdout).toContain(REDACTED);
      expectNoCanary(label, exit.stdout);
    }
    const history = JSON.parse(
      (await cli(['pending', 'history', '--json', '--store', `sqlite:${file}`, '--tools', TOOLS])).stdout,
    ) as SuspendedCall[];
    expect(history.find((c) => c.request.id === settled.id)).toMatchObject({
      args: { cents: 800, iban: REDACTED },
      outcome: { output: `wired 800 cents to ${REDACTED}` },
    });
  }, 120_000);
});

describe('MCP', () => {
  it('an MCP client without elicitation is told the request with the value redacted', async () => {
    const server = await serveMcp(new ResumeCoordinator({ toolkit }), { transport: 'http' });
    const client = new Client({ name: 'plain', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const result = await client.callTool({ name: 'wire', arguments: ARGS });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(`Wire 700 cents to ${REDACTED}?`);
      expectNoCanary('an MCP result', result);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
