/**
 * A session's bounds (`maxSessionMessages`, `maxSessionBytes`) hold when a run writes its
 * thread back, not only when it takes the session: a run whose tool calls grow the thread
 * past a bound has the oldest turns dropped to make room, its own turn kept whole; a turn
 * that alone passes the bound is refused with `SessionFullError` and the session is given back
 * as it was. Both on a run that ends and on one resumed after it halted (issue 32, item 6).
 */
import 'reflect-metadata';
import { IsInt, IsString } from 'class-validator';
import { Tool, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, type ChatMessage } from 'toolnexus-ts/models';
import { AgentRunner, SessionFullError, type AgentRunnerOptions } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';

class FetchArgs {
  @IsString() page!: string;
  @IsInt() bytes!: number;
}

/** Returns a page of `bytes` characters: a tool result that grows the thread. */
@Tool({ name: 'fetch_page', description: 'Fetches a page', args: FetchArgs })
class FetchTool {
  runs = 0;
  run(args: FetchArgs) {
    this.runs++;
    return success({ page: args.page, body: 'x'.repeat(args.bytes) });
  }
}

@Tool({ name: 'publish', description: 'Publishes', args: FetchArgs, approval: { prompt: () => 'Publish?' } })
class PublishTool {
  run(args: FetchArgs) {
    return success({ published: args.page, body: 'y'.repeat(args.bytes) });
  }
}

/**
 * A model that, for the input `fetch <n> <bytes>` (or `publish <bytes>`), calls `fetch_page`
 * n times in one turn (or `publish` once), then answers `done`: each run adds n + 3 messages.
 */
function model(): FunctionModel {
  return new FunctionModel(({ messages }) => {
    const last = messages[messages.length - 1] as ChatMessage;
    if (last.role === 'tool') return 'done';
    const input = last.role === 'user' ? last.content : '';
    const [verb, count, bytes] = (typeof input === 'string' ? input : '').split(' ');
    if (verb === 'publish')
      return { toolCalls: [{ id: `call_pub_${messages.length}`, name: 'publish', arguments: { page: 'p', bytes: Number(count) } }] };
    return {
      toolCalls: Array.from({ length: Number(count) }, (_, i) => ({
        id: `call_${messages.length}_${i}`,
        name: 'fetch_page',
        arguments: { page: `p${i}`, bytes: Number(bytes) },
      })),
    };
  });
}

function runner(options: Partial<AgentRunnerOptions>, tool = new FetchTool()) {
  const toolkit = new Toolkit().register(tool, new PublishTool());
  const store = new MemoryStore();
  return new AgentRunner({ model: model(), toolkit, coordinator: new ResumeCoordinator({ toolkit, store }), ...options });
}

const bytesOf = (messages: readonly ChatMessage[]) => Buffer.byteLength(JSON.stringify(messages));
const userInputs = (messages: readonly ChatMessage[]) => messages.filter((m) => m.role === 'user').map((m) => m.content);

describe('maxSessionMessages holds when a run writes the thread back', () => {
  it('drops the oldest turns to make room; the run that grew the thread is kept whole', async () => {
    const agent = runner({ maxSessionMessages: 10 });
    await agent.run('fetch 3 10', { session: 's' }); // user, assistant, 3 tool, assistant: 6
    const second = await agent.run('fetch 5 10', { session: 's' }); // 6 + 1 pass the take; 6 + 8 = 14 after
    expect(second.status).toBe('done');
    const stored = await agent.sessions!.loadSession('s');
    expect(stored!.messages.length).toBeLessThanOrEqual(10);
    expect(stored!.messages).toEqual(second.messages.slice(6));
    expect(userInputs(stored!.messages)).toEqual(['fetch 5 10']);
    expect(stored!.active).toBeUndefined();
  });

  it('refuses a run whose own turn passes the bound, and gives the session back as it was', async () => {
    const tool = new FetchTool();
    const agent = runner({ maxSessionMessages: 10 }, tool);
    await agent.run('fetch 1 10', { session: 's' }); // 4 messages
    const before = await agent.sessions!.loadSession('s');
    const full = await agent.run('fetch 9 10', { session: 's' }).catch((error: unknown) => error); // 12 of its own
    expect(full).toBeInstanceOf(SessionFullError);
    expect((full as SessionFullError).code).toBe('TOOLNEXUS_SESSION_FULL');
    const after = await agent.sessions!.loadSession('s');
    expect(after!.messages).toEqual(before!.messages);
    expect(after!.active).toBeUndefined();
    // The session is not wedged: the next run takes it.
    expect((await agent.run('fetch 1 10', { session: 's' })).status).toBe('done');
  });

  it('holds on the write of a halted run resumed later', async () => {
    const agent = runner({ maxSessionMessages: 10 });
    await agent.run('fetch 4 10', { session: 's' }); // 7
    const halted = await agent.run('publish 10', { session: 's' }); // 7 + 2 = 9 at the halt
    expect(halted.status).toBe('halted');
    const resumed = await agent.resume({ id: halted.pending!.id, ok: true }); // + tool, assistant = 11
    expect(resumed.status).toBe('done');
    const stored = await agent.sessions!.loadSession('s');
    expect(stored!.messages.length).toBeLessThanOrEqual(10);
    expect(userInputs(stored!.messages)).toEqual(['publish 10']);
    expect(stored!.active).toBeUndefined();
  });
});

describe('maxSessionBytes holds when a run writes the thread back', () => {
  it('drops the oldest turns to make room; the run that grew the thread is kept whole', async () => {
    const agent = runner({ maxSessionBytes: 8 * 1024 });
    await agent.run('fetch 1 3000', { session: 's' });
    const second = await agent.run('fetch 2 2500', { session: 's' }); // ~3 KiB stored + ~5 KiB grown
    expect(second.status).toBe('done');
    const stored = await agent.sessions!.loadSession('s');
    expect(bytesOf(stored!.messages)).toBeLessThanOrEqual(8 * 1024);
    expect(userInputs(stored!.messages)).toEqual(['fetch 2 2500']);
  });

  it('refuses a run whose own turn passes the bound, and gives the session back as it was', async () => {
    const agent = runner({ maxSessionBytes: 8 * 1024 });
    await agent.run('fetch 1 100', { session: 's' });
    const before = await agent.sessions!.loadSession('s');
    const full = await agent.run('fetch 3 4000', { session: 's' }).catch((error: unknown) => error);
    expect(full).toBeInstanceOf(SessionFullError);
    const after = await agent.sessions!.loadSession('s');
    expect(after!.messages).toEqual(before!.messages);
    expect(after!.active).toBeUndefined();
  });

  it('holds on the write of a halted run resumed later', async () => {
    const agent = runner({ maxSessionBytes: 8 * 1024 });
    await agent.run('fetch 1 3000', { session: 's' });
    const halted = await agent.run('publish 6000', { session: 's' }); // ~3 KiB at the halt
    expect(halted.status).toBe('halted');
    const resumed = await agent.resume({ id: halted.pending!.id, ok: true }); // + ~6 KiB
    expect(resumed.status).toBe('done');
    const stored = await agent.sessions!.loadSession('s');
    expect(bytesOf(stored!.messages)).toBeLessThanOrEqual(8 * 1024);
    expect(userInputs(stored!.messages)).toEqual(['publish 6000']);
    expect(stored!.active).toBeUndefined();
  });
});
