/**
 * Issue 10, the toolkit under hostile tools and hooks: `execute` never rejects, whatever
 * `run` throws or returns and whatever a hook does; raw-schema tools see own keys only.
 */
import { Toolkit, defineTool, success, type ToolResult } from 'toolnexus-ts';

function throwing(value: () => unknown): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'boom',
      description: 'Throws what it is given',
      inputSchema: { type: 'object', properties: {} },
      run: () => {
        throw value();
      },
    }),
  );
}

function returning(value: () => unknown): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'give',
      description: 'Returns what it is given',
      inputSchema: { type: 'object', properties: {} },
      run: () => value(),
    }),
  );
}

describe('execute never rejects, whatever run throws', () => {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['a null-prototype object', () => Object.create(null) as object, /^a thrown object without a message$/],
    ['a plain object: its JSON, not [object Object]', () => ({ code: 'E_QUOTA', status: 429 }), /^\{"code":"E_QUOTA","status":429\}$/],
    ['a null-prototype object with fields', () => Object.assign(Object.create(null) as object, { code: 42 }), /"code":42/],
    [
      'an object whose toString throws',
      () => ({
        toString: () => {
          throw new Error('no words');
        },
      }),
      /.+/,
    ],
    [
      'an object whose message getter throws',
      () =>
        Object.defineProperty({}, 'message', {
          get: () => {
            throw new Error('no');
          },
        }),
      /.+/,
    ],
    ['a revoked proxy', () => revoked, /.+/],
    ['a symbol', () => Symbol('sym'), /Symbol\(sym\)/],
    ['a BigInt', () => 12n, /^12$/],
    [
      'a function (never its source)',
      () =>
        function secretSauce() {
          return 'SOURCE-TEXT';
        },
      /^a thrown function secretSauce$/,
    ],
    [
      'an AggregateError that contains itself',
      () => {
        const e = new AggregateError([], '');
        (e as { errors: unknown[] }).errors.push(e, new Error('inner'));
        return e;
      },
      /inner/,
    ],
  ];

  it.each(cases)('%s becomes an error result', async (_label, value, words) => {
    const result = await throwing(value).execute('boom', {});
    expect(result.isError).toBe(true);
    expect(typeof result.output).toBe('string');
    expect(result.output).toMatch(words);
    expect(result.output).not.toContain('SOURCE-TEXT');
  });
});

describe('hooks that throw or misbehave become error results', () => {
  const echo = defineTool({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: {} }, run: () => 'ok' });

  it('a throwing onMetric does not change the result (nor reject)', async () => {
    const toolkit = new Toolkit({
      hooks: {
        onMetric: () => {
          throw Object.create(null);
        },
      },
    }).register(echo);
    await expect(toolkit.execute('echo', {})).resolves.toEqual({ output: 'ok', isError: false });
    await expect(toolkit.execute('missing', {})).resolves.toEqual({ output: 'unknown tool: missing', isError: true });
  });

  it('beforeTool and afterTool that throw hostile values, or return what is not a result, become error results', async () => {
    const hooks: Array<ConstructorParameters<typeof Toolkit>[0]> = [
      {
        hooks: {
          beforeTool: () => {
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a hook throwing a hostile non-Error
            throw {
              toString: () => {
                throw new Error('x');
              },
            };
          },
        },
      },
      { hooks: { beforeTool: () => ({ result: 42 as unknown as ToolResult }) } },
      {
        hooks: {
          afterTool: () => {
            throw Object.create(null);
          },
        },
      },
      { hooks: { afterTool: () => 'not a result' as unknown as ToolResult } },
    ];
    for (const options of hooks) {
      const result = await new Toolkit(options).register(echo).execute('echo', {});
      expect(result.isError).toBe(true);
      expect(typeof result.output).toBe('string');
    }
  });
});

describe('outputs JSON cannot carry become a clear error result', () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  const cases: Array<[string, () => unknown]> = [
    ['a circular object', () => circular],
    [
      'a function',
      () =>
        function leaky() {
          return 'SOURCE-TEXT';
        },
    ],
    ['a symbol', () => Symbol('s')],
    ['a BigInt', () => 10n],
    ['an object holding a BigInt', () => ({ n: 10n })],
    [
      'a throwing toJSON',
      () => ({
        toJSON: () => {
          throw new Error('nope');
        },
      }),
    ],
  ];

  it.each(cases)('%s returned by run', async (_label, value) => {
    const result = await returning(value).execute('give', {});
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^the tool's output cannot be sent to the model: /);
    expect(result.output).not.toContain('[object Object]');
    expect(result.output).not.toContain('SOURCE-TEXT');
  });

  it('success() says the same, keeping the metadata', () => {
    const result = success(circular, { k: 1 });
    expect(result).toMatchObject({ isError: true, metadata: { k: 1 } });
    expect(result.output).toMatch(/not JSON-serialisable \(Converting circular structure to JSON/);
    expect(success({ ok: true })).toEqual({ output: '{"ok":true}', isError: false });
  });
});

describe('raw inputSchema tools see only their own declared keys', () => {
  it('additionalProperties: false drops inherited names (toString, hasOwnProperty, valueOf)', async () => {
    const seen: unknown[] = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'closed',
        description: 'Closed schema',
        inputSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
        run: (args: unknown) => {
          seen.push(args);
          return 'ok';
        },
      }),
    );
    const result = await toolkit.execute('closed', '{"a":"x","toString":1,"hasOwnProperty":2,"valueOf":3,"isPrototypeOf":4}');
    expect(result).toEqual({ output: 'ok', isError: false });
    expect(seen).toEqual([{ a: 'x' }]);
  });

  it('a required name is not satisfied by Object.prototype', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'needs',
        description: 'Needs toString',
        inputSchema: { type: 'object', properties: {}, required: ['toString'] },
        run: () => 'ran',
      }),
    );
    expect(await toolkit.execute('needs', {})).toEqual({
      output: 'invalid arguments for needs: toString: toString is required',
      isError: true,
    });
  });
});
