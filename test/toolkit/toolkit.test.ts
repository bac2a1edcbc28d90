import 'reflect-metadata';
import { runInNewContext } from 'node:vm';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import {
  Describe,
  Tool,
  ToolRegistrationError,
  Toolkit,
  defineTool,
  failure,
  pending,
  pendingOf,
  success,
  type ToolContext,
  type ToolMetricEvent,
} from 'toolnexus-ts';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
  @IsOptional() @IsString() memo?: string;
}

/** Records every call so tests can assert what run received. */
class Calls {
  readonly seen: Array<{ args: unknown; ctx: unknown; argc: number }> = [];
}

function transferTool(calls: Calls) {
  @Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
  class TransferTool {
    run(args: TransferArgs, ...rest: unknown[]) {
      calls.seen.push({ args, ctx: rest[0], argc: 1 + rest.length });
      return success({ moved: args.amount });
    }
  }
  return TransferTool;
}

describe('Toolkit registration (§4)', () => {
  it('registers a class through the resolver, an instance, and a defineTool object; chainable', () => {
    @Tool({ description: 'Current weather' })
    class GetWeatherTool {
      run() {
        return 'sunny';
      }
    }
    @Tool({ description: 'Echo' })
    class EchoTool {
      run(args: Record<string, unknown>) {
        return args;
      }
    }
    const add = defineTool({
      name: 'add',
      description: 'Add',
      inputSchema: { type: 'object', properties: { a: { type: 'number' } } },
      run: (a) => a,
    });
    const resolved: unknown[] = [];
    const toolkit = new Toolkit({
      resolver: (cls) => {
        resolved.push(cls);
        return new cls();
      },
    });
    expect(toolkit.register(GetWeatherTool, new EchoTool(), add)).toBe(toolkit);
    expect(resolved).toEqual([GetWeatherTool]);
    expect(toolkit.tools().map((t) => t.name)).toEqual(['get_weather', 'echo', 'add']);
    expect(toolkit.has('echo')).toBe(true);
    expect(toolkit.get('get_weather')!.description).toBe('Current weather');
    expect(toolkit.unregister('echo')).toBe(true);
    expect(toolkit.unregister('echo')).toBe(false);
    expect(toolkit.has('echo')).toBe(false);
    expect(toolkit.get('echo')).toBeUndefined();
  });

  it('defaults names from the class name and sanitizes given names', () => {
    @Tool({ description: 'x' })
    class HTTPFetchTool {
      run() {}
    }
    @Tool({ description: 'x' })
    class Lookup {
      run() {}
    }
    @Tool({ name: 'send mail!', description: 'x' })
    class MailTool {
      run() {}
    }
    const toolkit = new Toolkit().register(HTTPFetchTool, Lookup, MailTool);
    expect(toolkit.tools().map((t) => t.name)).toEqual(['http_fetch', 'lookup', 'send_mail_']);
  });

  it('fails fast on programmer errors', () => {
    class Plain {
      run() {}
    }
    @Tool({ description: 'no run' })
    class NoRunTool {}
    @Tool({ name: 'dup', description: 'a' })
    class A {
      run() {}
    }
    @Tool({ name: 'dup', description: 'b' })
    class B {
      run() {}
    }
    const toolkit = new Toolkit();
    expect(() => toolkit.register(Plain)).toThrow(new ToolRegistrationError('class Plain has no @Tool decorator'));
    expect(() => toolkit.register(new Plain())).toThrow(ToolRegistrationError);
    expect(() => toolkit.register(NoRunTool)).toThrow(new ToolRegistrationError('tool "no_run" has no run method'));
    toolkit.register(A);
    expect(() => toolkit.register(B)).toThrow(new ToolRegistrationError('a tool named "dup" is already registered'));
    expect(() => toolkit.register(42 as unknown as object)).toThrow(ToolRegistrationError);
    expect(() => toolkit.register(defineTool({ name: 'n', description: '', run: () => 1 }))).toThrow('tool "n" needs a description');
  });

  it('lets a subclass inherit run, override it, and demands its own @Tool', async () => {
    @Tool({ name: 'base', description: 'base' })
    class BaseTool {
      run() {
        return `base:${this.tag()}`;
      }
      tag() {
        return 'b';
      }
    }
    @Tool({ name: 'inherits', description: 'inherits run' })
    class InheritsTool extends BaseTool {
      override tag() {
        return 'i';
      }
    }
    @Tool({ name: 'overrides', description: 'overrides run' })
    class OverridesTool extends BaseTool {
      override run() {
        return 'own';
      }
    }
    class Undecorated extends BaseTool {}
    const toolkit = new Toolkit().register(BaseTool, InheritsTool, OverridesTool);
    expect((await toolkit.execute('inherits', {})).output).toBe('base:i');
    expect((await toolkit.execute('overrides', {})).output).toBe('own');
    expect(() => toolkit.register(Undecorated)).toThrow('class Undecorated has no @Tool decorator');
  });

  it('accepts a raw inputSchema tool and checks required keys and top-level types', async () => {
    const schema = {
      type: 'object' as const,
      properties: { q: { type: 'string' as const }, n: { type: 'integer' as const } },
      required: ['q'],
      additionalProperties: false,
    };
    const search = defineTool({ name: 'search', description: 'Search', inputSchema: schema, run: (args) => args });
    const toolkit = new Toolkit().register(search);
    expect(toolkit.get('search')!.inputSchema).toBe(schema);
    expect(await toolkit.execute('search', { q: 'x', n: 2, extra: 1 })).toEqual({ output: '{"q":"x","n":2}', isError: false });
    expect(await toolkit.execute('search', { n: 1.5 })).toEqual({
      output: 'invalid arguments for search: q: q is required; n: n must be an integer',
      isError: true,
    });
  });

  it('drops null for an optional parameter of a raw inputSchema tool, as @IsOptional does, and refuses it for a required one', async () => {
    const schema = {
      type: 'object' as const,
      properties: { q: { type: 'string' as const }, verbose: { type: 'boolean' as const }, note: { type: ['string', 'null'] } },
      required: ['q'],
    };
    const seen: Array<Record<string, unknown>> = [];
    const search = defineTool({
      name: 'search',
      description: 'Search',
      inputSchema: schema,
      run: (args) => {
        seen.push(args);
        return 'ok';
      },
    });
    const toolkit = new Toolkit().register(search);
    expect(await toolkit.execute('search', { q: 'x', verbose: null, note: null })).toEqual({ output: 'ok', isError: false });
    // The optional boolean is gone (not `null`); a type that takes null keeps it.
    expect(seen).toEqual([{ q: 'x', note: null }]);
    expect(Object.hasOwn(seen[0]!, 'verbose')).toBe(false);
    expect(await toolkit.execute('search', { q: null })).toEqual({
      output: 'invalid arguments for search: q: q must be a string',
      isError: true,
    });
    expect(seen).toHaveLength(1);
  });

  it('exposes OpenAI, Anthropic and Gemini schemas', () => {
    const toolkit = new Toolkit().register(transferTool(new Calls()));
    const parameters = toolkit.get('transfer')!.inputSchema;
    expect(toolkit.toOpenAI()).toEqual([
      { type: 'function', function: { name: 'transfer', description: 'Move money between two accounts', parameters } },
    ]);
    expect(toolkit.toAnthropic()).toEqual([{ name: 'transfer', description: 'Move money between two accounts', input_schema: parameters }]);
    const gemini = toolkit.toGemini();
    expect(gemini).toHaveLength(1);
    expect(gemini[0].functionDeclarations).toHaveLength(1);
    expect(gemini[0].functionDeclarations[0]!.name).toBe('transfer');
    expect(gemini[0].functionDeclarations[0]!.parameters.properties).toEqual(parameters.properties);
    expect(gemini[0].functionDeclarations[0]!.parameters).not.toHaveProperty('additionalProperties');
  });
});

