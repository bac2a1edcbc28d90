import 'reflect-metadata';
import { Controller, Inject, Injectable, Module, Post, Req, Scope, type INestApplication } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { z } from 'zod';
import type { AddressInfo, Server } from 'node:net';
import { Tool, Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { ToolnexusModule, ToolnexusModuleError, type NestToolContext, type ToolnexusOptionsFactory } from 'toolnexus-ts/nest';
import { LedgerService, TransferArgs } from '../fixtures/nest/ledger';

@Injectable()
@Tool({ description: 'Move money between two accounts', args: TransferArgs })
class TransferTool {
  constructor(private readonly ledger: LedgerService) {}
  run(args: TransferArgs) {
    return this.ledger.move(args.from, args.to, args.amount);
  }
}

/** Not a tool: discovery must leave it alone. */
@Injectable()
class PlainService {
  run() {
    return 'not a tool';
  }
}

async function boot(metadata: Parameters<typeof Test.createTestingModule>[0]) {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('ToolnexusModule discovery', () => {
  it('registers @Tool providers with their injected dependencies, and nothing else', async () => {
    const app = await boot({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, TransferTool, PlainService] });
    const toolkit = app.get(Toolkit);
    expect(toolkit.tools().map((t) => t.name)).toEqual(['transfer']);
    expect(toolkit.get('transfer')?.instance).toBe(app.get(TransferTool));

    const result = await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5 });
    expect(result).toEqual({ output: 'moved 5 from a to b', isError: false });
    expect(app.get(LedgerService).moves).toEqual(['a->b:5']);

    const invalid = await toolkit.execute('transfer', { from: 'a', to: 'b', amount: '5' });
    expect(invalid.isError).toBe(true);
    expect(invalid.output).toMatch(/^invalid arguments for transfer: .*amount/);
    expect(app.get(LedgerService).moves).toHaveLength(1);
    await app.close();
  });

  it('finds tools in feature modules that do not export them, and in value and factory providers', async () => {
    @Tool({ name: 'ping', description: 'Answers pong' })
    class PingTool {
      run() {
        return 'pong';
      }
    }
    @Tool({ name: 'clock', description: 'The time' })
    class ClockTool {
      constructor(private readonly now: string) {}
      run() {
        return this.now;
      }
    }
    @Module({ providers: [LedgerService, TransferTool] })
    class PaymentsModule {}
    const app = await boot({
      imports: [ToolnexusModule.forRoot(), PaymentsModule],
      providers: [
        { provide: 'PING', useValue: new PingTool() },
        { provide: 'CLOCK', useFactory: () => new ClockTool('12:00') },
        { provide: 'CLOCK_ALIAS', useExisting: 'CLOCK' },
      ],
    });
    const toolkit = app.get(Toolkit);
    expect(
      toolkit
        .tools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(['clock', 'ping', 'transfer']);
    expect((await toolkit.execute('clock', {})).output).toBe('12:00');
    await app.close();
  });

  it('lets application code register more tools, resolving classes from the Nest container', async () => {
    @Injectable()
    class Greeter {
      greet(name: string) {
        return `hello, ${name}`;
      }
    }
    class GreetArgs {
      @IsString() name!: string;
    }
    // Listed as a provider but registered by hand: discovery already did, so register the
    // function tool only and check the container-backed resolver separately.
    @Tool({ description: 'Greets', args: GreetArgs })
    class GreetTool {
      constructor(private readonly greeter: Greeter) {}
      run(args: GreetArgs) {
        return this.greeter.greet(args.name);
      }
    }
    const app = await boot({ imports: [ToolnexusModule.forRoot()], providers: [Greeter, GreetTool] });
    const toolkit = app.get(Toolkit);
    toolkit.unregister('greet');
    toolkit.register(GreetTool, defineTool({ name: 'add', description: 'Add', inputSchema: { type: 'object' }, run: () => 3 }));
    expect(toolkit.get('greet')?.instance).toBe(app.get(GreetTool));
    expect((await toolkit.execute('greet', { name: 'Ada' })).output).toBe('hello, Ada');

    @Tool({ description: 'Not provided anywhere' })
    class StrayTool {
      run() {
        return 'x';
      }
    }
    expect(() => toolkit.register(StrayTool)).toThrow(/StrayTool/);
    expect(toolkit.has('stray')).toBe(false);
    await app.close();
  });

  it('has every tool registered before application modules run their onModuleInit', async () => {
    const seen: string[][] = [];
    @Injectable()
    class StartupCheck {
      constructor(private readonly toolkit: Toolkit) {}
      onModuleInit() {
        seen.push(this.toolkit.tools().map((t) => t.name));
      }
    }
    @Module({ providers: [StartupCheck, LedgerService, TransferTool] })
    class FeatureModule {}
    const app = await boot({ imports: [FeatureModule, ToolnexusModule.forRoot()], providers: [StartupCheck] });
    expect(seen).toEqual([['transfer'], ['transfer']]);
    await app.close();
  });

  it('gives a transient tool its own instance, built once', async () => {
    let built = 0;
    @Injectable({ scope: Scope.TRANSIENT })
    @Tool({ name: 'count', description: 'Counts its own calls' })
    class CountTool {
      private calls = 0;
      constructor(readonly ledger: LedgerService) {
        built += 1;
      }
      run() {
        this.calls += 1;
        return String(this.calls);
      }
    }
    const app = await boot({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, CountTool] });
    const toolkit = app.get(Toolkit);
    const before = built;
    expect((await toolkit.execute('count', {})).output).toBe('1');
    expect((await toolkit.execute('count', {})).output).toBe('2');
    expect(built).toBe(before);
    expect((toolkit.get('count')?.instance as CountTool).ledger).toBe(app.get(LedgerService));
    await app.close();
  });

  it('fails the boot with a clear error when two providers are tools with one name', async () => {
    @Tool({ name: 'transfer', description: 'A second transfer' })
    class OtherTransferTool {
      run() {
        return 'other';
      }
    }
    const booting = boot({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, TransferTool, OtherTransferTool] });
    await expect(booting).rejects.toThrow(ToolnexusModuleError);
    await expect(
      boot({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, TransferTool, OtherTransferTool] }),
    ).rejects.toThrow(/cannot register @Tool provider OtherTransferTool in .*: a tool named "transfer" is already registered/);
  });

  it('fails the boot when a @Tool provider has no run method', async () => {
    @Tool({ name: 'broken', description: 'Forgot run' })
    class BrokenTool {}
    await expect(boot({ imports: [ToolnexusModule.forRoot()], providers: [BrokenTool] })).rejects.toThrow(/BrokenTool .*has no run method/);
  });
});

