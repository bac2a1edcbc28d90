import {
  InvalidArgumentError,
  Toolkit,
  defineTool,
  pending,
  success,
  type Answer,
  type PendingRequest,
  type ToolContext,
} from 'toolnexus-ts';
import { MemorySuspensionStore, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';

type Ctx = ToolContext<{ user?: string }>;

function setup(waitFor: (request: PendingRequest) => Answer | Promise<Answer>) {
  const runs: Array<{ args: unknown; ctx: Ctx | undefined }> = [];
  const store = new MemoryStore();
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'delete_repo',
      description: 'Deletes a repository after approval',
      inputSchema: { type: 'object', properties: { repo: { type: 'string' } }, required: ['repo'] },
      run(args, ctx?: Ctx) {
        runs.push({ args, ctx });
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Delete ${String(args.repo)}?` });
        return success(
          `deleted ${String(args.repo)} for ${ctx.user ?? 'anyone'} (${String((ctx.answer.data?.note as string | undefined) ?? '')})`,
        );
      },
    }),
    defineTool({
      name: 'stubborn',
      description: 'Suspends every time',
      run(_args, ctx) {
        runs.push({ args: _args, ctx });
        return pending({ kind: 'approval', prompt: ctx?.answer ? 'Need another signature' : 'Need a signature' });
      },
    }),
    defineTool({
      name: 'late',
      description: 'Suspends with a deadline already passed',
      run(_args, ctx) {
        runs.push({ args: _args, ctx });
        return ctx?.answer ? success('ran') : pending({ kind: 'approval', prompt: 'Too late?', expiresAt: '2000-01-01T00:00:00Z' });
      },
    }),
  );
  const coordinator = new ResumeCoordinator({ toolkit, store, waitFor });
  return { runs, store, coordinator };
}

describe('ResumeCoordinator with waitFor (§5.1, in-process)', () => {
  it('awaits the answer and replays the same call once with { ...ctx, answer }', async () => {
    const seen: PendingRequest[] = [];
    const { coordinator, runs, store } = setup((request) => {
      seen.push(request);
      return { id: request.id, ok: true, data: { note: 'ok by ops' } };
    });
    const ctx: Ctx = { user: 'ada' };
    const result = await coordinator.execute('delete_repo', { repo: 'web' }, ctx);
    expect(result).toEqual({ output: 'deleted web for ada (ok by ops)', isError: false });
    expect(seen).toEqual([{ id: expect.stringMatching(/^pnd-/) as unknown, kind: 'approval', prompt: 'Delete web?' }]);
    expect(runs).toHaveLength(2);
    expect(runs[0]!.ctx).toBe(ctx);
    expect(runs[1]!.ctx).toEqual({
      user: 'ada',
      answer: { id: seen[0]!.id, ok: true, data: { note: 'ok by ops' } },
      replay: { request: seen[0], chain: [] },
      // The approval the tool asked for itself, where a declared one would be (issue 45).
      approval: { id: seen[0]!.id, ok: true, data: { note: 'ok by ops' } },
    });
    expect(ctx).toEqual({ user: 'ada' });
    expect(await store.list()).toEqual([]);
  });

  it('replays with a context holding only the answer, what it answers and the approval it is when the caller gave none', async () => {
    const { coordinator, runs } = setup((request) => ({ id: request.id, ok: true }));
    await coordinator.execute('delete_repo', { repo: 'web' });
    expect(runs).toHaveLength(2);
    expect(runs[0]!.ctx).toBeUndefined();
    expect(Object.keys(runs[1]!.ctx ?? {})).toEqual(['answer', 'replay', 'approval']);
  });

  it('returns an error naming both ids when the answer is for another request; nothing replays', async () => {
    let asked = '';
    const { coordinator, runs } = setup((request) => {
      asked = request.id;
      return { id: 'pnd-someone-else', ok: true };
    });
    const result = await coordinator.execute('delete_repo', { repo: 'web' });
    expect(result).toEqual({ output: `answer id pnd-someone-else does not match pending request ${asked}`, isError: true });
    expect(runs).toHaveLength(1);
  });

  it('returns "declined/expired: " + prompt on ok:false; nothing replays', async () => {
    const { coordinator, runs } = setup((request) => ({ id: request.id, ok: false, reason: 'declined' }));
    expect(await coordinator.execute('delete_repo', { repo: 'web' })).toEqual({
      output: 'declined/expired: Delete web? (declined)',
      isError: true,
    });
    expect(runs).toHaveLength(1);
  });

  it('treats an approval that arrives after expiresAt as expired', async () => {
    const { coordinator, runs } = setup((request) => ({ id: request.id, ok: true }));
    expect(await coordinator.execute('late', {})).toEqual({ output: 'declined/expired: Too late? (expired)', isError: true });
    expect(runs).toHaveLength(1);
  });

  it('returns "unresolved: " + prompt when the replay suspends again, and asks only once', async () => {
    let asked = 0;
    const { coordinator, runs } = setup((request) => {
      asked++;
      return { id: request.id, ok: true };
    });
    expect(await coordinator.execute('stubborn', {})).toEqual({ output: 'unresolved: Need another signature', isError: true });
    expect(asked).toBe(1);
    expect(runs).toHaveLength(2);
  });

  it('turns a waitFor that throws into an error result', async () => {
    const { coordinator, runs } = setup(() => {
      throw new Error('approver unreachable');
    });
    const result = await coordinator.execute('delete_repo', { repo: 'web' });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^no answer to pnd-.*: approver unreachable$/);
    expect(runs).toHaveLength(1);
  });

  it('turns a malformed answer into an error result that says what is wrong', async () => {
    const { coordinator, runs } = setup(() => ({ ok: 'sure' }) as unknown as Answer);
    const result = await coordinator.execute('delete_repo', { repo: 'web' });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^invalid answer to pnd-.*: id must be a non-empty string$/);
    expect(runs).toHaveLength(1);
  });

  it('passes results that are not suspensions through without asking', async () => {
    const waitFor = jest.fn();
    const { coordinator } = setup(waitFor);
    expect(await coordinator.execute('delete_repo', {})).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^invalid arguments for delete_repo/) as unknown,
    });
    expect(waitFor).not.toHaveBeenCalled();
  });
});

describe('ResumeCoordinator construction', () => {
  it('defaults to a MemorySuspensionStore and exposes it', () => {
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit() });
    expect(coordinator.store).toBeInstanceOf(MemorySuspensionStore);
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY])('refuses leaseMs %p', (leaseMs) => {
    expect(() => new ResumeCoordinator({ toolkit: new Toolkit(), leaseMs })).toThrow(InvalidArgumentError);
  });

  it('refuses a missing toolkit and a waitFor that is not a function', () => {
    expect(() => new ResumeCoordinator({} as never)).toThrow(new InvalidArgumentError('ResumeCoordinator needs a toolkit'));
    expect(() => new ResumeCoordinator({ toolkit: new Toolkit(), waitFor: 'yes' as never })).toThrow(InvalidArgumentError);
  });

  it('refuses to cancel without an id', async () => {
    await expect(new ResumeCoordinator({ toolkit: new Toolkit() }).cancel(undefined as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('passes the caller context itself (same reference) to the first execution', async () => {
    const seen: unknown[] = [];
    const toolkit = new Toolkit().register(defineTool({ name: 'peek', description: 'Peeks', run: (_a, ctx) => void seen.push(ctx) }));
    const ctx = { tenant: 't1' };
    await new ResumeCoordinator({ toolkit }).execute('peek', {}, ctx);
    await new ResumeCoordinator({ toolkit }).execute('peek', {});
    expect(seen[0]).toBe(ctx);
    expect(seen[1]).toBeUndefined();
  });
});