describe('Toolkit dispatch never rejects (§4)', () => {
  let calls: Calls;
  let toolkit: Toolkit;
  beforeEach(() => {
    calls = new Calls();
    toolkit = new Toolkit().register(transferTool(calls));
  });
  const good = { from: 'a', to: 'b', amount: 5 };

  it('runs a valid call with a DTO instance', async () => {
    expect(await toolkit.execute('transfer', good)).toEqual({ output: '{"moved":5}', isError: false });
    expect(calls.seen[0]!.args).toBeInstanceOf(TransferArgs);
    expect(calls.seen[0]!.args).toEqual({ from: 'a', to: 'b', amount: 5 });
  });

  it('accepts a JSON string holding an object', async () => {
    expect((await toolkit.execute('transfer', JSON.stringify(good))).isError).toBe(false);
  });

  it('answers an unknown tool with its name', async () => {
    expect(await toolkit.execute('nope', {})).toEqual({ output: 'unknown tool: nope', isError: true });
  });

  const jsonParseMessage = (text: string): string => {
    try {
      JSON.parse(text);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`${text} parsed`);
  };

  it.each([
    [[1, 2], 'arguments must be a JSON object, got an array'],
    [null, 'arguments must be a JSON object, got null'],
    [7, 'arguments must be a JSON object, got a number'],
    [true, 'arguments must be a JSON object, got a boolean'],
    // The parser's own words, which V8 changes between Node majors (22 added "(line 1 column 2)").
    ['{not json', `arguments are not valid JSON (${jsonParseMessage('{not json')}): {not json`],
    ['[1]', 'arguments must be a JSON object, got an array'],
    ['"text"', 'arguments must be a JSON object, got a string'],
  ])('says what is wrong with args %p', async (args, problem) => {
    expect(await toolkit.execute('transfer', args)).toEqual({ output: `invalid arguments for transfer: ${problem}`, isError: true });
    expect(calls.seen).toHaveLength(0);
  });

  it('lists every failing constraint with its property path, and does not run', async () => {
    const r = await toolkit.execute('transfer', { from: 1, amount: 0 });
    expect(r).toEqual({
      output:
        'invalid arguments for transfer: from: from must be a string; to: to must be a string; amount: amount must not be less than 1',
      isError: true,
    });
    expect(calls.seen).toHaveLength(0);
  });

  it('names nested property paths', async () => {
    class Street {
      @IsString() name!: string;
    }
    class Home {
      @ValidateNested() @Type(() => Street) street!: Street;
    }
    class MoveArgs {
      @ValidateNested({ each: true }) @Type(() => Home) homes!: Home[];
    }
    @Tool({ name: 'move', description: 'move', args: MoveArgs })
    class MoveTool {
      run() {
        return 'moved';
      }
    }
    toolkit.register(MoveTool);
    expect((await toolkit.execute('move', { homes: [{ street: { name: 'ok' } }, { street: { name: 3 } }] })).output).toBe(
      'invalid arguments for move: homes.1.street.name: name must be a string',
    );
    expect(await toolkit.execute('move', { homes: [{ street: { name: 'ok' } }] })).toEqual({ output: 'moved', isError: false });
    // @ValidateNested alone would accept an array (it validates each element); the schema says object.
    expect((await toolkit.execute('move', { homes: [{ street: [] }] })).output).toBe(
      'invalid arguments for move: homes.0.street: street must be an object',
    );
    expect((await toolkit.execute('move', { homes: { street: { name: 'x' } } })).output).toBe(
      'invalid arguments for move: homes: homes must be an array',
    );
  });

  it('does not convert types implicitly', async () => {
    const r = await toolkit.execute('transfer', { ...good, amount: '5' });
    expect(r.output).toBe('invalid arguments for transfer: amount: amount must not be less than 1, amount must be an integer number');
    expect(calls.seen).toHaveLength(0);
  });

  it('strips unknown properties and keeps __proto__ away from prototypes', async () => {
    const hostile: unknown = JSON.parse(
      '{"from":"a","to":"b","amount":5,"admin":true,"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}',
    );
    expect((await toolkit.execute('transfer', hostile)).isError).toBe(false);
    const args = calls.seen[0]!.args as Record<string, unknown>;
    expect(
      Object.keys(args)
        .filter((k) => args[k] !== undefined)
        .sort(),
    ).toEqual(['amount', 'from', 'to']);
    expect(args).not.toHaveProperty('admin');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(args)).toBe(TransferArgs.prototype);
  });

  it('turns a throw in run into an error result', async () => {
    @Tool({ name: 'explode', description: 'throws' })
    class Explode {
      run(): never {
        throw new Error('kaboom');
      }
    }
    @Tool({ name: 'reject', description: 'rejects' })
    class Reject {
      async run() {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a tool that throws a non-Error is what this test is about
        throw 'plain string';
      }
    }
    toolkit.register(Explode, Reject);
    expect(await toolkit.execute('explode', {})).toEqual({ output: 'kaboom', isError: true });
    expect(await toolkit.execute('reject', {})).toEqual({ output: 'plain string', isError: true });
  });

  it('gives the message alone for an error from another realm, which fails instanceof Error', async () => {
    const foreign = runInNewContext("new Error('from a vm')") as unknown;
    expect(foreign instanceof Error).toBe(false);
    toolkit.register(
      defineTool({
        name: 'foreign',
        description: 'throws a vm error',
        run: () => {
          throw foreign;
        },
      }),
    );
    expect(await toolkit.execute('foreign', {})).toEqual({ output: 'from a vm', isError: true });
  });

  it('normalizes what run returns', async () => {
    const values: unknown[] = ['text', undefined, { a: 1 }, 3, failure('nope'), null];
    let i = 0;
    toolkit.register(defineTool({ name: 'ret', description: 'returns the next value', run: () => values[i++] }));
    const outputs = [];
    for (let n = 0; n < values.length; n++) outputs.push(await toolkit.execute('ret', {}));
    expect(outputs).toEqual([
      { output: 'text', isError: false },
      { output: '', isError: false },
      { output: '{"a":1}', isError: false },
      { output: '3', isError: false },
      { output: 'nope', isError: true },
      { output: 'null', isError: false },
    ]);
  });
});