describe('ToolnexusModule.forRootAsync', () => {
  @Injectable()
  class Settings {
    readonly timeoutMs = 30;
  }
  @Module({ providers: [Settings], exports: [Settings] })
  class SettingsModule {}

  @Tool({ name: 'slow', description: 'Takes its time' })
  class SlowTool {
    run(_args: object, ctx?: ToolContext) {
      return new Promise((resolve) => ctx?.signal?.addEventListener('abort', () => resolve('aborted')));
    }
  }

  it('takes options from a factory with injected dependencies', async () => {
    const app = await boot({
      imports: [
        ToolnexusModule.forRootAsync({
          imports: [SettingsModule],
          inject: [Settings],
          useFactory: (s: Settings) => ({ defaultTimeoutMs: s.timeoutMs }),
        }),
      ],
      providers: [SlowTool],
    });
    expect(await app.get(Toolkit).execute('slow', {})).toEqual({ output: 'slow timed out after 30 ms', isError: true });
    await app.close();
  });

  it('takes options from an options factory class', async () => {
    @Injectable()
    class ToolnexusConfig implements ToolnexusOptionsFactory {
      constructor(private readonly settings: Settings) {}
      createToolnexusOptions() {
        return { defaultTimeoutMs: this.settings.timeoutMs };
      }
    }
    const app = await boot({
      imports: [ToolnexusModule.forRootAsync({ imports: [SettingsModule], useClass: ToolnexusConfig })],
      providers: [SlowTool],
    });
    expect((await app.get(Toolkit).execute('slow', {})).output).toBe('slow timed out after 30 ms');
    await app.close();
  });

  it('takes options from an existing options factory provider', async () => {
    @Injectable()
    class SharedConfig implements ToolnexusOptionsFactory {
      createToolnexusOptions() {
        return Promise.resolve({ defaultTimeoutMs: 20 });
      }
    }
    @Module({ providers: [SharedConfig], exports: [SharedConfig] })
    class ConfigModule {}
    const app = await boot({
      imports: [ToolnexusModule.forRootAsync({ imports: [ConfigModule], useExisting: SharedConfig })],
      providers: [SlowTool],
    });
    expect((await app.get(Toolkit).execute('slow', {})).output).toBe('slow timed out after 20 ms');
    await app.close();
  });

  it('works as a non-global module in the module that imports it', async () => {
    @Injectable()
    class Caller {
      constructor(readonly toolkit: Toolkit) {}
    }
    @Module({
      imports: [ToolnexusModule.forRoot({ isGlobal: false })],
      providers: [LedgerService, TransferTool, Caller],
      exports: [Caller],
    })
    class PaymentsModule {}
    const app = await boot({ imports: [PaymentsModule] });
    const result = await app.get(Caller).toolkit.execute('transfer', { from: 'a', to: 'b', amount: 2 });
    expect(result).toEqual({ output: 'moved 2 from a to b', isError: false });
    await app.close();
  });

  it('rejects options that are not an object', () => {
    expect(() => ToolnexusModule.forRoot(null as never)).toThrow('ToolnexusModule options must be an object, got null');
    expect(() => ToolnexusModule.forRoot([] as never)).toThrow('ToolnexusModule options must be an object, got an array');
    expect(() => ToolnexusModule.forRootAsync(undefined as never)).toThrow(/forRootAsync needs options/);
  });

  it('rejects async options with no way, or two ways, to build them', () => {
    expect(() => ToolnexusModule.forRootAsync({})).toThrow(/exactly one of useFactory, useClass or useExisting \(got 0\)/);
    expect(() => ToolnexusModule.forRootAsync({ useFactory: () => ({}), useClass: Settings as never })).toThrow(/\(got 2\)/);
  });
});

