/**
 * Where serveMcp keeps the tasks of calls that did not suspend (docs/mcp.md, "Tasks"): two
 * serveMcp servers on one SQLite file (each its own store, as two processes would have) over
 * Streamable HTTP on 127.0.0.1. An input round asked through one is answered through the other,
 * which runs the call again from the stored arguments; a tool with `@Sensitive` arguments keeps
 * them out of the row (and only the server that asked can run it again); a store of one's own
 * without the MCP task methods keeps today's in-memory tasks. No timing: each call waits on a
 * gate the test opens, on servers whose `taskAfterMs` is 0.
 */
import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { Sensitive, Tool, Toolkit } from '../../src';
import { bearerTokens } from '../../src/inbox';
import { inputRound, serveMcp, type McpHttpServerHandle, type McpToolContext } from '../../src/mcp';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, type SuspensionStore } from '../../src/suspension';
import { rpc } from '../fixtures/mcp-rpc';
import { sqliteDrivers } from '../fixtures/sqlite-drivers';

const TASKS = 'io.modelcontextprotocol/tasks';
const TOKENS = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };
const SECRET = 'sk-live-canary-7f3a9c';

class Gate {
  opened!: () => void;
  readonly wait = new Promise<void>((resolve) => (this.opened = resolve));
}
const gates = { plain: new Gate(), secret: new Gate(), pair: new Gate(), memory: new Gate() };
const ranIn: string[] = [];

