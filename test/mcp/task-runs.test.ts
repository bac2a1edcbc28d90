/**
 * Tasks of calls that do not suspend (docs/mcp.md, "Tasks"): serveMcp over Streamable HTTP on
 * 127.0.0.1, called at 2026-07-28 declaring the tasks extension, as JSON-RPC requests (the SDK's
 * v2 Client (2.4.0) refuses a `tools/call` answered by a task: it has no tasks runtime) and by
 * our McpToolSource, which follows a task to its end. A call
 * still running after `taskAfterMs` answers a `working` task, then reads `completed`, `failed`,
 * `cancelled` or `input_required` (an input round answered key by key with `tasks/update`); only
 * its own principal sees it. No timing: each long call waits on a gate the test opens, on a
 * server whose `taskAfterMs` is 0; the quick call is served by one whose `taskAfterMs` is the default.
 * Also a catalog prompt asking an input round (docs/mcp.md, "Input rounds"), asked of the SDK's v2 Client.
 */
import 'reflect-metadata';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Tool, Toolkit, type ToolContext, type ToolResult } from '../../src';
import { FakeClock, until } from '../fixtures/fake-clock';
import { bearerTokens } from '../../src/inbox';
import {
  inputRound,
  McpCatalog,
  McpToolSource,
  Prompt,
  serveMcp,
  type CatalogContext,
  type McpHttpServerHandle,
  type McpToolContext,
} from '../../src/mcp';
import { rpc, type Reply } from '../fixtures/mcp-rpc';

const TASKS = 'io.modelcontextprotocol/tasks';
const TOKENS = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };

/** A promise the test settles: a long call waits on it, so nothing depends on how long anything takes. */
class Gate {
  opened!: () => void;
  readonly wait = new Promise<void>((resolve) => (this.opened = resolve));
}

const gates = { long: new Gate(), asks: new Gate(), roots: new Gate(), cancel: new Gate(), follow: new Gate() };
let sawAbort = false;

