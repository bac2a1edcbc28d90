/**
 * A real browser: a React page with @ai-sdk/react's useChat (bundled here with esbuild),
 * served by a chat server child process on 127.0.0.1, driven in Debian's Chromium with
 * playwright-core. Send a message, see the tool call, click approve, see the result streamed
 * into the same message; the refund ran once. Then the same with the server process killed
 * between the approval request and the click: a new process on the same SQLite file (and
 * port) finishes the run.
 */
import { buildSync } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, type Browser } from '../fixtures/browser';
import { chatModel, readLedger } from '../fixtures/chat/agent';
import { startChild, until, type Started } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

// The first server child transpiles the project on a cold cache: generous on a loaded machine.
jest.setTimeout(180_000);

let dir: string;
let bundle: string;
let model: MockServer;
let browser: Browser;
const children: Started[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-browser-'));
  bundle = join(dir, 'app.js');
  buildSync({
    entryPoints: [join(__dirname, '..', 'fixtures', 'chat', 'page.mjs')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    outfile: bundle,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  model = await startMockServer(chatModel);
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await browser?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startServer(
  file: string,
  ledger: string,
  port?: number,
  env: Record<string, string> = {},
): Promise<{ child: Started; port: number }> {
  const child = startChild('chat/server-child.ts', [file, ledger, model.url, bundle, ...(port ? [String(port)] : [])], env);
  children.push(child);
  await until(() => child.stdout().includes('"port"') || child.stderr().includes('Error'), 90_000, 'the chat server to listen');
  const line = child.stdout().split('\n')[0] as string;
  if (!line.includes('"port"')) throw new Error(`the chat server failed: ${child.stderr()}`);
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

async function askForRefund(page: Page, port: number): Promise<string> {
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.fill('input[name=prompt]', 'refund o-42 1500');
  await page.click('button[type=submit]');
  const tool = page.locator('.message.assistant .tool[data-state="approval-requested"]');
  await tool.waitFor();
  expect(await tool.locator('.tool-name').textContent()).toBe('tool-refund');
  expect(JSON.parse((await tool.locator('.tool-input').textContent()) as string)).toEqual({ order: 'o-42', cents: 1500 });
  return (await page.locator('.message.assistant').getAttribute('data-id')) as string;
}

async function approveAndSeeResult(page: Page, messageId: string): Promise<void> {
  await page.click('.message.assistant button.approve');
  const message = page.locator('.message.assistant');
  await message.locator('.tool[data-state="output-available"]').waitFor();
  await message.locator('p.text').waitFor();
  // One assistant message, the same one, with the tool's result and the model's answer streamed into it.
  expect(await message.count()).toBe(1);
  expect(await message.getAttribute('data-id')).toBe(messageId);
  expect(JSON.parse((await message.locator('.tool-output').textContent()) as string)).toEqual({ refunded: 'o-42', cents: 1500 });
  expect(await message.locator('p.text').textContent()).toBe('Done: {"refunded":"o-42","cents":1500}');
}

it('send, see the tool call, approve, see the result in the same message; the refund ran once', async () => {
  const ledger = join(dir, 'ledger-1');
  const { port } = await startServer(join(dir, 'chat-1.db'), ledger);
  const page = await browser.context.newPage();
  const messageId = await askForRefund(page, port);
  expect(readLedger(ledger)).toEqual([]);
  await approveAndSeeResult(page, messageId);
  expect(readLedger(ledger)).toHaveLength(1);
  await page.close();
});

it('the server process killed between the approval request and the click: a new one on the same SQLite file finishes the run', async () => {
  const ledger = join(dir, 'ledger-2');
  const file = join(dir, 'chat-2.db');
  const first = await startServer(file, ledger);
  const page = await browser.context.newPage();
  const messageId = await askForRefund(page, first.port);
  first.child.kill('SIGKILL');
  await first.child.exited;
  const second = await startServer(file, ledger, first.port);
  expect(second.port).toBe(first.port);
  await approveAndSeeResult(page, messageId);
  const lines = readLedger(ledger);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`${second.child.pid}`);
  await page.close();
});

it('a returning customer: the page reloaded while the approval is open shows it from the stored thread; approving finishes the run once', async () => {
  const ledger = join(dir, 'ledger-3');
  const { port } = await startServer(join(dir, 'chat-3.db'), ledger);
  const page = await browser.context.newPage();
  const messageId = await askForRefund(page, port);
  await page.reload();
  // Rebuilt from GET /api/chat?id=: the user's message, and the same assistant message with its open approval.
  const tool = page.locator('.message.assistant .tool[data-state="approval-requested"]');
  await tool.waitFor();
  expect(await page.locator('.message.user p.text').textContent()).toBe('refund o-42 1500');
  expect(await page.locator('.message.assistant').getAttribute('data-id')).toBe(messageId);
  expect(JSON.parse((await tool.locator('.tool-input').textContent()) as string)).toEqual({ order: 'o-42', cents: 1500 });
  expect(readLedger(ledger)).toEqual([]);
  await approveAndSeeResult(page, messageId);
  expect(readLedger(ledger)).toHaveLength(1);
  // Reloaded once more, the finished thread: the result and the answer, nothing left to approve.
  await page.reload();
  await page.locator('.message.assistant p.text').waitFor();
  expect(await page.locator('.message.assistant p.text').textContent()).toBe('Done: {"refunded":"o-42","cents":1500}');
  expect(await page.locator('button.approve').count()).toBe(0);
  expect(readLedger(ledger)).toHaveLength(1);
  await page.close();
});

const LOOKUP = '{"order":"o-42","status":"shipped"}';

async function askResearch(page: Page, port: number): Promise<void> {
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.fill('input[name=prompt]', 'research o-42');
  await page.click('button[type=submit]');
  await page.locator('.message.assistant .tool[data-tool-call="call_research_o-42"][data-state="output-available"]').waitFor();
  await page.locator('main[data-status="ready"]').waitFor();
}

it("a sub-agent's work stays out of the customer's message: its answer appears once, its own tool calls not at all", async () => {
  const { port } = await startServer(join(dir, 'chat-4.db'), join(dir, 'ledger-4'));
  const page = await browser.context.newPage();
  await askResearch(page, port);
  const message = page.locator('.message.assistant');
  expect(await message.locator('.tool .tool-name').allTextContents()).toEqual(['tool-research']);
  const text = (await message.locator('p.text').allTextContents()).join('');
  expect(text).toBe(`Done: Done: ${LOOKUP}`);
  expect(text.split(LOOKUP)).toHaveLength(2);
  expect(await message.locator('.sub-agent').count()).toBe(0);
  await page.close();
});

it("with subAgents: 'part', a sub-agent's work is its own part, apart from the customer's text and tools", async () => {
  const { port } = await startServer(join(dir, 'chat-5.db'), join(dir, 'ledger-5'), undefined, { CHAT_SUB_AGENTS: 'part' });
  const page = await browser.context.newPage();
  await askResearch(page, port);
  const message = page.locator('.message.assistant');
  expect(await message.locator('.tool .tool-name').allTextContents()).toEqual(['tool-research']);
  expect((await message.locator('p.text').allTextContents()).join('')).toBe(`Done: Done: ${LOOKUP}`);
  const parts = await message.locator('.sub-agent').allTextContents();
  expect(parts).toHaveLength(1);
  expect(JSON.parse(parts[0] as string)).toEqual({
    agent: 'research',
    toolCallId: 'call_research_o-42',
    text: `Done: ${LOOKUP}`,
    tools: [{ path: ['research'], toolCallId: 'call_lookup_o-42', toolName: 'lookup_order', state: 'done' }],
  });
  await page.close();
});
