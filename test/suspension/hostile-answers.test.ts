/**
 * Issue 10, answers: `Answer.data` is copied through a prototype-safe path with a size and
 * depth cap before anything is stored; a refused answer changes nothing.
 */
import { InvalidArgumentError, Toolkit, defineTool, pending, pendingOf, type ToolContext } from 'toolnexus-ts';
import { InvalidAnswerError, ResumeCoordinator } from 'toolnexus-ts/suspension';

const seen: unknown[] = [];

function toolkit(): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'ask',
      description: 'Asks, then echoes the answer data',
      inputSchema: { type: 'object', properties: {} },
      run: (_args: unknown, ctx?: ToolContext) => {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'ok?' });
        seen.push(ctx.answer.data);
        return 'answered';
      },
    }),
  );
}

async function suspended(options: { maxAnswerBytes?: number } = {}) {
  const coordinator = new ResumeCoordinator({ toolkit: toolkit(), ...options });
  const id = pendingOf(await coordinator.execute('ask', {}))!.id;
  return { coordinator, id };
}

async function expectUnchanged(coordinator: ResumeCoordinator, id: string) {
  const call = await coordinator.get(id);
  expect(call?.status).toBe('pending');
  expect(call?.answer).toBeUndefined();
  expect(seen).toEqual([]);
}

beforeEach(() => {
  seen.length = 0;
});

afterEach(() => {
  // Nothing reached Object.prototype.
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

describe('answers that reach for a prototype are refused, nothing stored', () => {
  it.each([
    ['an own __proto__ key', '{"__proto__":{"polluted":true}}'],
    ['a nested own __proto__ key', '{"a":[{"b":{"__proto__":{"polluted":true}}}]}'],
    ['a constructor key', '{"constructor":{"prototype":{"polluted":true}}}'],
    ['a prototype key', '{"x":{"prototype":{"polluted":true}}}'],
  ])('%s', async (_label, json) => {
    const { coordinator, id } = await suspended();
    const data = JSON.parse(json) as Record<string, unknown>;
    await expect(coordinator.resolve({ id, ok: true, data })).rejects.toThrow(InvalidAnswerError);
    await expect(coordinator.resolve({ id, ok: true, data })).rejects.toThrow(/forbidden key "(__proto__|constructor|prototype)"/);
    await expectUnchanged(coordinator, id);
  });
});

describe('answers are bounded', () => {
  it('a 20 MB answer is refused at once with the default 64 KB cap, nothing stored', async () => {
    const { coordinator, id } = await suspended();
    const started = performance.now();
    await expect(coordinator.resolve({ id, ok: true, data: { text: 'x'.repeat(20 * 1024 * 1024) } })).rejects.toThrow(
      'invalid answer: data is larger than 65536 bytes as JSON',
    );
    expect(performance.now() - started).toBeLessThan(1000);
    await expectUnchanged(coordinator, id);
  });

  it('many small parts count too', async () => {
    const { coordinator, id } = await suspended();
    const data = { items: Array.from({ length: 50_000 }, (_, i) => ({ i })) };
    await expect(coordinator.resolve({ id, ok: true, data })).rejects.toThrow(/larger than 65536 bytes/);
    await expectUnchanged(coordinator, id);
  });

  it('maxAnswerBytes moves the cap either way', async () => {
    const small = await suspended({ maxAnswerBytes: 1024 });
    await expect(small.coordinator.resolve({ id: small.id, ok: true, data: { text: 'x'.repeat(2000) } })).rejects.toThrow(
      /larger than 1024 bytes/,
    );
    await expectUnchanged(small.coordinator, small.id);
    const large = await suspended({ maxAnswerBytes: 1024 * 1024 });
    await expect(large.coordinator.resolve({ id: large.id, ok: true, data: { text: 'x'.repeat(200_000) } })).resolves.toEqual({
      output: 'answered',
      isError: false,
    });
  });

  it('maxAnswerBytes must be a positive integer', () => {
    for (const maxAnswerBytes of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(() => new ResumeCoordinator({ toolkit: toolkit(), maxAnswerBytes })).toThrow(InvalidArgumentError);
    }
  });

  it('data nested deeper than 32 levels is refused', async () => {
    const { coordinator, id } = await suspended();
    let data: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) data = { d: data };
    await expect(coordinator.resolve({ id, ok: true, data })).rejects.toThrow('invalid answer: data is nested deeper than 32 levels');
    await expectUnchanged(coordinator, id);
  });

  it('data JSON cannot hold, or whose getters throw, is an InvalidAnswerError', async () => {
    const { coordinator, id } = await suspended();
    const hostile: Array<Record<string, unknown>> = [
      { f: () => 1 },
      { n: 10n },
      { when: new Date(0) },
      Object.defineProperty({}, 'boom', {
        enumerable: true,
        get: () => {
          throw new Error('getter');
        },
      }),
    ];
    for (const data of hostile) await expect(coordinator.resolve({ id, ok: true, data })).rejects.toThrow(InvalidAnswerError);
    await expectUnchanged(coordinator, id);
  });
});

describe('an accepted answer is a copy', () => {
  it('the store and the replay see plain data, not the object given', async () => {
    const { coordinator, id } = await suspended();
    const data: Record<string, unknown> = { choice: 'yes', nested: { n: 1 } };
    await expect(coordinator.resolve({ id, ok: true, data, extra: 'dropped' } as never)).resolves.toEqual({
      output: 'answered',
      isError: false,
    });
    data.choice = 'changed later';
    expect(seen).toEqual([{ choice: 'yes', nested: { n: 1 } }]);
    expect(seen[0]).not.toBe(data);
    const stored = await coordinator.get(id);
    expect(stored?.answer).toEqual({ id, ok: true, data: { choice: 'yes', nested: { n: 1 } } });
  });
});