function form(message: string) {
  return {
    method: 'elicitation/create' as const,
    params: { message, requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  };
}

const nameOf = (answer: unknown): string | undefined => {
  const name = (answer as { content?: { name?: unknown } } | undefined)?.content?.name;
  return typeof name === 'string' ? name : undefined;
};

@Tool({ name: 'quick', description: 'Answers at once' })
class QuickTool {
  run(): string {
    return 'quick';
  }
}

@Tool({ name: 'long', description: 'Waits for its gate' })
class LongTool {
  async run(): Promise<string> {
    await gates.long.wait;
    return 'long done';
  }
}

@Tool({ name: 'followed', description: 'Waits for its gate (read when it runs)' })
class FollowedTool {
  async run(): Promise<string> {
    await gates.follow.wait;
    return 'followed to its end';
  }
}

@Tool({ name: 'cancellable', description: 'Waits for its gate, or until cancelled' })
class CancellableTool {
  async run(_args: object, ctx?: ToolContext): Promise<string> {
    ctx?.signal?.addEventListener('abort', () => (sawAbort = true), { once: true });
    await gates.cancel.wait;
    return 'not cancelled';
  }
}

@Tool({ name: 'asks_twice', description: 'Waits for its gate, then asks two names at once' })
class AsksTwiceTool {
  async run(_args: object, ctx?: McpToolContext) {
    const answers = ctx?.mcp.inputResponses;
    const [first, second] = [nameOf(answers?.first), nameOf(answers?.second)];
    if (ctx?.mcp.requestState === 'both' && first !== undefined && second !== undefined) return `${first} and ${second}`;
    await gates.asks.wait;
    return inputRound({ inputRequests: { first: form('First?'), second: form('Second?') }, requestState: 'both' });
  }
}

@Tool({ name: 'needs_roots', description: "Waits for its gate, then asks the client's roots" })
class NeedsRootsTool {
  async run() {
    await gates.roots.wait;
    return inputRound({ inputRequests: { roots: { method: 'roots/list', params: {} } } });
  }
}

@Prompt({ name: 'briefing', description: 'Asks what the briefing is about first' })
class BriefingPrompt {
  get(_args: object, ctx?: CatalogContext) {
    const answer = ctx?.mcp?.inputResponses?.topic as { action?: string; content?: { topic?: unknown } } | undefined;
    const topic = answer?.action === 'accept' ? answer.content?.topic : undefined;
    if (typeof topic === 'string' && ctx?.mcp?.requestState === 'asked') return `Brief me on ${topic}.`;
    return inputRound({
      inputRequests: {
        topic: {
          method: 'elicitation/create',
          params: {
            message: 'Which topic?',
            requestedSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
          },
        },
      },
      requestState: 'asked',
    });
  }
}

/** A JSON-RPC result as these tests read it. */
type Loose = Record<string, unknown> & { result?: { content?: Array<{ text?: string }>; isError?: boolean } };

const serve = (taskAfterMs?: number): Promise<McpHttpServerHandle> =>
  serveMcp(new Toolkit().register(QuickTool, LongTool, FollowedTool, CancellableTool, AsksTwiceTool, NeedsRootsTool), {
    transport: 'http',
    authorize: bearerTokens(Object.entries(TOKENS).map(([id, token]) => ({ token, principal: { id } }))),
    catalog: new McpCatalog().register(BriefingPrompt),
    ...(taskAfterMs === undefined ? {} : { taskAfterMs }),
  });

async function clientOf(url: string, token: string, capabilities: Record<string, unknown>, version = '2026-07-28'): Promise<Client> {
  const client = new Client(
    { name: 'tasks-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: version === '2025-11-25' ? 'legacy' : { pin: version } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('serveMcp: a call still running after taskAfterMs is a task (2026-07-28)', () => {
  let eager: McpHttpServerHandle;
  let patient: McpHttpServerHandle;
  const capabilities = { elicitation: {}, extensions: { [TASKS]: {} } };
  /** One request of `token`'s at 2026-07-28 declaring the extension: its result (or its error, thrown). */
  const send = async (method: string, params: Record<string, unknown>, token = TOKENS.alice, url = eager.url) => {
    const reply: Reply = await rpc(url, token, method, params, capabilities);
    if (reply.error) throw Object.assign(new Error(reply.error.message), reply.error);
    return (reply.result ?? {}) as Loose;
  };
  const call = (name: string) => send('tools/call', { name, arguments: {} });
  const get = (taskId: unknown, token = TOKENS.alice) => send('tasks/get', { taskId }, token);
  /** Polls until the task leaves `working` (each wait a turn of the event loop, never a clock). */
  const settled = async (taskId: unknown): Promise<Loose> => {
    for (;;) {
      const task = await get(taskId);
      if (task.status !== 'working') return task;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  beforeAll(async () => {
    [eager, patient] = await Promise.all([serve(0), serve()]);
  });
  afterAll(async () => {
    for (const gate of Object.values(gates)) gate.opened();
    await Promise.all([eager.close(), patient.close()]);
  });

  it('a quick call answers its result, not a task', async () => {
    const result = await send('tools/call', { name: 'quick', arguments: {} }, TOKENS.alice, patient.url);
    expect(result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'quick' }] });
    expect(result.taskId).toBeUndefined();
  });

  it('a long call answers a working task, flat, then reads completed with its result; another principal sees no task', async () => {
    const created = await call('long');
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 1000 });
    expect(created.taskId).toMatch(/^tsk-/);
    for (const absent of ['task', 'result', 'error', 'inputRequests', 'requestState']) expect(created).not.toHaveProperty(absent);
    expect(await get(created.taskId)).toMatchObject({ taskId: created.taskId, status: 'working' });
    await expect(get(created.taskId, TOKENS.bob)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('task not found') as unknown,
    });
    // An id of this server's shape with no record is not found either.
    await expect(get('tsk-00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('task not found') as unknown,
    });
    gates.long.opened();
    expect(await settled(created.taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'long done' }] },
    });
  });

  it('tasks/cancel aborts the running call: the task reads cancelled, and cancelling it again changes nothing', async () => {
    const created = await call('cancellable');
    expect(created.status).toBe('working');
    const ack = await send('tasks/cancel', { taskId: created.taskId });
    expect(ack).toMatchObject({ resultType: 'complete' });
    expect(Object.keys(ack).filter((key) => ['taskId', 'status', 'result'].includes(key))).toEqual([]);
    expect(sawAbort).toBe(true);
    gates.cancel.opened();
    expect(await get(created.taskId)).toMatchObject({ status: 'cancelled' });
    await send('tasks/cancel', { taskId: created.taskId });
    expect((await get(created.taskId)).status).toBe('cancelled');
  });

  it('an input round in a task is answered key by key with tasks/update; with the last answer the call runs again and completes', async () => {
    const created = await call('asks_twice');
    gates.asks.opened();
    const asking = await settled(created.taskId);
    expect(asking.status).toBe('input_required');
    expect(Object.keys(asking.inputRequests as object).sort()).toEqual(['first', 'second']);
    expect(asking).not.toHaveProperty('requestState');
    const update = (inputResponses: Record<string, unknown>) => send('tasks/update', { taskId: created.taskId, inputResponses });
    await update({ first: { action: 'accept', content: { name: 'Ada' } }, unknown: { action: 'accept' } });
    const half = await get(created.taskId);
    expect(half.status).toBe('input_required');
    expect(Object.keys(half.inputRequests as object)).toEqual(['second']);
    await update({ second: { action: 'accept', content: { name: 'Grace' } } });
    expect(await settled(created.taskId)).toMatchObject({ status: 'completed', result: { content: [{ text: 'Ada and Grace' }] } });
  });

  it('a task that asks what the client did not declare fails with -32021 and no result', async () => {
    const created = await call('needs_roots');
    gates.roots.opened();
    const failed = await settled(created.taskId);
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32021, data: { requiredCapabilities: { roots: {} } } } });
    expect(failed).not.toHaveProperty('result');
  });

  it('our McpToolSource follows the working task (on its fake clock) to the result', async () => {
    const clock = new FakeClock();
    const source = new McpToolSource({
      config: { mcpServers: { eager: { type: 'http', url: eager.url, headers: { Authorization: `Bearer ${TOKENS.alice}` } } } },
      tasks: { clock },
    });
    const report = await source.connect();
    expect(report.failed).toEqual([]);
    const toolkit = new Toolkit();
    source.register(toolkit);
    try {
      let result: ToolResult | undefined;
      void toolkit.execute('eager_followed').then((value) => (result = value));
      // The task answered and the source waits its poll interval: the call may end, and the wait is stepped.
      await until(() => clock.timers.length > 0);
      gates.follow.opened();
      while (result === undefined) {
        await until(() => result !== undefined || clock.timers.length > 0);
        if (result === undefined) clock.advance(clock.timers[0]!.ms);
      }
      expect(result).toMatchObject({ isError: false, output: 'followed to its end' });
    } finally {
      await source.close();
    }
  });

  it('tasks/get whose Mcp-Name header names another task is refused with -32020 (HTTP 400)', async () => {
    gates.long.opened();
    const created = await call('long');
    const taskId = String(created.taskId);
    const response = await fetch(eager.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKENS.alice}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tasks/get',
        'mcp-name': 'some-other-task',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { taskId } }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ id: 7, error: { code: -32020 } });
  });
});