describe('request-scoped tools', () => {
  /** One per HTTP request: the controller writes the caller, the tool reads it. */
  @Injectable({ scope: Scope.REQUEST })
  class RequestAudit {
    user = '(unset)';
  }

  @Injectable({ scope: Scope.REQUEST })
  @Tool({ name: 'whoami', description: 'Who is asking' })
  class WhoAmITool {
    static built = 0;
    constructor(
      @Inject(REQUEST) private readonly request: { headers: Record<string, string | undefined> },
      private readonly audit: RequestAudit,
    ) {
      WhoAmITool.built += 1;
    }
    run() {
      return `${this.audit.user} (header ${this.request.headers['x-user']})`;
    }
  }

  @Controller()
  class WhoController {
    constructor(
      private readonly toolkit: Toolkit,
      private readonly audit: RequestAudit,
    ) {}
    @Post('whoami')
    async whoami(@Req() request: { headers: Record<string, string | undefined> }) {
      this.audit.user = `user:${request.headers['x-user']}`;
      const ctx: NestToolContext = { request };
      const first = await this.toolkit.execute('whoami', {}, ctx);
      const second = await this.toolkit.execute('whoami', {}, ctx);
      return { first: first.output, second: second.output };
    }
  }

  let app: INestApplication;
  let base: string;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ToolnexusModule.forRoot()],
      controllers: [WhoController],
      providers: [RequestAudit, WhoAmITool],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  it('resolves the tool in the request it is called from, sharing that request’s providers', async () => {
    const builtBefore = WhoAmITool.built;
    const [ada, bob] = await Promise.all(
      ['ada', 'bob'].map((user) => fetch(`${base}/whoami`, { method: 'POST', headers: { 'x-user': user } }).then((r) => r.json())),
    );
    expect(ada).toEqual({ first: 'user:ada (header ada)', second: 'user:ada (header ada)' });
    expect(bob).toEqual({ first: 'user:bob (header bob)', second: 'user:bob (header bob)' });
    // One instance per request, shared by both calls of that request.
    expect(WhoAmITool.built - builtBefore).toBe(2);
  });

  it('builds a fresh instance per call when the context names no request', async () => {
    const toolkit = app.get(Toolkit);
    const builtBefore = WhoAmITool.built;
    const result = await toolkit.execute('whoami', {});
    expect(result.isError).toBe(true);
    expect(WhoAmITool.built - builtBefore).toBe(1);
    const other = await toolkit.execute('whoami', {}, { request: { headers: { 'x-user': 'cy' } } });
    expect(other).toEqual({ output: '(unset) (header cy)', isError: false });
    expect(WhoAmITool.built - builtBefore).toBe(2);
  });

  it('tries again on the next call when building the tool failed', async () => {
    let failures = 1;
    @Injectable({ scope: Scope.REQUEST })
    @Tool({ name: 'flaky', description: 'Fails to build once' })
    class FlakyTool {
      constructor(@Inject(REQUEST) readonly request: object) {
        if (failures-- > 0) throw new Error('connection pool not ready');
      }
      run() {
        return 'built';
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [FlakyTool] }).compile();
    await moduleRef.init();
    const ctx: NestToolContext = { request: {} };
    expect(await moduleRef.get(Toolkit).execute('flaky', {}, ctx)).toEqual({ output: 'connection pool not ready', isError: true });
    expect(await moduleRef.get(Toolkit).execute('flaky', {}, ctx)).toEqual({ output: 'built', isError: false });
    await moduleRef.close();
  });

  it('keeps a Standard Schema args and its sensitive keys for a request-scoped tool', async () => {
    const args = z.object({ user: z.string(), token: z.string().min(4) });
    @Injectable({ scope: Scope.REQUEST })
    @Tool({ name: 'sign_in', description: 'Signs in', args, sensitive: ['token'] })
    class SignInTool {
      constructor(@Inject(REQUEST) readonly request: object) {}
      run(value: z.infer<typeof args>) {
        return `signed in ${value.user}`;
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [SignInTool] }).compile();
    await moduleRef.init();
    const toolkit = moduleRef.get(Toolkit);
    const { $schema: _dialect, ...shown } = args['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
    expect(toolkit.get('sign_in')?.inputSchema).toEqual(shown);
    const ctx: NestToolContext = { request: {} };
    expect(await toolkit.execute('sign_in', { user: 'ann', token: 'secret' }, ctx)).toEqual({ output: 'signed in ann', isError: false });
    expect((await toolkit.execute('sign_in', { user: 'ann', token: 'x' }, ctx)).output).toBe(
      'invalid arguments for sign_in: token: Too small: expected string to have >=4 characters',
    );
    expect(toolkit.redact('sign_in', { user: 'ann', token: 'secret' })).toEqual({ user: 'ann', token: '[redacted]' });
    await moduleRef.close();
  });

  it('publishes the tool’s schema at boot, before any request', () => {
    const [tool] = app.get(Toolkit).toOpenAI();
    expect(tool).toEqual({
      type: 'function',
      function: { name: 'whoami', description: 'Who is asking', parameters: expect.objectContaining({ type: 'object' }) as unknown },
    });
  });
});
