/**
 * Issue 27 item 6: a Nest controller that returns a run to its HTTP client returns
 * `redactRun(result, toolkit)`, and a `@Sensitive()` value never reaches the body: not in
 * the arguments (toolCalls and the transcript), not where a tool's prompt or result quoted it.
 */
import 'reflect-metadata';
import { Body, Controller, Inject, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { IsInt, IsString } from 'class-validator';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sensitive, Tool, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, redactRun } from 'toolnexus-ts/agents';

const CANARY = 'GB33BUKB20201555555555';

class TransferArgs {
  @IsString() @Sensitive() iban!: string;
  @IsInt() cents!: number;
}

@Tool({
  name: 'transfer',
  description: 'Sends money after approval',
  args: TransferArgs,
  approval: { prompt: (a: TransferArgs) => `Send ${a.cents} to ${a.iban}?` },
})
class Transfer {
  run(args: TransferArgs) {
    return `sent ${args.cents} to ${args.iban}`;
  }
}

const toolkit = new Toolkit().register(Transfer);
const model = new FunctionModel(({ messages }) => {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return `Transferred: ${last.content}`;
  return { toolCalls: [{ name: 'transfer', arguments: { iban: CANARY, cents: 500 } }] };
});
const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit }) });

@Controller('runs')
class RunsController {
  constructor(@Inject(AgentRunner) private readonly agents: AgentRunner) {}

  @Post()
  async start(@Body() body: { prompt: string }) {
    return redactRun(await this.agents.run(body.prompt), toolkit);
  }

  @Post('answer')
  async answer(@Body() body: { id: string; ok: boolean }) {
    return redactRun(await this.agents.resume({ id: body.id, ok: body.ok }), toolkit);
  }

  /** What the docs' snippets did before: the run as it is. */
  @Post('raw')
  async raw(@Body() body: { prompt: string }) {
    return this.agents.run(body.prompt);
  }
}

@Module({ controllers: [RunsController], providers: [{ provide: AgentRunner, useValue: runner }] })
class AppModule {}

describe('a Nest controller returning redactRun(result, toolkit)', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => {
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  const post = async (path: string, body: unknown): Promise<string> => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    return response.text();
  };

  it('never sends the @Sensitive value, halted or done', async () => {
    const halted = await post('/runs', { prompt: 'send 500' });
    expect(halted).not.toContain(CANARY);
    const result = JSON.parse(halted) as {
      status: string;
      pending: { id: string; prompt: string };
      toolCalls: Array<{ arguments: string; status: string }>;
    };
    expect(result.status).toBe('halted');
    expect(result.pending.prompt).toBe('Send 500 to [redacted]?');
    expect(JSON.parse(result.toolCalls[0]!.arguments)).toEqual({ iban: '[redacted]', cents: 500 });
    expect(result.toolCalls[0]!.status).toBe('pending');

    const done = await post('/runs/answer', { id: result.pending.id, ok: true });
    expect(done).not.toContain(CANARY);
    expect(JSON.parse(done)).toMatchObject({ status: 'done', text: 'Transferred: sent 500 to [redacted]' });
  });

  it('the run as it is would have sent it (the test can fail)', async () => {
    expect(await post('/runs/raw', { prompt: 'send 500' })).toContain(CANARY);
  });
});