describe('serveMcp: a catalog prompt asks an input round', () => {
  let server: McpHttpServerHandle;
  beforeAll(async () => {
    server = await serve();
  });
  afterAll(async () => {
    await server.close();
  });

  it('at 2026-07-28 the SDK v2 Client is asked, answers, and gets the prompt built with the answer', async () => {
    const client = await clientOf(server.url, TOKENS.alice, { elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { topic: 'refunds' } };
    });
    const prompt = await client.getPrompt({ name: 'briefing' });
    expect(asked).toEqual(['Which topic?']);
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Brief me on refunds.' } }]);
    await client.close();
  });

  it("a changed requestState, or another principal's, is refused with -32602 and the prompt is not built", async () => {
    const first = await rpc(server.url, TOKENS.alice, 'prompts/get', { name: 'briefing' });
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { topic: { method: 'elicitation/create' } } });
    const state = String(first.result?.requestState);
    const answers = { topic: { action: 'accept', content: { topic: 'refunds' } } };
    const changed = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
    const tampered = await rpc(server.url, TOKENS.alice, 'prompts/get', {
      name: 'briefing',
      requestState: changed,
      inputResponses: answers,
    });
    expect(tampered.error).toMatchObject({ code: -32602, message: expect.stringContaining('signature does not verify') as unknown });
    const foreign = await rpc(server.url, TOKENS.bob, 'prompts/get', { name: 'briefing', requestState: state, inputResponses: answers });
    expect(foreign.error).toMatchObject({ code: -32602, message: expect.stringContaining('given to another principal') as unknown });
    const own = await rpc(server.url, TOKENS.alice, 'prompts/get', { name: 'briefing', requestState: state, inputResponses: answers });
    expect(own.result).toMatchObject({ messages: [{ role: 'user', content: { type: 'text', text: 'Brief me on refunds.' } }] });
  });

  it('at 2025-11-25 (no input rounds) the prompt is refused with a clear -32602', async () => {
    const client = await clientOf(server.url, TOKENS.alice, { elicitation: {} }, '2025-11-25');
    await expect(client.getPrompt({ name: 'briefing' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('needs input that only an MCP 2026-07-28 client can give') as unknown,
    });
    await client.close();
  });
});