describe('ToolContext (§3)', () => {
  let calls: Calls;
  let toolkit: Toolkit;
  const good = { from: 'a', to: 'b', amount: 5 };
  beforeEach(() => {
    calls = new Calls();
    toolkit = new Toolkit().register(transferTool(calls));
  });

  it('calls run with ONE argument when no context is given', async () => {
    await toolkit.execute('transfer', good);
    expect(calls.seen[0]!.argc).toBe(1);
  });

  it('passes the very context object the caller gave', async () => {
    const ctx: ToolContext<{ tenant: string }> = { tenant: 'acme' };
    await toolkit.execute('transfer', good, ctx);
    expect(calls.seen[0]!.argc).toBe(2);
    expect(calls.seen[0]!.ctx).toBe(ctx);
  });

  it('passes the same reference with a caller signal too', async () => {
    const ctx = { signal: new AbortController().signal, user: 'u1' };
    await toolkit.execute('transfer', good, ctx);
    expect(calls.seen[0]!.ctx).toBe(ctx);
  });

  it('returns "NAME cancelled" for a signal already aborted, without running', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await toolkit.execute('transfer', good, { signal: controller.signal })).toEqual({ output: 'transfer cancelled', isError: true });
    expect(calls.seen).toHaveLength(0);
  });

  it('returns "NAME cancelled" when the caller aborts mid-run', async () => {
    toolkit.register(
      defineTool({
        name: 'slow',
        description: 'slow',
        run: (_a, ctx) => new Promise((r) => ctx?.signal?.addEventListener('abort', () => r('late'))),
      }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect(await toolkit.execute('slow', {}, { signal: controller.signal })).toEqual({ output: 'slow cancelled', isError: true });
  });

  describe('deadlines', () => {
    function slowTool(seen: { ctx?: ToolContext; abortedAt?: number }, timeoutMs?: number) {
      return defineTool({
        name: 'slow',
        description: 'waits for its signal',
        timeoutMs,
        run: (_args, ctx) =>
          new Promise((resolve) => {
            seen.ctx = ctx;
            ctx?.signal?.addEventListener('abort', () => {
              seen.abortedAt = Date.now();
              resolve('stopped');
            });
          }),
      });
    }

    it('uses ctx.timeout and gives run a shallow copy whose signal aborts at the deadline', async () => {
      const seen: { ctx?: ToolContext; abortedAt?: number } = {};
      toolkit.register(slowTool(seen));
      const ctx = { timeout: 30, tenant: 't' };
      const started = Date.now();
      expect(await toolkit.execute('slow', {}, ctx)).toEqual({ output: 'slow timed out after 30 ms', isError: true });
      expect(seen.ctx).not.toBe(ctx);
      expect(seen.ctx).toMatchObject({ tenant: 't', timeout: 30 });
      expect(seen.ctx!.signal!.aborted).toBe(true);
      expect(seen.abortedAt! - started).toBeGreaterThanOrEqual(25);
    });

    it('falls back to the tool timeoutMs, then the toolkit defaultTimeoutMs', async () => {
      const seen = {};
      const withTool = new Toolkit({ defaultTimeoutMs: 5000 }).register(slowTool(seen, 20));
      expect((await withTool.execute('slow', {})).output).toBe('slow timed out after 20 ms');
      const withDefault = new Toolkit({ defaultTimeoutMs: 25 }).register(slowTool(seen));
      expect((await withDefault.execute('slow', {})).output).toBe('slow timed out after 25 ms');
    });

    it('combines the deadline with the caller signal', async () => {
      const seen: { ctx?: ToolContext } = {};
      toolkit.register(slowTool(seen));
      const caller = new AbortController();
      setTimeout(() => caller.abort(), 15);
      const r = await toolkit.execute('slow', {}, { signal: caller.signal, timeout: 5000 });
      expect(r).toEqual({ output: 'slow cancelled', isError: true });
      expect(seen.ctx!.signal).not.toBe(caller.signal);
      expect(seen.ctx!.signal!.aborted).toBe(true);
    });

    it('returns the result when run beats the deadline', async () => {
      toolkit.register(defineTool({ name: 'quick', description: 'quick', timeoutMs: 1000, run: async () => 'done' }));
      expect(await toolkit.execute('quick', {})).toEqual({ output: 'done', isError: false });
    });
  });
});

