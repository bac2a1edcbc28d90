/**
 * ToolnexusExceptionFilter over real HTTP with real model failures (issue 10): a 5xx body
 * says only what kind of failure it was, with a correlation id that finds the log line
 * holding the real error; a 4xx keeps its useful message.
 */
import 'reflect-metadata';
import { Controller, Get, type INestApplication, type LoggerService } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidAnswerError } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { ToolnexusExceptionFilter, type ToolnexusErrorBody } from 'toolnexus-ts/nest';

const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
const targets = { refused: '', unauthorized: '' };

@Controller()
class ModelController {
  @Get('refused')
  async refused(): Promise<unknown> {
    return new OpenAIChatModel({
      baseUrl: targets.refused,
      apiKey: 'sk-live-nest-canary-0001',
      model: 'm',
      retry: { maxAttempts: 1 },
    }).complete(request);
  }

  @Get('unauthorized')
  async unauthorized(): Promise<unknown> {
    return new OpenAIChatModel({
      baseUrl: targets.unauthorized,
      apiKey: 'sk-live-nest-canary-0002',
      model: 'm',
      retry: { maxAttempts: 1 },
    }).complete(request);
  }

  @Get('bad-answer')
  badAnswer(): never {
    throw new InvalidAnswerError('invalid answer: data.amount must be a number');
  }
}

class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push([message, ...rest].map(String).join(' '));
  }
}

describe('ToolnexusExceptionFilter under real failures', () => {
  let app: INestApplication;
  let base: string;
  let provider: Server;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    // A port that refuses: listen, note the port, close.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    targets.refused = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    provider = createServer((req, res) => {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: 'Incorrect API key provided: sk-live-****0002. You can find your API key at https://platform.openai.com' },
        }),
      );
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    targets.unauthorized = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;

    const moduleRef = await Test.createTestingModule({
      controllers: [ModelController],
      providers: [{ provide: APP_FILTER, useClass: ToolnexusExceptionFilter }],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((app.getHttpServer() as import('node:http').Server).address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
    provider.closeAllConnections();
    await new Promise<void>((resolve) => provider.close(() => resolve()));
  });

  async function get(path: string): Promise<{ status: number; body: ToolnexusErrorBody; raw: string; header: string | null }> {
    const response = await fetch(`${base}/${path}`);
    const raw = await response.text();
    return { status: response.status, body: JSON.parse(raw) as ToolnexusErrorBody, raw, header: response.headers.get('x-correlation-id') };
  }

  it.each([
    ['refused', /ECONNREFUSED 127\.0\.0\.1:\d+/],
    ['unauthorized', /HTTP 401: Incorrect API key provided/],
  ])('%s: a 502 body with no internals, and the real error logged under its correlation id', async (path, internal) => {
    const { status, body, raw, header } = await get(path);
    expect(status).toBe(502);
    expect(body).toEqual({
      statusCode: 502,
      error: 'Bad Gateway',
      message: `The model provider failed to answer (correlation id ${body.correlationId})`,
      code: expect.stringMatching(/^TOOLNEXUS_MODEL_/) as unknown,
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
    });
    expect(header).toBe(body.correlationId);
    for (const leak of ['ECONNREFUSED', '127.0.0.1', 'Incorrect API key', 'sk-live', 'platform.openai.com'])
      expect(raw).not.toContain(leak);
    const logged = logger.lines.filter((line) => line.includes(body.correlationId as string));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(internal);
    expect(logged[0]).not.toContain('nest-canary');
  });

  it('a 4xx keeps its useful text and gets no correlation id', async () => {
    const { status, body } = await get('bad-answer');
    expect(status).toBe(400);
    expect(body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'invalid answer: data.amount must be a number',
      code: 'TOOLNEXUS_INVALID_ANSWER',
    });
  });
});
