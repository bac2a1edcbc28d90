/**
 * The approval card as an MCP App (docs/mcp.md, "The approval card"): `serveMcp` over Streamable
 * HTTP on 127.0.0.1 with `approvalCard`, the card's `ui://` HTML read with `resources/read` and
 * rendered in a sandboxed iframe of a host page in a real headless Chromium, the host side being
 * `@modelcontextprotocol/ext-apps`' own `AppBridge` and `PostMessageTransport` (bundled for the
 * page by esbuild). The host forwards the card's `tools/call` to an MCP client of the test
 * process, authenticated as its person. The manager approves by clicking and the refund runs
 * once, with his edit; the requester sees no approve button; her forged `tools/call` of the
 * answer tool is refused by the answer policy and changes nothing.
 */
import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSync } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { Sensitive, success, Tool, Toolkit } from 'toolnexus-ts';
import { bearerTokens } from 'toolnexus-ts/inbox';
import { serveMcp, type McpHttpServerHandle } from 'toolnexus-ts/mcp';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { launchBrowser, type Browser } from '../fixtures/browser';
import { rpc, type Reply } from '../fixtures/mcp-rpc';

const structured = (reply: Reply): unknown => (reply.result as { structuredContent?: unknown } | undefined)?.structuredContent;

jest.setTimeout(90_000);

const CARD_URI = 'ui://toolnexus/approval-card';
const MCP_APP_MIME = 'text/html;profile=mcp-app';
const TOKENS = {
  rita: 'rita-token-0123456789abcdef0123',
  ann: 'ann-token-0123456789abcdef01234',
  fin1: 'fin1-token-0123456789abcdef0123',
};
const SECRET_NOTE = 'card-4111-1111-1111-1111';

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
  @IsOptional() @IsString() @Sensitive() note?: string;
}

const ran: Array<{ order: string; cents: number; by: string | undefined }> = [];

@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: { prompt: 'Refund it?', editable: true } })
class Refund {
  run(args: RefundArgs, ctx?: { approval?: { answeredBy?: { id: string } } }) {
    ran.push({ order: args.order, cents: args.cents, by: ctx?.approval?.answeredBy?.id });
    return success({ refunded: args.cents });
  }
}

class WireArgs {
  @IsString() to!: string;
}

@Tool({
  name: 'wire',
  description: 'Wires money',
  args: WireArgs,
  approval: { prompt: 'Wire it?', quorum: { of: 2, from: ['fin:1', 'fin:2', 'fin:3'] }, expiresInMs: 3_600_000 },
})
class Wire {
  run(args: WireArgs) {
    ran.push({ order: `wire ${args.to}`, cents: 0, by: undefined });
    return success({ wired: args.to });
  }
}

interface CallResult {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

let server: McpHttpServerHandle;
let coordinator: ResumeCoordinator;
let hostPage: Server;
let hostUrl: string;
let browser: Browser;
const clients: Client[] = [];

/** An MCP client of a host that renders MCP Apps, authenticated as `token`'s person. */
async function hostClient(token: string): Promise<Client> {
  const client = new Client(
    { name: 'card-test-host', version: '1.0.0' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MCP_APP_MIME] } } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return client;
}