describe('hooks and metrics (§4)', () => {
  it('beforeTool can short-circuit with a pending approval; afterTool can replace; onMetric counts suspensions as pending', async () => {
    const calls = new Calls();
    const metrics: ToolMetricEvent[] = [];
    const toolkit = new Toolkit({
      hooks: {
        beforeTool: ({ name, args, ctx }) => {
          if (name === 'transfer' && !ctx?.answer) {
            return { result: pending({ kind: 'approval', prompt: `Transfer ${(args as TransferArgs).amount}?` }) };
          }
          return undefined;
        },
        afterTool: ({ result }) => (result.output === '{"moved":5}' ? success('moved five') : undefined),
        onMetric: (event) => metrics.push(event),
      },
    }).register(transferTool(calls));

    const suspended = await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5 });
    expect(pendingOf(suspended)).toMatchObject({ kind: 'approval', prompt: 'Transfer 5?' });
    expect(calls.seen).toHaveLength(0);

    const approved = await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5 }, { answer: { id: 'x', ok: true } });
    expect(approved).toEqual({ output: 'moved five', isError: false });
    await toolkit.execute('missing', {});

    expect(metrics.map(({ ms, ...rest }) => (expect(ms).toBeGreaterThanOrEqual(0), rest))).toEqual([
      { event: 'tool', tool: 'transfer', isError: false, pending: true },
      { event: 'tool', tool: 'transfer', isError: false, pending: false },
      { event: 'tool', tool: 'missing', isError: true, pending: false },
    ]);
  });

  it('afterTool sees the validated args and the duration', async () => {
    const seen: unknown[] = [];
    const toolkit = new Toolkit({ hooks: { afterTool: (e) => void seen.push(e) } }).register(transferTool(new Calls()));
    await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5, junk: 1 });
    expect(seen[0]).toMatchObject({ name: 'transfer', args: { from: 'a', to: 'b', amount: 5 }, result: { isError: false } });
    expect((seen[0] as { args: object }).args).not.toHaveProperty('junk');
  });

  it('a throwing hook becomes an error result, not a rejection', async () => {
    const toolkit = new Toolkit({
      hooks: {
        beforeTool: () => {
          throw new Error('guard down');
        },
      },
    }).register(transferTool(new Calls()));
    expect(await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5 })).toEqual({ output: 'guard down', isError: true });
  });
});
