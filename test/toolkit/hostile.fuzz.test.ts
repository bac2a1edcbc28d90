/**
 * Issue 10, fuzzed: hostile answers against `coordinator.resolve` and hostile `run` throws
 * and returns against `toolkit.execute`. Nothing rejects unexpectedly (resolve rejects only
 * with a ToolnexusError; execute never), nothing reaches Object.prototype, and the heap grows
 * by less than 64 MB over all the runs (answers up to 1 MB each). Seeded: a failure replays.
 */
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Toolkit, ToolnexusError, defineTool, pending, pendingOf, type ToolContext, type ToolResult } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SEED = 20261010;
const HEAP_BOUND = 64 * 1024 * 1024;
const MARKER = 'SOURCE-TEXT-MARKER';

function heap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

function expectUnpolluted(): void {
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'isAdmin', 'x', 'a', 'toString2']) expect(probe[key]).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
}

/** Own keys named __proto__, constructor or prototype anywhere in `value`. */
function forbiddenKeysIn(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.keys(value).flatMap((k) => [
    ...(['__proto__', 'constructor', 'prototype'].includes(k) ? [k] : []),
    ...forbiddenKeysIn((value as Record<string, unknown>)[k]),
  ]);
}

/** JSON text with keys that reach for prototypes: JSON.parse makes them own keys, as a web form's body would. */
const key = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'polluted', 'reason'),
  },
);
const { json: jsonText } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('null', 'true', 'false', '0', '-1.5e300', '""'),
    fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
    fc.integer({ min: 0, max: 1024 * 1024 }).map((n) => JSON.stringify('x'.repeat(n))),
    fc.array(tie('json'), { maxLength: 6 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(key, tie('json')), { maxLength: 6 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
    fc.integer({ min: 20, max: 200 }).map((depth) => `${'{"d":'.repeat(depth)}1${'}'.repeat(depth)}`),
  ),
}));

const forgedId = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('pnd-\u0000x', '\ud800', 'x'.repeat(600), ''));

const hostileAnswer = fc.record({
  real: fc.boolean(),
  id: forgedId,
  ok: fc.oneof(fc.boolean(), fc.constant('yes' as unknown as boolean)),
  data: fc.option(jsonText, { nil: undefined }),
  reason: fc.option(fc.constantFrom('declined', 'cancelled', 'expired', 'bogus'), { nil: undefined }),
});

describe('hostile answers against coordinator.resolve', () => {
  it('reject only with a ToolnexusError, pollute nothing, and stay within the heap bound', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'ask',
        description: 'Asks once',
        inputSchema: { type: 'object', properties: {} },
        run: (_args: unknown, ctx?: ToolContext) =>
          ctx?.answer ? { seen: ctx.answer.data ?? null } : pending({ kind: 'approval', prompt: 'ok?' }),
      }),
    );
    const coordinator = new ResumeCoordinator({ toolkit });
    const before = heap();
    await fc.assert(
      fc.asyncProperty(hostileAnswer, async ({ real, id, ok, data, reason }) => {
        const pendingId = pendingOf(await coordinator.execute('ask', {}))!.id;
        const answer = {
          id: real ? pendingId : id,
          ok,
          ...(data === undefined ? {} : { data: JSON.parse(data) as unknown }),
          ...(reason === undefined ? {} : { reason }),
        };
        try {
          const result: ToolResult = await coordinator.resolve(answer as never);
          expect(typeof result.output).toBe('string');
          // What was stored is bounded and holds no prototype-reaching key.
          const stored = (await coordinator.get(answer.id))?.answer?.data;
          if (stored !== undefined) {
            expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThanOrEqual(64 * 1024);
            expect(forbiddenKeysIn(stored)).toEqual([]);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(ToolnexusError);
          // A refused answer leaves its call pending.
          if (real) expect((await coordinator.get(pendingId))?.status).toBe('pending');
        }
        expectUnpolluted();
      }),
      { numRuns: 250, seed: SEED },
    );
    expect(heap() - before).toBeLessThan(HEAP_BOUND);
  });
});

/** Values a tool might throw or return, hostile ones included. */
const hostileValue: fc.Arbitrary<() => unknown> = fc.oneof(
  fc
    .anything({
      withBigInt: true,
      withNullPrototype: true,
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
    })
    .map((v) => () => v),
  fc.constantFrom<() => unknown>(
    () => Object.create(null) as object,
    () => ({
      toString: () => {
        throw new Error('no');
      },
    }),
    () =>
      Object.defineProperty({}, 'message', {
        get: () => {
          throw new Error('no');
        },
      }),
    () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
    () => Symbol('s'),
    () => 12n,
    () =>
      function leak() {
        return MARKER;
      },
    () => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    },
    () => ({
      toJSON: () => {
        throw new Error('json');
      },
    }),
    () => ({ output: 'looks like a result', isError: 'no' }),
    () =>
      Object.defineProperty({}, 'output', {
        get: () => {
          throw new Error('getter');
        },
        enumerable: true,
      }),
    () => new AggregateError([new Error('a'), Object.create(null)], ''),
  ),
);

const how = fc.constantFrom('throw', 'return', 'reject', 'resolve');

describe('hostile run throws and returns against toolkit.execute', () => {
  it('never rejects, never shows function source, pollutes nothing, stays within the heap bound', async () => {
    const before = heap();
    await fc.assert(
      fc.asyncProperty(hostileValue, how, fc.boolean(), fc.boolean(), async (make, mode, throwingMetric, timed) => {
        const toolkit = new Toolkit({
          ...(timed ? { defaultTimeoutMs: 2 ** 40 } : {}),
          hooks: {
            onMetric: () => {
              if (throwingMetric) throw make();
            },
          },
        }).register(
          defineTool({
            name: 'hostile',
            description: 'Misbehaves',
            inputSchema: { type: 'object', properties: {} },
            run: () => {
              const value = make();
              if (mode === 'throw') throw value;
              // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point: rejecting with hostile non-Errors
              if (mode === 'reject') return Promise.reject(value);
              if (mode === 'resolve') return Promise.resolve(value);
              return value;
            },
          }),
        );
        const result = await toolkit.execute('hostile', {}, timed ? { signal: new AbortController().signal } : undefined);
        expect(typeof result.output).toBe('string');
        expect(typeof result.isError).toBe('boolean');
        expect(result.output).not.toContain(MARKER);
        expect(result.output).not.toBe('[object Object]');
        expectUnpolluted();
      }),
      { numRuns: 600, seed: SEED },
    );
    expect(heap() - before).toBeLessThan(HEAP_BOUND);
  });
});
