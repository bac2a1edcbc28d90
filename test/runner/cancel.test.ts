/**
 * Cancel (issue 36, docs/agents.md "Cancel"): `runner.cancel(runId)` aborts a run this runner
 * drives (its tools' `ctx.signal` fires with a `RunCancelledError`) and the run ends
 * `cancelled`, a result, not an error; a halted run's open suspensions settle `cancelled` and its
 * checkpoint says so, after which no answer, resume or recover continues it; a cancel racing a
 * resume on one SQLite file lets one of them win, never both. The chat's stop (the AI SDK
 * client aborting its request, `onDisconnect: 'cancel'`) and an MCP client's cancellation
 * (`notifications/cancelled`, sent by the official SDK client when its signal aborts) cancel
 * the run the same way. Real HTTP on 127.0.0.1, real SQLite files.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, RunCancelledError, type AgentToolContext } from 'toolnexus-ts/agents';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { chatHandler } from 'toolnexus-ts/chat';
import { serveMcp } from 'toolnexus-ts/mcp';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { transferAgent } from '../fixtures/runner/transfer-agent';

const ai = loadAiClient();
let dir: string;
const closing: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-cancel-'));
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

/** A tool that waits until its call is aborted, and says why it was. */
function waitingTool(seen: { reasons: unknown[]; started: number; runIds: string[] }) {
  return defineTool({
    name: 'export_all',
    description: 'Exports everything (slowly)',
    run: (_args: object, ctx?: ToolContext) =>
      new Promise<string>((resolve) => {
        const agent = ctx as AgentToolContext | undefined;
        seen.started++;
        if (agent?.runId) seen.runIds.push(agent.runId);
        const signal = ctx?.signal;
        if (!signal) return resolve('no signal');
        signal.addEventListener('abort', () => {
          seen.reasons.push(signal.reason);
          resolve('aborted');
        });
      }),
  });
}

const callsExport = () =>
  new FunctionModel(({ messages }) =>
    messages.some((m) => m.role === 'tool') ? 'exported' : { toolCalls: [{ id: 'c1', name: 'export_all', arguments: {} }] },
  );

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('timed out waiting');
}

function sqlite(name = 'runs.db'): SqliteStore {
  const store = new SqliteStore({ filename: join(dir, name) });
  closing.push(() => store.close());
  return store;
}

describe('runner.cancel', () => {
  it('a run it drives: the tool’s ctx.signal fires with RunCancelledError, and run() returns it cancelled', async () => {
    const seen = { reasons: [] as unknown[], started: 0, runIds: [] as string[] };
    const runner = new AgentRunner({ model: callsExport(), toolkit: new Toolkit().register(waitingTool(seen)) });
    const running = runner.run('Export', { runId: 'run-live' });
    await until(() => seen.started === 1);
    const cancelled = await runner.cancel('run-live', { reason: 'the user pressed stop' });
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(result.stop).toEqual({ status: 'cancelled', reason: 'the user pressed stop' });
    expect(cancelled).toBe(result);
    expect(seen.reasons).toHaveLength(1);
    expect(seen.reasons[0]).toBeInstanceOf(RunCancelledError);
    expect(result.turns).toBe(1); // the model was not asked again
    // Nothing is left registered: a second cancel reads the run as its checkpoint ended it (a
    // cancelled run is checkpointed even when it never was), not the live run's own outcome.
    const again = await runner.cancel('run-live');
    expect(again).not.toBe(result);
    expect(again).toMatchObject({ status: 'cancelled', stop: { reason: 'the user pressed stop' }, turns: 1 });
  });

  it('with durable steps, the checkpoint records it and nothing continues it', async () => {
    const seen = { reasons: [] as unknown[], started: 0, runIds: [] as string[] };
    const store = sqlite();
    const toolkit = new Toolkit().register(waitingTool(seen));
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const runner = new AgentRunner({ model: callsExport(), toolkit, coordinator, durability: 'step' });
    const running = runner.run('Export', { runId: 'run-steps' });
    await until(() => seen.started === 1);
    await runner.cancel('run-steps');
    expect((await running).status).toBe('cancelled');
    expect((await store.loadRun('run-steps'))?.state).toMatchObject({ phase: 'cancelled', stop: { status: 'cancelled' } });
    await expect(runner.recover('run-steps', { force: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_RESUME' });
  });

  it('a halted run: its open suspension settles cancelled, the checkpoint says so, and an answer no longer runs the tool', async () => {
    const store = sqlite();
    const { toolkit, model, transfers: ran } = transferAgent();
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const halted = await runner.run('Move it');
    expect(halted.status).toBe('halted');
    // Another runner (any process with the store) cancels it.
    const other = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const result = await other.cancel(halted.runId, { reason: 'customer withdrew', audit: { by: { id: 'ops-1' } } });
    expect(result.status).toBe('cancelled');
    expect(result.toolCalls.map((c) => c.status)).toEqual(['cancelled']);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'c1', isError: true });
    expect((await store.get(halted.pending!.id))?.status).toBe('cancelled');
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'cancelled' });
    await expect(runner.resume({ id: halted.pending!.id, ok: true })).rejects.toThrow();
    expect(ran()).toBe(0);
    // Cancelling again returns the run as it ended.
    expect((await other.cancel(halted.runId)).status).toBe('cancelled');
  });

  it('a cancel racing a resume on one SQLite file: one wins, the tool runs at most once, nothing continues a cancelled run', async () => {
    for (let round = 0; round < 5; round++) {
      const store = sqlite(`race-${round}.db`);
      const { toolkit, model, transfers, modelCalls } = transferAgent();
      const build = () => new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
      const halted = await build().run('Move it');
      const [resumed, cancelled] = await Promise.allSettled([
        build().resume({ id: halted.pending!.id, ok: true }),
        build().cancel(halted.runId),
      ]);
      const final = (await store.loadRun(halted.runId))?.state as { phase: string };
      expect(['done', 'cancelled']).toContain(final.phase);
      expect(transfers()).toBeLessThanOrEqual(1);
      if (final.phase === 'cancelled') {
        expect(modelCalls()).toBe(1); // the model was never asked after the halt
        if (resumed.status === 'fulfilled') expect(resumed.value.status).toBe('cancelled');
      } else {
        expect(cancelled.status === 'fulfilled' && cancelled.value.status).toBe('done');
      }
    }
  });
});