const form = (message: string) => ({
  method: 'elicitation/create' as const,
  params: { message, requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
});
const nameOf = (answer: unknown): string | undefined => (answer as { content?: { name?: string } } | undefined)?.content?.name;

class GreetArgs {
  @IsString() greeting!: string;
}

@Tool({ name: 'greet', description: 'Waits for its gate, then asks a name', args: GreetArgs })
class GreetTool {
  async run(args: GreetArgs, ctx?: McpToolContext) {
    const name = nameOf(ctx?.mcp.inputResponses?.who);
    if (ctx?.mcp.requestState === 'asked' && name !== undefined) return `${args.greeting}, ${name}`;
    await gates.plain.wait;
    return inputRound({ inputRequests: { who: form('Who?') }, requestState: 'asked' });
  }
}

class KeyArgs {
  @IsString() @Sensitive() apiKey!: string;
}

@Tool({ name: 'with_key', description: 'Waits for its gate, then asks a name; its key is @Sensitive', args: KeyArgs })
class WithKeyTool {
  async run(args: KeyArgs, ctx?: McpToolContext) {
    const name = nameOf(ctx?.mcp.inputResponses?.who);
    if (ctx?.mcp.requestState === 'asked' && name !== undefined) return `key of ${args.apiKey.length} characters for ${name}`;
    await gates.secret.wait;
    return inputRound({ inputRequests: { who: form('Who?') }, requestState: 'asked' });
  }
}

@Tool({ name: 'with_key_twice', description: 'Waits for its gate, then asks two names; its key is @Sensitive', args: KeyArgs })
class WithKeyTwiceTool {
  async run(args: KeyArgs, ctx?: McpToolContext) {
    const [first, second] = [nameOf(ctx?.mcp.inputResponses?.first), nameOf(ctx?.mcp.inputResponses?.second)];
    if (ctx?.mcp.requestState === 'asked' && first !== undefined && second !== undefined)
      return `key of ${args.apiKey.length} characters for ${first} and ${second}`;
    await gates.pair.wait;
    return inputRound({ inputRequests: { first: form('First?'), second: form('Second?') }, requestState: 'asked' });
  }
}

@Tool({ name: 'plain', description: 'Waits for its gate' })
class PlainTool {
  async run() {
    await gates.memory.wait;
    ranIn.push('memory');
    return 'plain done';
  }
}

const toolkit = () => new Toolkit().register(GreetTool, WithKeyTool, WithKeyTwiceTool, PlainTool);
const serveOn = (store: SuspensionStore) =>
  serveMcp(new ResumeCoordinator({ toolkit: toolkit(), store }), {
    transport: 'http',
    authorize: bearerTokens(Object.entries(TOKENS).map(([id, token]) => ({ token, principal: { id } }))),
    taskAfterMs: 0,
    // Every server on the store signs a round's state with the same key, as for MRTR (docs/mcp.md).
    requestStateKeys: ['task-store-key-0123456789abcdef0123456789'],
  });

/** A store of one's own: a MemoryStore's suspension methods, without the MCP task ones. */
function withoutMcpTasks(store: MemoryStore): SuspensionStore {
  const hidden = new Set(['loadMcpTask', 'saveMcpTask', 'renewMcpTask', 'pruneMcpTasks']);
  return new Proxy(store, {
    get: (target, key, receiver) => {
      if (typeof key === 'string' && hidden.has(key)) return undefined;
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('serveMcp tasks of calls that did not suspend, in the store', () => {
  const capabilities = { elicitation: {}, extensions: { [TASKS]: {} } };
  let file: string;
  let stores: SqliteStore[];
  let memory: MemoryStore;
  let a: McpHttpServerHandle;
  let b: McpHttpServerHandle;
  let own: McpHttpServerHandle;

  const send = async (url: string, method: string, params: Record<string, unknown>, token = TOKENS.alice) => {
    const reply = await rpc(url, token, method, params, capabilities);
    if (reply.error) throw Object.assign(new Error(reply.error.message), reply.error);
    return (reply.result ?? {}) as Record<string, unknown> & { taskId?: string; status?: string };
  };
  /** Polls until the task leaves every status in `passing` (each wait a turn of the event loop, never a clock). */
  const settled = async (url: string, taskId: unknown, passing = ['working']) => {
    for (;;) {
      const task = await send(url, 'tasks/get', { taskId });
      if (!passing.includes(task.status as string)) return task;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'mcp-task-store-')), 'calls.db');
    stores = [new SqliteStore(file), new SqliteStore(file)];
    memory = new MemoryStore();
    [a, b, own] = await Promise.all([serveOn(stores[0]!), serveOn(stores[1]!), serveOn(withoutMcpTasks(memory))]);
  });
  afterAll(async () => {
    for (const gate of Object.values(gates)) gate.opened();
    await Promise.all([a.close(), b.close(), own.close()]);
    await Promise.all([...stores.map((store) => store.close()), memory.close()]);
  });

  it('an input round asked through server A is answered through server B, which runs the call again from the stored arguments', async () => {
    const created = await send(a.url, 'tools/call', { name: 'greet', arguments: { greeting: 'Hello' } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    gates.plain.opened();
    const asking = await settled(b.url, created.taskId);
    expect(asking).toMatchObject({ status: 'input_required', inputRequests: { who: { method: 'elicitation/create' } } });
    await expect(send(b.url, 'tasks/update', { taskId: created.taskId, inputResponses: {} }, TOKENS.bob)).rejects.toMatchObject({
      code: -32602,
    });
    await send(b.url, 'tasks/update', { taskId: created.taskId, inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } } });
    expect(await settled(a.url, created.taskId, ['input_required', 'working'])).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Hello, Ada' }] },
    });
  });

  it('a tool’s @Sensitive arguments never reach the row: only the server that asked the round runs it again', async () => {
    const call = { name: 'with_key', arguments: { apiKey: SECRET } };
    const first = await send(a.url, 'tools/call', call);
    const second = await send(a.url, 'tools/call', call);
    gates.secret.opened();
    for (const created of [first, second]) expect((await settled(a.url, created.taskId)).status).toBe('input_required');
    for (const created of [first, second]) {
      const row = await stores[1]!.loadMcpTask(created.taskId as string);
      expect(row?.status).toBe('input_required');
      expect(JSON.stringify(row)).not.toContain(SECRET);
      expect(row?.state).not.toHaveProperty('args');
      // Nor the round's sealed state: it digests the arguments, which would let a short secret be guessed.
      expect(row?.state).not.toHaveProperty('requestState');
    }
    const answer = { who: { action: 'accept', content: { name: 'Grace' } } };
    // Answered where it was asked: run again with the key it was called with.
    await send(a.url, 'tasks/update', { taskId: first.taskId, inputResponses: answer });
    expect(await settled(a.url, first.taskId, ['input_required', 'working'])).toMatchObject({
      status: 'completed',
      result: { content: [{ text: `key of ${SECRET.length} characters for Grace` }] },
    });
    // Answered elsewhere: that server cannot run it, and says why.
    await send(b.url, 'tasks/update', { taskId: second.taskId, inputResponses: answer });
    const failed = await send(a.url, 'tasks/get', { taskId: second.taskId });
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(String((failed.error as { message: string }).message)).toContain('@Sensitive');
    expect(JSON.stringify(await stores[0]!.loadMcpTask(first.taskId as string))).not.toContain(SECRET);
  });

  it('the partial answers of a round of a call with @Sensitive arguments stay in memory: the raw row holds none of them', async () => {
    const created = await send(a.url, 'tools/call', { name: 'with_key_twice', arguments: { apiKey: SECRET } });
    gates.pair.opened();
    expect((await settled(a.url, created.taskId)).status).toBe('input_required');
    const ANSWER = 'answer-canary-4b1e';
    await send(a.url, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { first: { action: 'accept', content: { name: ANSWER } } },
    });
    // The round shows the one key still open, on either server.
    for (const url of [a.url, b.url])
      expect(Object.keys((await send(url, 'tasks/get', { taskId: created.taskId })).inputRequests as object)).toEqual(['second']);
    const driver = sqliteDrivers().find((one) => one.name === stores[0]!.driver)!;
    const raw = driver.open(file, { readonly: true });
    try {
      const row = raw.prepare('SELECT * FROM mcp_tasks WHERE task_id = ?').get(created.taskId) as Record<string, unknown> | undefined;
      expect(row?.status).toBe('input_required');
      expect(JSON.stringify(row)).not.toContain(ANSWER);
      expect(JSON.stringify(row)).not.toContain(SECRET);
    } finally {
      raw.close();
    }
    // The last answer, where the round was asked: the call runs again with both.
    await send(a.url, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { second: { action: 'accept', content: { name: 'Ada' } } },
    });
    expect(await settled(a.url, created.taskId, ['input_required', 'working'])).toMatchObject({
      status: 'completed',
      result: { content: [{ text: `key of ${SECRET.length} characters for ${ANSWER} and Ada` }] },
    });
  });

  it('a store without the MCP task methods keeps the tasks in the serving process’s memory, as before', async () => {
    const created = await send(own.url, 'tools/call', { name: 'plain', arguments: {} });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(await memory.loadMcpTask(created.taskId as string)).toBeUndefined();
    gates.memory.opened();
    expect(await settled(own.url, created.taskId)).toMatchObject({ status: 'completed', result: { content: [{ text: 'plain done' }] } });
    expect(ranIn).toEqual(['memory']);
    expect(await memory.loadMcpTask(created.taskId as string)).toBeUndefined();
  });
});