/** The host side of ext-apps, bundled for the page: what an MCP Apps host runs around a View. */
function hostBundle(): string {
  const built = buildSync({
    stdin: {
      contents:
        "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';" +
        'window.McpAppsHost = { AppBridge, PostMessageTransport };',
      resolveDir: process.cwd(),
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'error',
  });
  return built.outputFiles[0]?.text ?? '';
}

const MOUNT = `
window.mountCard = async function (html, args, result, tool) {
  const { AppBridge, PostMessageTransport } = window.McpAppsHost;
  // MCP Apps: the view is told which tool call it was opened for (hostContext.toolInfo).
  const hostContext = tool ? { toolInfo: { id: 1, tool: { name: tool, inputSchema: { type: 'object' } } } } : undefined;
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.width = '600px';
  iframe.style.height = '500px';
  document.body.appendChild(iframe);
  const bridge = new AppBridge(null, { name: 'card-test-host', version: '1.0.0' }, { serverTools: {} }, hostContext ? { hostContext } : undefined);
  bridge.oncalltool = async (params) => JSON.parse(await window.hostCallTool(JSON.stringify(params)));
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  // A 2026-07-28 call that waits has no result yet: the host holds an input_required.
  if (result) await bridge.sendToolResult(result);
};`;

beforeAll(async () => {
  coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(Refund, Wire),
    store: new MemoryStore(),
    policy: rulesPolicy([
      { principals: ['manager:ann'], tools: ['refund'] },
      { principals: ['fin:1', 'fin:2', 'fin:3'], tools: ['wire'] },
    ]),
  });
  server = await serveMcp(coordinator, {
    transport: 'http',
    approvalCard: true,
    authorize: bearerTokens([
      { token: TOKENS.rita, principal: { id: 'customer:rita' } },
      { token: TOKENS.ann, principal: { id: 'manager:ann' } },
      { token: TOKENS.fin1, principal: { id: 'fin:1' } },
    ]),
  });
  const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>host</title></head><body><script>${hostBundle()}</script><script>${MOUNT}</script></body></html>`;
  hostPage = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page);
  });
  await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await browser?.close();
  await new Promise((resolve) => hostPage?.close(resolve));
  await server?.close();
});

/** How a host page's card reaches the server: a 2025-11-25 session's client, or a 2026-07-28 caller's token. */
type HostSide = Client | { token: string };

/**
 * A host page showing the card for `result` (none: a 2026-07-28 call that waits), opened for
 * `tool` when given (hostContext.toolInfo), its `tools/call` sent as `host`; the card's frame.
 */
async function showCard(
  host: HostSide,
  args: Record<string, unknown>,
  result: CallResult | null,
  tool?: string,
): Promise<{ page: Page; card: ReturnType<Page['frameLocator']> }> {
  const html =
    'token' in host
      ? ((await rpc(server.url, host.token, 'resources/read', { uri: CARD_URI })).result as { contents: Array<{ text: string }> })
          .contents[0]!.text
      : ((await host.readResource({ uri: CARD_URI })).contents[0] as { text: string }).text;
  const page = await browser.context.newPage();
  await page.exposeFunction('hostCallTool', async (params: string) => {
    const parsed = JSON.parse(params) as { name: string; arguments: Record<string, unknown> };
    return JSON.stringify('token' in host ? (await rpc(server.url, host.token, 'tools/call', parsed)).result : await host.callTool(parsed));
  });
  await page.goto(hostUrl);
  await page.evaluate(
    ([h, a, r, t]) =>
      (globalThis as unknown as { mountCard(h: unknown, a: unknown, r: unknown, t: unknown): Promise<void> }).mountCard(h, a, r, t),
    [html, args, result, tool ?? null] as const,
  );
  return { page, card: page.frameLocator('iframe') };
}

it('lists the card on the tool that needs approval, and serves it as self-contained MCP App HTML', async () => {
  const client = await hostClient(TOKENS.rita);
  const { tools } = await client.listTools();
  const refund = tools.find((tool) => tool.name === 'refund');
  expect(refund?._meta).toEqual({ ui: { resourceUri: CARD_URI } });
  const appOnly = tools.filter((tool) => (tool._meta?.ui as { visibility?: string[] } | undefined)?.visibility?.includes('app'));
  expect(appOnly.map((tool) => tool.name).sort()).toEqual(['toolnexus_answer_approval', 'toolnexus_approval_status']);
  const read = await client.readResource({ uri: CARD_URI });
  const [content] = read.contents as Array<{ uri: string; mimeType: string; text: string }>;
  expect(content).toMatchObject({ uri: CARD_URI, mimeType: MCP_APP_MIME });
  // No network: nothing is loaded from anywhere, and the page's own CSP forbids it.
  expect(content?.text).not.toMatch(/\b(src|href)=|https?:\/\//);
  expect(content?.text).toContain("default-src 'none'");
});

it('the requester sees no approve button, her forged answer is refused; the manager approves by clicking and it runs once', async () => {
  const rita = await hostClient(TOKENS.rita);
  const args = { order: 'ord_7', cents: 1200, note: SECRET_NOTE };
  const result = (await rita.callTool({ name: 'refund', arguments: args })) as CallResult;
  // Shown by the card, not elicited: the call waits, recorded, and the result names it.
  expect(result.isError).toBe(true);
  const pending = result._meta?.['toolnexus/pending'] as { id: string };
  expect(typeof pending.id).toBe('string');
  expect(JSON.stringify(result)).not.toContain(SECRET_NOTE);

  const shown = await showCard(rita, { order: 'ord_7', cents: 1200, note: '[redacted]' }, result);
  await shown.card.getByText('You may not answer this call').waitFor();
  expect(await shown.card.locator('#approve').count()).toBe(0);
  const ritaText = await shown.card.locator('main').innerText();
  expect(ritaText).toContain('Refund it?');
  expect(ritaText).toContain('customer:rita');
  expect(ritaText).not.toContain(SECRET_NOTE);
  await shown.page.close();

  // A forged post: the answer tool called directly by the requester. The policy refuses it.
  const forged = (await rita.callTool({
    name: 'toolnexus_answer_approval',
    arguments: { id: pending.id, decision: 'approve' },
  })) as CallResult;
  expect(forged.isError).toBe(true);
  expect(forged.content[0]?.text).toMatch(/refused|may not/i);
  expect(ran).toEqual([]);
  expect((await coordinator.get(pending.id))?.status).toBe('pending');

  const ann = await hostClient(TOKENS.ann);
  const manager = await showCard(ann, {}, result);
  await manager.card.locator('#approve').waitFor();
  // The edit form from the DTO's schema: the asked values, the @Sensitive one left out.
  expect(await manager.card.locator('input[name=cents]').inputValue()).toBe('1200');
  expect(await manager.card.locator('input[name=note]').inputValue()).toBe('');
  expect(await manager.card.locator('main').innerText()).not.toContain(SECRET_NOTE);
  await manager.card.locator('input[name=cents]').fill('500');
  await manager.card.locator('#approve').click();
  await manager.card.getByText('resolved').waitFor();
  expect(await manager.card.locator('#approve').count()).toBe(0);
  await manager.card.getByText('manager:ann').waitFor();
  expect(ran).toEqual([{ order: 'ord_7', cents: 500, by: 'manager:ann' }]);
  const stored = await coordinator.get(pending.id);
  expect(stored).toMatchObject({ status: 'resolved', answeredBy: { id: 'manager:ann' } });

  // The same answer again (a double click, a replayed post) gets the stored outcome and runs nothing.
  const again = (await ann.callTool({
    name: 'toolnexus_answer_approval',
    arguments: { id: pending.id, decision: 'approve' },
  })) as CallResult;
  expect(again.isError).toBeFalsy();
  expect(ran).toHaveLength(1);
  await manager.page.close();
});

it('at 2026-07-28 the card tools and the MRTR retry share one authority: the manager approves through the card, the requester retry gets the result', async () => {
  const refund = { name: 'refund', arguments: { order: 'ord_8', cents: 300 } };
  const asked = await rpc(server.url, TOKENS.rita, 'tools/call', refund);
  expect(asked.result?.resultType).toBe('input_required');
  const state = asked.result?.requestState as string;
  const waiting = (await coordinator.list({ status: 'pending' })).find((call) => (call.args as { order?: string }).order === 'ord_8');
  const id = waiting?.request.id as string;

  const ritaView = await rpc(server.url, TOKENS.rita, 'tools/call', { name: 'toolnexus_approval_status', arguments: { id } });
  expect(structured(ritaView)).toMatchObject({ id, status: 'pending', mayAnswer: false });
  const annView = await rpc(server.url, TOKENS.ann, 'tools/call', { name: 'toolnexus_approval_status', arguments: { id } });
  expect(structured(annView)).toMatchObject({ id, status: 'pending', mayAnswer: true, requestedBy: 'customer:rita' });

  const forged = await rpc(server.url, TOKENS.rita, 'tools/call', {
    name: 'toolnexus_answer_approval',
    arguments: { id, decision: 'approve' },
  });
  expect(forged.result?.isError).toBe(true);
  expect(ran.filter((entry) => entry.order === 'ord_8')).toEqual([]);

  const approved = await rpc(server.url, TOKENS.ann, 'tools/call', {
    name: 'toolnexus_answer_approval',
    arguments: { id, decision: 'approve' },
  });
  expect(approved.result?.isError).toBeFalsy();
  const done = await rpc(server.url, TOKENS.rita, 'tools/call', { ...refund, requestState: state });
  expect(done.result?.content?.[0]?.text).toContain('300');
  expect(ran.filter((entry) => entry.order === 'ord_8')).toEqual([{ order: 'ord_8', cents: 300, by: 'manager:ann' }]);
});

it('shows a quorum: who may answer, its progress after one signature, the expiry; the call waits for the second', async () => {
  const wire = { name: 'wire', arguments: { to: 'acme' } };
  await rpc(server.url, TOKENS.rita, 'tools/call', wire);
  const waiting = (await coordinator.list({ status: 'pending' })).find((call) => call.tool === 'wire');
  const id = waiting?.request.id as string;
  const signed = await rpc(server.url, TOKENS.fin1, 'tools/call', {
    name: 'toolnexus_answer_approval',
    arguments: { id, decision: 'approve' },
  });
  expect(signed.result?.isError).toBeFalsy();
  const view = structured(await rpc(server.url, TOKENS.fin1, 'tools/call', { name: 'toolnexus_approval_status', arguments: { id } }));
  expect(view).toMatchObject({ status: 'pending', answerers: ['fin:1', 'fin:2', 'fin:3'], quorum: { of: 2, approvals: ['fin:1'] } });
  expect(typeof (view as { expiresAt?: unknown }).expiresAt).toBe('string');
  expect(ran.filter((entry) => entry.order === 'wire acme')).toEqual([]);
  // Someone who neither asked nor may answer it is told there is no such approval, and cannot answer it.
  const stranger = await rpc(server.url, TOKENS.ann, 'tools/call', { name: 'toolnexus_approval_status', arguments: { id } });
  expect(stranger.result).toMatchObject({ isError: true, content: [{ type: 'text', text: `no approval ${id}` }] });
  const forged = await rpc(server.url, TOKENS.ann, 'tools/call', {
    name: 'toolnexus_answer_approval',
    arguments: { id, decision: 'approve' },
  });
  expect(forged.result).toMatchObject({ isError: true, content: [{ type: 'text', text: `no approval ${id}` }] });
  expect((await coordinator.get(id))?.signatures).toHaveLength(1);
});

it('at 2026-07-28 the card asked by tool and arguments finds the viewer’s own waiting call, else the oldest one the viewer may answer', async () => {
  const refund = { name: 'refund', arguments: { order: 'ord_10', cents: 100 } };
  // The same call asked twice: first by fin:1, then by the requester.
  expect((await rpc(server.url, TOKENS.fin1, 'tools/call', refund)).result?.resultType).toBe('input_required');
  expect((await rpc(server.url, TOKENS.rita, 'tools/call', refund)).result?.resultType).toBe('input_required');
  const ask = { name: 'toolnexus_approval_status', arguments: { tool: 'refund', arguments: { cents: 100, order: 'ord_10' } } };
  expect(structured(await rpc(server.url, TOKENS.rita, 'tools/call', ask))).toMatchObject({
    requestedBy: 'customer:rita',
    mayAnswer: false,
  });
  expect(structured(await rpc(server.url, TOKENS.ann, 'tools/call', ask))).toMatchObject({ requestedBy: 'fin:1', mayAnswer: true });
  expect(ran.filter((entry) => entry.order === 'ord_10')).toEqual([]);
});

it('at 2026-07-28 a card opened for the same call finds it for the manager, who approves; the requester sees no approve button and her retry gets the result', async () => {
  const refund = { name: 'refund', arguments: { order: 'ord_9', cents: 900 } };
  const asked = await rpc(server.url, TOKENS.rita, 'tools/call', refund);
  expect(asked.result?.resultType).toBe('input_required');
  const state = asked.result?.requestState as string;

  const rita = await showCard({ token: TOKENS.rita }, refund.arguments, null, 'refund');
  await rita.card.getByText('You may not answer this call').waitFor();
  expect(await rita.card.locator('#approve').count()).toBe(0);
  await rita.page.close();
  // Arguments no waiting call has: nothing is found, nothing is shown.
  const other = await rpc(server.url, TOKENS.ann, 'tools/call', {
    name: 'toolnexus_approval_status',
    arguments: { tool: 'refund', arguments: { order: 'ord_9', cents: 901 } },
  });
  expect(other.result).toMatchObject({
    isError: true,
    content: [{ type: 'text', text: 'no waiting approval of refund with these arguments' }],
  });

  const ann = await showCard({ token: TOKENS.ann }, refund.arguments, null, 'refund');
  await ann.card.locator('#approve').click();
  await ann.card.getByText('resolved').waitFor();
  await ann.page.close();
  expect(ran.filter((entry) => entry.order === 'ord_9')).toEqual([{ order: 'ord_9', cents: 900, by: 'manager:ann' }]);

  const done = await rpc(server.url, TOKENS.rita, 'tools/call', { ...refund, requestState: state });
  expect(done.result?.content?.[0]?.text).toContain('900');
  expect(ran.filter((entry) => entry.order === 'ord_9')).toHaveLength(1);
});
