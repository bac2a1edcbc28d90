/**
 * McpToolSource against MCP servers from npm that nobody here wrote
 * (@modelcontextprotocol/server-everything and server-filesystem, as child processes over
 * stdio, and the everything server's HTTP+SSE mode), driven by an AgentRunner with a
 * FunctionModel; and against this library's own serveMcp over HTTP for logs, progress, a
 * dropped session and approvals. See docs/mcp.md.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, type PendingRequest, type ToolContext } from '../../src';
import { AgentRunner } from '../../src/runner';
import { FunctionModel } from '../../src/models';
import { McpToolSource, serveMcp, type McpHttpServerHandle } from '../../src/mcp';
import { until } from '../fixtures/fake-clock';
import { mcpTestToolkit } from '../fixtures/mcp-tools';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** The pids of this process's children (the stdio servers it started). */
function childPids(): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
  } catch {
    return [];
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('McpToolSource with the npm servers everything and filesystem', () => {
  let dir: string;
  let source: McpToolSource;
  let toolkit: Toolkit;
  let report: Awaited<ReturnType<McpToolSource['connect']>>;
  const asked: PendingRequest[] = [];
  let answer: (request: PendingRequest) => Promise<{ id: string; ok: boolean; data?: Record<string, unknown> }>;
  let before: number[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tnx-mcp-fs-'));
    writeFileSync(join(dir, 'notes.txt'), 'buy milk\n');
    before = childPids();
    source = new McpToolSource({
      config: {
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          filesystem: { command: process.execPath, args: [FILESYSTEM, dir] },
          missing: { command: join(dir, 'no-such-server') },
          unset: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${TNX_TEST_UNSET_TOKEN}' } },
        },
      },
      env: { PATH: process.env.PATH },
      waitFor: (request) => {
        asked.push(request);
        return answer(request);
      },
      elicitationTimeoutMs: 5_000,
    });
    report = await source.connect();
    toolkit = new Toolkit();
    source.register(toolkit);
  });

  afterAll(async () => {
    await source.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects the working servers and reports each failing one, isolated', () => {
    expect(report.connected.map((entry) => entry.server).sort()).toEqual(['everything', 'filesystem']);
    const failed = Object.fromEntries(report.failed.map((entry) => [entry.server, entry.error]));
    expect(Object.keys(failed).sort()).toEqual(['missing', 'unset']);
    expect(failed.unset).toMatchObject({ code: 'TOOLNEXUS_MCP_CONFIG' });
    expect(failed.unset?.message).toBe(
      'server unset: headers.Authorization uses ${TNX_TEST_UNSET_TOKEN}, which is not set (a missing variable is refused rather than sent empty; write ${TNX_TEST_UNSET_TOKEN:-} for an explicit empty value)',
    );
    expect(failed.missing).toMatchObject({ code: 'TOOLNEXUS_MCP_CONNECTION' });
    expect(failed.missing?.message).toMatch(/^server missing: /);
    expect(toolkit.has('everything_echo')).toBe(true);
    expect(toolkit.has('filesystem_read_text_file')).toBe(true);
    expect(toolkit.get('filesystem_read_text_file')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { path: { type: 'string' } },
    });
  });

  it('lets an AgentRunner with a FunctionModel use both servers', async () => {
    const model = new FunctionModel(({ messages }) => {
      const results = messages.filter((message) => message.role === 'tool');
      if (results.length === 0) {
        return {
          toolCalls: [
            { id: 'c1', name: 'filesystem_read_text_file', arguments: { path: join(dir, 'notes.txt') } },
            { id: 'c2', name: 'everything_echo', arguments: { message: 'hello from the runner' } },
          ],
        };
      }
      return results.map((message) => ('content' in message ? String(message.content) : '')).join(' | ');
    });
    const result = await new AgentRunner({ model, toolkit }).run('read my notes and say hello');
    expect(result.status).toBe('done');
    expect(result.text).toContain('buy milk');
    expect(result.text).toContain('hello from the runner');
  });

  it('writes through the filesystem server inside its directory and is refused outside it', async () => {
    const written = await toolkit.execute('filesystem_write_file', { path: join(dir, 'out.txt'), content: 'written by a tool' });
    expect(written.isError).toBe(false);
    const read = await toolkit.execute('filesystem_read_text_file', { path: join(dir, 'out.txt') });
    expect(read.output).toBe('written by a tool');
    const outside = await toolkit.execute('filesystem_read_text_file', { path: '/etc/hostname' });
    expect(outside.isError).toBe(true);
    expect(outside.output).toMatch(/denied|outside/i);
  });

  it("passes the server's progress notifications to ctx.progress", async () => {
    const updates: Array<[number, number | undefined]> = [];
    const ctx: ToolContext = { progress: (progress, total) => updates.push([progress, total]) };
    const result = await toolkit.execute('everything_trigger-long-running-operation', { duration: 0.3, steps: 3 }, ctx);
    expect(result.output).toMatch(/Long running operation completed/);
    // The SDK client runs notification handlers a tick later than the response, so the last
    // update, sent just before the result, may come after the call has ended; the others may not.
    expect(updates.slice(0, 2)).toEqual([
      [1, 3],
      [2, 3],
    ]);
  });

  it("turns the server's elicitation into a pending request answered by waitFor, defaults filled in", async () => {
    asked.length = 0;
    answer = (request) =>
      Promise.resolve({ id: request.id, ok: true, data: { name: 'Ada Lovelace', check: true, email: 'ada@example.test' } });
    const result = await toolkit.execute('everything_trigger-elicitation-request', {});
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      kind: 'input',
      prompt: 'Please provide inputs for the following fields:',
      data: { server: 'everything' },
    });
    expect(result.isError).toBe(false);
    expect(result.output).toContain('Ada Lovelace');
    expect(result.output).toContain('It was a dark and stormy night.');
  });

  it('declines the elicitation when waitFor says no', async () => {
    answer = (request) => Promise.resolve({ id: request.id, ok: false });
    const result = await toolkit.execute('everything_trigger-elicitation-request', {});
    expect(result.output).toMatch(/declined/i);
  });

  it('ends the stdio servers’ child processes on close()', async () => {
    const started = childPids().filter((pid) => !before.includes(pid));
    expect(started.length).toBeGreaterThanOrEqual(2);
    await source.close();
    for (let i = 0; i < 200 && childPids().some((pid) => started.includes(pid)); i++) await new Promise((r) => setTimeout(r, 25));
    expect(childPids().filter((pid) => started.includes(pid))).toEqual([]);
    const after = await toolkit.execute('everything_echo', { message: 'still there?' });
    expect(after).toMatchObject({ isError: true, output: 'MCP server everything is not connected' });
  });
});

