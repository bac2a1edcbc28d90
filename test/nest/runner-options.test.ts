/**
 * Issue 45, "Nest module parity": every `AgentRunner` option reaches the module's runner
 * through `ToolnexusModule.forRoot` / `forRootAsync`, from one options type derived from
 * `AgentRunnerOptions`; and a Nest 12 app configured only through `forRootAsync` with guardrails
 * and a budget serves a blocked run and a `budget_exceeded` run over the chat module's endpoint
 * (real HTTP on 127.0.0.1, a chat-completions server on 127.0.0.1 as the model).
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type AgentRunnerOptions, type InputSubject } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusChatModule, ToolnexusModule, type ToolnexusModuleOptions } from 'toolnexus-ts/nest';
import { runnerOptionsOf } from '../../src/nest/toolnexus.module';
import { chatModel, LookupOrderTool } from '../fixtures/chat/agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

/**
 * Every key of `AgentRunnerOptions`: the type makes this list complete (a runner option added
 * and not listed here fails `npm run typecheck`), and the test below fails at run time if one of
 * them does not reach the runner.
 */
const EVERY_RUNNER_OPTION: Record<keyof AgentRunnerOptions, true> = {
  model: true,
  toolkit: true,
  coordinator: true,
  runs: true,
  systemPrompt: true,
  skills: true,
  maxTurns: true,
  maxParallelTools: true,
  waitFor: true,
  runLeaseMs: true,
  clock: true,
  onMetric: true,
  guardrails: true,
  budget: true,
  sessionBudget: true,
  prices: true,
  maxOutputRepairs: true,
  durability: true,
  name: true,
  telemetry: true,
  sessions: true,
  maxSessionMessages: true,
  maxSessionBytes: true,
  sessionHoldMs: true,
  beforeModel: true,
  afterModel: true,
};

/** What the module builds itself and hands the runner; every other runner option is the module's too. */
type BuiltByModule = 'toolkit' | 'coordinator';
// A runner option the module's options lack is a type error here.
const reachable: Exclude<keyof AgentRunnerOptions, keyof ToolnexusModuleOptions | BuiltByModule> extends never ? true : false = true;

it('every runner option given to the module reaches the runner as it was given', () => {
  expect(reachable).toBe(true);
  const built = new Set<string>(['toolkit', 'coordinator']);
  const given: Record<string, unknown> = {};
  for (const key of Object.keys(EVERY_RUNNER_OPTION)) if (!built.has(key)) given[key] = { sentinel: key };
  // The module's own options go to the toolkit and coordinator, never to the runner.
  const options = {
    ...given,
    store: { sentinel: 'store' },
    hooks: {},
    policy: () => 'allow',
    leaseMs: 5,
  } as unknown as ToolnexusModuleOptions;
  const runner = runnerOptionsOf(options) as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) expect({ key, value: runner[key] }).toEqual({ key, value });
  for (const own of ['store', 'hooks', 'policy', 'leaseMs']) expect(runner).not.toHaveProperty(own);
});

describe('a Nest 12 app configured only through forRootAsync, with guardrails and a budget', () => {
  let dir: string;
  let model: MockServer;
  let app: INestApplication;
  let store: SqliteStore;
  let url: string;

  /** Stands in for a config service: the limits come from another provider, as forRootAsync is for. */
  @Injectable()
  class Limits {
    readonly totalTokens = 20;
    readonly banned = 'password';
  }
  @Module({ providers: [Limits], exports: [Limits] })
  class LimitsModule {}

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-options-'));
    model = await startMockServer(chatModel);
    store = new SqliteStore(join(dir, 'app.db'));
    @Module({
      imports: [
        ToolnexusModule.forRootAsync({
          imports: [LimitsModule],
          inject: [Limits],
          useFactory: (limits: Limits): ToolnexusModuleOptions => ({
            model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
            store,
            name: 'support',
            maxParallelTools: 2,
            durability: 'step',
            guardrails: {
              input: [
                function noPasswords({ text }: InputSubject) {
                  return text.includes(limits.banned)
                    ? { action: 'block' as const, message: 'never type a password here' }
                    : { action: 'allow' as const };
                },
              ],
            },
            // A streamed model call of the mock server costs 14 tokens: one fits, a second (after a tool call) would not.
            budget: { totalTokens: limits.totalTokens },
          }),
        }),
        ToolnexusChatModule.forRoot({ principal: () => ({ id: 'ada' }) }),
      ],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    app.get(Toolkit).register(new LookupOrderTool());
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/api/chat`.replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** POSTs one message as `useChat` does and reads the UI message stream's parts. */
  async function say(chatId: string, text: string): Promise<Array<Record<string, unknown>>> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: chatId, messages: [{ id: `u-${chatId}`, role: 'user', parts: [{ type: 'text', text }] }] }),
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    return body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
  }

  const stopOf = (parts: Array<Record<string, unknown>>) => parts.find((part) => part.type === 'data-toolnexus-stop')?.data;

  it('the runner is the one the options describe', () => {
    expect(app.get(AgentRunner).name).toBe('support');
  });

  it('a run the input guardrail blocks ends blocked in the chat stream, and the model is never asked', async () => {
    const before = model.requests.length;
    const parts = await say('c-blocked', 'my password is hunter2');
    expect(stopOf(parts)).toEqual({ status: 'blocked', guardrail: 'noPasswords', stage: 'input', message: 'never type a password here' });
    expect(model.requests.length).toBe(before);
    expect(parts.some((part) => part.type === 'text-delta')).toBe(false);
  });

  it('a run past its budget ends budget_exceeded in the chat stream; one within it answers', async () => {
    const fine = await say('c-fine', 'hello');
    expect(stopOf(fine)).toBeUndefined();
    expect(
      fine
        .filter((part) => part.type === 'text-delta')
        .map((part) => part.delta)
        .join(''),
    ).toBe('You said: hello');
    const parts = await say('c-spent', 'lookup o-1');
    expect(stopOf(parts)).toEqual({ status: 'budget_exceeded', limit: 'totalTokens', budget: 20, spent: 14 });
  });
});
