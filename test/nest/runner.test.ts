import 'reflect-metadata';
import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, pending } from 'toolnexus-ts';
import { AlreadyResolvedError, ResumeCoordinator, UnknownSuspensionError } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type AgentToolContext } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';
import { startScriptedOpenAI, type ScriptedOpenAI } from '../fixtures/nest/scripted-openai';
import { LedgerService, TransferTool } from '../fixtures/nest/ledger';

/** Where the model lives: a provider the async options factory injects. */
@Injectable()
class ModelSettings {
  baseUrl = '';
}
@Module({ providers: [ModelSettings], exports: [ModelSettings] })
class SettingsModule {}

/** Application code that only knows the injected runner. */
@Injectable()
class PaymentsAgent {
  constructor(readonly runner: AgentRunner) {}
  pay(prompt: string) {
    return this.runner.run(prompt, { runId: `pay-${prompt.length}-${Date.now()}` });
  }
}

describe('AgentRunner injected by ToolnexusModule (OpenAI-compatible model over HTTP on 127.0.0.1)', () => {
  let openai: ScriptedOpenAI;
  let dir: string;
  beforeAll(async () => {
    openai = await startScriptedOpenAI();
  });
  afterAll(() => openai.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-runner-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function boot(filename: string, extraProviders: Array<new (...args: never[]) => object> = []): Promise<TestingModule> {
    const app = await Test.createTestingModule({
      imports: [
        SettingsModule,
        ToolnexusModule.forRootAsync({
          imports: [SettingsModule],
          inject: [ModelSettings],
          useFactory: (settings: ModelSettings) => ({
            model: new OpenAIChatModel({ baseUrl: settings.baseUrl, model: 'scripted' }),
            store: new SqliteStore({ filename }),
            systemPrompt: 'You move money only with approval.',
            maxTurns: 4,
          }),
        }),
      ],
      providers: [LedgerService, TransferTool, PaymentsAgent, ...extraProviders],
    })
      .overrideProvider(ModelSettings)
      .useValue({ baseUrl: openai.baseUrl })
      .compile();
    return app.init();
  }

  it('halts on the approval, resumes from the answer alone, and runs the injected service once', async () => {
    const app = await boot(join(dir, 'runs.db'));
    const agent = app.get(PaymentsAgent);
    expect(agent.runner).toBe(app.get(AgentRunner));
    expect(app.get(AgentRunner).coordinator).toBe(app.get(ResumeCoordinator));

    const first = await agent.pay('pay 500 from acc-1 to acc-2');
    expect(first.status).toBe('halted');
    expect(first.pending?.prompt).toBe('Transfer 500 from acc-1 to acc-2?');
    expect(openai.bodies.at(-1)?.tools?.map((t) => t.function.name)).toEqual(['transfer']);
    expect(openai.bodies.at(-1)?.messages[0]).toEqual({ role: 'system', content: 'You move money only with approval.' });
    const open = await app.get(ResumeCoordinator).list({ status: 'pending', runId: first.runId });
    expect(open.map((c) => c.request.id)).toEqual([first.pending?.id]);
    expect(app.get(LedgerService).moves).toEqual([]);

    const answer = { id: first.pending?.id ?? '', ok: true };
    const done = await app.get(AgentRunner).resume(answer);
    expect(done).toMatchObject({ status: 'done', text: 'Done: moved 500 from acc-1 to acc-2', runId: first.runId });
    expect(app.get(LedgerService).moves).toEqual(['acc-1->acc-2:500']);

    expect(await app.get(AgentRunner).resume(answer)).toMatchObject({ status: 'done', text: 'Done: moved 500 from acc-1 to acc-2' });
    await expect(app.get(AgentRunner).resume({ ...answer, ok: false })).rejects.toThrow(AlreadyResolvedError);
    await expect(app.get(AgentRunner).resume({ id: 'pnd-nobody', ok: true })).rejects.toThrow(UnknownSuspensionError);
    expect(app.get(LedgerService).moves).toEqual(['acc-1->acc-2:500']);
    await app.close();
  });

  it('resumes a run halted by one app instance in the next one (shared SQLite file)', async () => {
    const filename = join(dir, 'restart.db');
    const before = await boot(filename);
    const first = await before.get(PaymentsAgent).pay('pay 7 from a to b');
    await before.close();

    const after = await boot(filename);
    const done = await after.get(AgentRunner).resume({ id: first.pending?.id ?? '', ok: true });
    expect(done.status).toBe('done');
    expect(done.text).toBe('Done: moved 7 from a to b');
    expect(after.get(LedgerService).moves).toEqual(['a->b:7']);
    expect(before.get(LedgerService).moves).toEqual([]);
    await after.close();
  });

  it('hands the run’s context to request-scoped tools on run and on resume', async () => {
    @Injectable({ scope: Scope.REQUEST })
    @Tool({ name: 'sign', description: 'Signs as the requesting user' })
    class SignTool {
      constructor(@Inject(REQUEST) private readonly request: { user: string } | undefined) {}
      run(_args: object, ctx?: AgentToolContext) {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: `sign for ${this.request?.user} (${ctx?.callId})` });
        return `signed by ${this.request?.user}`;
      }
    }
    const app = await Test.createTestingModule({
      imports: [
        ToolnexusModule.forRoot({
          model: new OpenAIChatModel({ baseUrl: openai.baseUrl, model: 'scripted' }),
        }),
      ],
      providers: [SignTool],
    }).compile();
    await app.init();
    const runner = app.get(AgentRunner);
    const first = await runner.run('sign the contract', { context: { request: { user: 'ada' } } });
    expect(first.status).toBe('halted');
    expect(first.pending?.prompt).toMatch(/^sign for ada \(call_\d+\)$/);
    // The answer arrives in another request, by another user: the replay runs in that one.
    const done = await runner.resume({ id: first.pending?.id ?? '', ok: true }, { context: { request: { user: 'bob' } } });
    expect(done).toMatchObject({ status: 'done', text: 'Done: signed by bob' });
    await app.close();
  });

  it('without a model, boots for tools and says what is missing when the runner is used', async () => {
    const app = await Test.createTestingModule({
      imports: [ToolnexusModule.forRoot()],
      providers: [LedgerService, TransferTool],
    }).compile();
    await app.init();
    await expect(app.get(AgentRunner).run('pay 1 from a to b')).rejects.toThrow(ToolnexusModuleError);
    await expect(app.get(AgentRunner).run('pay 1 from a to b')).rejects.toThrow(
      /AgentRunner has no chat model: pass `model` to ToolnexusModule.forRoot/,
    );
    expect((await app.get(ResumeCoordinator).execute('transfer', { from: 'a', to: 'b', amount: 1 })).isError).toBe(true);
    await app.close();
  });

  it('fails the boot with the runner’s own error for a bad maxTurns', async () => {
    await expect(Test.createTestingModule({ imports: [ToolnexusModule.forRoot({ maxTurns: 0 })] }).compile()).rejects.toThrow(
      'maxTurns must be a positive integer, got 0',
    );
  });
});