/** Connects `source`, registers its tools on a new toolkit and calls `shop_echo` once through it. */
async function echoedOnce(source: McpToolSource): Promise<Toolkit> {
  await source.connect();
  const toolkit = new Toolkit();
  source.register(toolkit);
  expect((await toolkit.execute('shop_echo', { text: 'one' })).output).toBe('{"text":"one"}');
  return toolkit;
}

describe('McpToolSource against serveMcp over HTTP', () => {
  it('brings the remote log lines and progress to the caller’s context', async () => {
    const server = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const source = new McpToolSource({ config: { servers: { shop: { type: 'http', url: server.url } } } });
    try {
      expect((await source.connect()).failed).toEqual([]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      const logs: string[] = [];
      const progress: number[] = [];
      const result = await toolkit.execute(
        'shop_steps',
        {},
        { log: (level, message) => logs.push(`${level} ${message}`), progress: (value) => progress.push(value) },
      );
      expect(result.output).toBe('three steps');
      expect(progress).toEqual([1, 2, 3]);
      expect(logs).toEqual(['info [shop] step 1 done', 'info [shop] step 2 done', 'info [shop] step 3 done']);
      expect(toolkit.get('shop_echo')).toMatchObject({ title: 'Echo', annotations: { readOnlyHint: true, idempotentHint: true } });
      const echoed = await toolkit.execute('shop_echo', { text: 'hi' });
      expect(echoed.metadata?.structuredContent).toEqual({ text: 'hi' });
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('answers the served approval through waitFor, so the remote tool runs exactly once', async () => {
    const server = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const asked: string[] = [];
    const source = new McpToolSource({
      config: { mcpServers: { shop: { url: server.url } } },
      waitFor: (request) => {
        asked.push(request.prompt);
        return { id: request.id, ok: true };
      },
    });
    try {
      await source.connect();
      const toolkit = new Toolkit();
      source.register(toolkit);
      const result = await toolkit.execute('shop_refund', { customer: 'ada' });
      expect(result).toMatchObject({ isError: false, output: 'refunded ada (run 1)' });
      expect(asked).toEqual(['Refund ada?']);
      expect(JSON.parse((await toolkit.execute('shop_runs', {})).output)).toMatchObject({ refund: 1 });
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('declines an elicitation nobody answers within elicitationTimeoutMs', async () => {
    const server = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const source = new McpToolSource({
      config: { mcpServers: { shop: { url: server.url } } },
      waitFor: () => new Promise(() => undefined),
      elicitationTimeoutMs: 100,
    });
    try {
      await source.connect();
      const toolkit = new Toolkit();
      source.register(toolkit);
      const result = await toolkit.execute('shop_refund', { customer: 'bob' });
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/declined/);
      expect(JSON.parse((await toolkit.execute('shop_runs', {})).output)).toMatchObject({ refund: 0 });
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('opens a new session when the server restarted: an idempotent call is asked again, another is said to be unknown', async () => {
    const first = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const port = Number(new URL(first.url).port);
    // Sessions are 2025-11-25's: pinned there, as a 2025-only server would make it.
    const source = new McpToolSource({ config: { mcpServers: { shop: { url: first.url } } }, protocolVersion: '2025-11-25' });
    let second: McpHttpServerHandle | undefined;
    try {
      const toolkit = await echoedOnce(source);
      await first.close();
      second = await serveMcp(mcpTestToolkit(), { transport: 'http', port });
      expect((await toolkit.execute('shop_echo', { text: 'two' })).output).toBe('{"text":"two"}');
      expect(second.sessionCount()).toBe(1);
      await second.close();
      second = await serveMcp(mcpTestToolkit(), { transport: 'http', port });
      const steps = await toolkit.execute('shop_steps', {});
      if (steps.isError) {
        // The stale socket broke the request: steps declares no idempotence, so it is not repeated.
        expect(steps.output).toMatch(/connection was lost during the call .* may or may not have run; a new session is open/);
        expect((await toolkit.execute('shop_steps', {})).output).toBe('three steps');
      } else {
        // The client noticed the closed socket first; the server's 404 for the old session says nothing ran.
        expect(steps.output).toBe('three steps');
      }
    } finally {
      await source.close();
      await second?.close();
    }
  });
});

describe('McpToolSource against a restarted 2026-07-28 serveMcp', () => {
  it('keeps calling a restarted stateless server, listens to it again and learns the tools it came back with', async () => {
    const first = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const port = Number(new URL(first.url).port);
    const source = new McpToolSource({ config: { mcpServers: { shop: { url: first.url } } } });
    let second: McpHttpServerHandle | undefined;
    try {
      const toolkit = await echoedOnce(source);
      await first.close();
      const served = mcpTestToolkit().register(defineTool({ name: 'late', description: 'Only after the restart', run: () => 'late' }));
      second = await serveMcp(served, { transport: 'http', port });
      // No session to lose: the same client goes on, and the server keeps none.
      const steps = await toolkit.execute('shop_steps', {});
      if (steps.isError) {
        // fetch handed out a pooled socket the first server closed: steps is not idempotent, so not repeated.
        expect(steps.output).toMatch(/connection was lost during the call .* may or may not have run/);
        expect((await toolkit.execute('shop_steps', {})).output).toBe('three steps');
      } else {
        expect(steps.output).toBe('three steps');
      }
      expect(second.sessionCount()).toBe(0);
      // The change stream ended with the first server; opened again, it reads the tools afresh.
      await until(() => toolkit.has('shop_late'));
      await expect(toolkit.execute('shop_late', {})).resolves.toMatchObject({ isError: false, output: 'late' });
    } finally {
      await source.close();
      await second?.close();
    }
  });

  it('speaks only the pinned revision: 2026-07-28 to serveMcp, a 2025-only server fails, and a bad protocolVersion is refused', async () => {
    const server = await serveMcp(mcpTestToolkit(), { transport: 'http' });
    const source = new McpToolSource({ config: { mcpServers: { shop: { url: server.url } } }, protocolVersion: '2026-07-28' });
    try {
      expect((await source.connect()).failed).toEqual([]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      expect((await toolkit.execute('shop_echo', { text: 'pinned' })).output).toBe('{"text":"pinned"}');
      expect(server.sessionCount()).toBe(0);
    } finally {
      await source.close();
      await server.close();
    }
    // A 2025-only server (the everything server, over stdio) does not offer the pinned revision: it fails, reported.
    const strict = new McpToolSource({
      config: { mcpServers: { old: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } },
      protocolVersion: '2026-07-28',
      connectTimeoutMs: 3_000,
    });
    const report = await strict.connect();
    await strict.close();
    expect(report.connected).toEqual([]);
    expect(report.failed.map(({ server }) => server)).toEqual(['old']);
    expect(report.failed[0]?.error.message).toMatch(/did not offer pinned protocol version 2026-07-28/);
    expect(() => new McpToolSource({ config: { mcpServers: {} }, protocolVersion: '2024-01-01' as never })).toThrow(
      /protocolVersion must be one of auto, 2025-11-25, 2026-07-28, got 2024-01-01/,
    );
  });
});

describe('McpToolSource with a server that fails to start', () => {
  it("quotes the server's stderr in the error, with the configured env values redacted", async () => {
    const script = "process.stderr.write('bad token ' + process.env.SERVICE_TOKEN + '\\n'); process.exit(3)";
    const source = new McpToolSource({
      config: { mcpServers: { crashy: { command: process.execPath, args: ['-e', script], env: { SERVICE_TOKEN: 'tok-12345-secret' } } } },
      connectTimeoutMs: 10_000,
    });
    const report = await source.connect();
    await source.close();
    const message = report.failed[0]?.error.message ?? '';
    expect(message).toMatch(/^server crashy: /);
    expect(message).toContain('bad token ***');
    expect(message).not.toContain('tok-12345-secret');
  });
});

describe('McpToolSource over the older HTTP+SSE transport', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('falls back to SSE when the server does not speak Streamable HTTP', async () => {
    const port = await freePort();
    child = spawn(process.execPath, [EVERYTHING, 'sse'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the everything server did not start')), 20_000);
      child?.stderr?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('running on port')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const source = new McpToolSource({ config: { mcpServers: { legacy: { url: `http://127.0.0.1:${port}/sse` } } } });
    try {
      const report = await source.connect();
      expect(report.failed).toEqual([]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      expect((await toolkit.execute('legacy_echo', { message: 'over sse' })).output).toBe('Echo: over sse');
    } finally {
      await source.close();
    }
  });
});