describe('the chat’s stop', () => {
  it('useChat’s stop (the AI SDK client aborting its request) cancels the run: the tool’s signal fires, it ends cancelled', async () => {
    const seen = { reasons: [] as unknown[], started: 0, runIds: [] as string[] };
    const store = sqlite();
    const toolkit = new Toolkit().register(waitingTool(seen));
    const runner = new AgentRunner({
      model: callsExport(),
      toolkit,
      coordinator: new ResumeCoordinator({ toolkit, store }),
      sessions: store,
      durability: 'step',
    });
    const handler = chatHandler(runner, { principal: () => ({ id: 'alice' }), onDisconnect: 'cancel' });
    const http: Server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    closing.push(async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
    const stop = new AbortController();
    const transport = new ai.DefaultChatTransport<UIMessage>({ api: url });
    const stream = await transport.sendMessages({
      chatId: 'chat-1',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Export everything' }] }],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: stop.signal,
    });
    const reading = (async () => {
      try {
        for await (const message of ai.readUIMessageStream<UIMessage>({ stream })) void message;
      } catch {
        // the stop aborts the read
      }
    })();
    await until(() => seen.started === 1);
    stop.abort(); // what useChat().stop() does
    await reading;
    await until(() => seen.reasons.length === 1);
    expect(seen.reasons[0]).toBeInstanceOf(RunCancelledError);
    const runId = seen.runIds[0] as string;
    let phase: unknown;
    for (let i = 0; i < 500 && phase !== 'cancelled'; i++) {
      phase = ((await store.loadRun(runId))?.state as { phase?: string } | undefined)?.phase;
      if (phase !== 'cancelled') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(phase).toBe('cancelled');
    await expect(runner.recover(runId, { force: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_RESUME' });
  });
});

describe('an MCP client’s cancellation', () => {
  it('notifications/cancelled reaches the served sub-agent: its tool’s signal fires and its run ends cancelled', async () => {
    const seen = { reasons: [] as unknown[], started: 0, runIds: [] as string[] };
    const store = sqlite();
    const childTools = new Toolkit().register(waitingTool(seen));
    const child = new AgentRunner({
      model: callsExport(),
      toolkit: childTools,
      coordinator: new ResumeCoordinator({ toolkit: childTools, store }),
      durability: 'step',
    });
    const served = new Toolkit().register(child.asTool({ name: 'exporter', description: 'Exports, as an agent' }));
    const server = await serveMcp(served, { transport: 'http' });
    closing.push(() => server.close());
    const client = new Client({ name: 'canceller', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    closing.push(() => client.close());
    const abort = new AbortController();
    const call = client.callTool({ name: 'exporter', arguments: { input: 'export it all' } }, undefined, { signal: abort.signal });
    await until(() => seen.started === 1);
    abort.abort('the user closed the tab'); // the SDK sends notifications/cancelled
    await expect(call).rejects.toThrow();
    await until(() => seen.reasons.length === 1);
    expect(seen.reasons[0]).toBeInstanceOf(RunCancelledError);
    const runId = seen.runIds[0] as string;
    let phase: unknown;
    for (let i = 0; i < 500 && phase !== 'cancelled'; i++) {
      phase = ((await store.loadRun(runId))?.state as { phase?: string } | undefined)?.phase;
      if (phase !== 'cancelled') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(phase).toBe('cancelled');
    await expect(child.recover(runId, { force: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_RESUME' });
  });
});
