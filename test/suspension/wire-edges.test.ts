/**
 * Two edges of the contract (docs/design.md): an `Answer` with `data: null` (as the Python
 * port serialises an absent field) reads as absent wherever an answer is accepted, and a
 * `pending` whose data cannot be stored (a cycle) is a clear error result, since `execute`
 * never rejects.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { Tool, Toolkit, pending, pendingOf, success, type Answer, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';

class NoteArgs {
  @IsString() text!: string;
}

const seen: Array<ToolContext['answer']> = [];

@Tool({ name: 'note', description: 'Asks, then records what the answer carried', args: NoteArgs })
class NoteTool {
  run(args: NoteArgs, ctx?: ToolContext) {
    if (ctx?.replay?.request.kind !== 'approval') return pending({ kind: 'approval', prompt: `Note ${args.text}?` });
    seen.push(ctx.answer);
    return success(`noted ${args.text}; data ${ctx.answer && 'data' in ctx.answer ? JSON.stringify(ctx.answer.data) : 'absent'}`);
  }
}

/** What the Python port sends: every absent field as null. */
const fromPython = (id: string): Answer => JSON.parse(JSON.stringify({ id, ok: true, data: null, reason: null })) as Answer;

describe('an answer with data: null', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'toolnexus-null-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => (seen.length = 0));

  it('is accepted by the answer check and read as absent', () => {
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(NoteTool) });
    expect(coordinator.checkAnswer(fromPython('pnd-1'))).toEqual({ id: 'pnd-1', ok: true });
    expect(coordinator.checkAnswer({ id: 'pnd-1', ok: false, data: null, reason: 'declined' })).toEqual({
      id: 'pnd-1',
      ok: false,
      reason: 'declined',
    });
  });

  it('resolves a stored call (SQLite) as an answer without data', async () => {
    const store = new SqliteStore(join(dir, 'null.db'));
    try {
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(NoteTool), store });
      const asked = pendingOf(await coordinator.execute('note', { text: 'a' }))!;
      expect(await coordinator.resolve(fromPython(asked.id))).toEqual({ output: 'noted a; data absent', isError: false });
      expect(seen).toHaveLength(1);
      expect(seen[0]).not.toHaveProperty('data');
      expect((await coordinator.get(asked.id))!.answer).toEqual({ id: asked.id, ok: true });
    } finally {
      await store.close();
    }
  });

  it('answers an in-process waitFor, the replay seeing no data', async () => {
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(NoteTool), waitFor: (request) => fromPython(request.id) });
    expect(await coordinator.execute('note', { text: 'b' })).toEqual({ output: 'noted b; data absent', isError: false });
  });
});

@Tool({ name: 'loop', description: 'Suspends with data that refers to itself' })
class LoopTool {
  run() {
    const data: Record<string, unknown> = { note: 'me' };
    data.self = data;
    return pending({ kind: 'input', prompt: 'Which?', data });
  }
}

describe('pending with circular data', () => {
  it.each([
    ['in memory', () => new ResumeCoordinator({ toolkit: new Toolkit().register(LoopTool) })],
    ['in process', () => new ResumeCoordinator({ toolkit: new Toolkit().register(LoopTool), waitFor: (r) => ({ id: r.id, ok: true }) })],
  ])('is an error result %s, never a rejection', async (_label, make) => {
    const result = await make().execute('loop', {});
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^suspension pnd-[\w-]+ cannot be stored: its request is not plain JSON \(Converting circular structure/);
    expect(pendingOf(result)).toBeUndefined();
  });

  it('asked by a replay (the next link of a chain) settles the call with an error result', async () => {
    @Tool({ name: 'then_loop', description: 'Asks an approval, then suspends with data that refers to itself' })
    class ThenLoopTool {
      run(_args: object, ctx?: ToolContext) {
        if (ctx?.replay?.request.kind !== 'approval') return pending({ kind: 'approval', prompt: 'Go on?' });
        return new LoopTool().run();
      }
    }
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(ThenLoopTool) });
    const asked = pendingOf(await coordinator.execute('then_loop', {}))!;
    const result = await coordinator.resolve({ id: asked.id, ok: true });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/cannot be stored: its request is not plain JSON/);
    expect((await coordinator.get(asked.id))!.status).toBe('resolved');
  });
});
