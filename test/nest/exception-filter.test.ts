import 'reflect-metadata';
import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { ToolnexusError } from 'toolnexus-ts';
import {
  AlreadyResolvedError,
  InvalidAnswerError,
  StoreUnavailableError,
  UnknownSuspensionError,
  UnregisteredToolError,
} from 'toolnexus-ts/suspension';
import { ModelError, ModelHttpError } from 'toolnexus-ts/models';
import { InvalidResumeError, RunCheckpointError, RunConflictError, RunNotFoundError } from 'toolnexus-ts/agents';
import { ToolnexusExceptionFilter, ToolnexusModuleError, httpStatusOf, type ToolnexusErrorBody } from 'toolnexus-ts/nest';

const errors: Record<string, () => Error> = {
  unknown: () => new UnknownSuspensionError('pnd-1'),
  'no-run': () => new RunNotFoundError('run-1'),
  settled: () => new AlreadyResolvedError('pnd-1', 'resolved'),
  conflict: () => new RunConflictError('run-1', 'checkpoint version 2 was changed by another process'),
  malformed: () => new InvalidAnswerError('invalid answer: ok must be a boolean'),
  'bad-resume': () => new InvalidResumeError('resume needs at least one answer'),
  'store-down': () => new StoreUnavailableError('connection refused'),
  'model-down': () => new ModelHttpError('openai', 500, 'overloaded', 3),
  corrupt: () => new RunCheckpointError('run-1', 'secret internals'),
  unregistered: () => new UnregisteredToolError('pnd-1', 'transfer'),
  plain: () => new Error('not ours'),
  // What a minifier leaves of a class name, both ways it can happen.
  minified: () => Object.defineProperty(new AlreadyResolvedError('pnd-1', 'declined'), 'name', { value: 'e' }),
  subclass: () => new (class t extends UnknownSuspensionError {})('pnd-2'),
};

@Controller()
class ThrowingController {
  @Get('throw/:kind')
  throw(@Param('kind') kind: string): never {
    throw (errors[kind] as () => Error)();
  }
}

describe('ToolnexusExceptionFilter', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [ThrowingController],
      providers: [{ provide: APP_FILTER, useClass: ToolnexusExceptionFilter }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((app.getHttpServer() as import('node:http').Server).address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  async function get(kind: string): Promise<{ status: number; body: ToolnexusErrorBody }> {
    const response = await fetch(`${base}/throw/${kind}`);
    return { status: response.status, body: (await response.json()) as ToolnexusErrorBody };
  }

  it.each([
    ['unknown', 404, 'Not Found', 'unknown suspension: pnd-1', 'TOOLNEXUS_UNKNOWN_SUSPENSION'],
    ['no-run', 404, 'Not Found', 'no checkpoint for run run-1', 'TOOLNEXUS_RUN_NOT_FOUND'],
    ['settled', 409, 'Conflict', 'suspension pnd-1 is already resolved', 'TOOLNEXUS_ALREADY_RESOLVED'],
    ['conflict', 409, 'Conflict', 'run run-1: checkpoint version 2 was changed by another process', 'TOOLNEXUS_RUN_CONFLICT'],
    ['malformed', 400, 'Bad Request', 'invalid answer: ok must be a boolean', 'TOOLNEXUS_INVALID_ANSWER'],
    ['bad-resume', 400, 'Bad Request', 'resume needs at least one answer', 'TOOLNEXUS_INVALID_RESUME'],
  ])('%s → %i with a body that says what happened', async (kind, statusCode, error, message, code) => {
    expect(await get(kind)).toEqual({ status: statusCode, body: { statusCode, error, message, code } });
  });

  it.each([
    ['store-down', 503, 'Service Unavailable', 'A backing service is unavailable; retry later', 'TOOLNEXUS_STORE_UNAVAILABLE'],
    ['model-down', 502, 'Bad Gateway', 'The model provider failed to answer', 'TOOLNEXUS_MODEL_HTTP'],
  ])('%s → %i with a generic body and a correlation id (details only in the log)', async (kind, statusCode, error, message, code) => {
    const { status, body } = await get(kind);
    expect({ status, body }).toEqual({
      status: statusCode,
      body: {
        statusCode,
        error,
        message: `${message} (correlation id ${body.correlationId})`,
        code,
        correlationId: expect.any(String) as unknown,
      },
    });
  });

  it('answers server-side faults with 500 and no internals', async () => {
    const { status, body } = await get('corrupt');
    expect(status).toBe(500);
    expect(body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: `Internal server error (correlation id ${body.correlationId})`,
      code: 'TOOLNEXUS_RUN_CHECKPOINT',
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
    });
    expect((await get('unregistered')).status).toBe(500);
  });

  it('maps a renamed class by its code, and sends the code, not the name', async () => {
    expect(await get('minified')).toEqual({
      status: 409,
      body: { statusCode: 409, error: 'Conflict', message: 'suspension pnd-1 is already declined', code: 'TOOLNEXUS_ALREADY_RESOLVED' },
    });
    expect(await get('subclass')).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'unknown suspension: pnd-2', code: 'TOOLNEXUS_UNKNOWN_SUSPENSION' },
    });
  });

  it('leaves errors that are not toolnexus errors to Nest', async () => {
    expect(await get('plain')).toEqual({ status: 500, body: { statusCode: 500, message: 'Internal server error' } });
  });

  it('maps statuses without a request, for hosts with their own error handling', () => {
    expect(httpStatusOf(new UnknownSuspensionError('x') as ToolnexusError)).toBe(404);
    expect(httpStatusOf(new AlreadyResolvedError('x', 'declined'))).toBe(409);
  });

  it('maps by code an error that fails instanceof (thrown by a second copy of the package)', () => {
    const foreign = Object.assign(new Error('unknown suspension: x'), { code: 'TOOLNEXUS_UNKNOWN_SUSPENSION' });
    expect(foreign).not.toBeInstanceOf(UnknownSuspensionError);
    expect(httpStatusOf(foreign as unknown as ToolnexusError)).toBe(404);
    expect(httpStatusOf(Object.assign(new Error('down'), { code: 'TOOLNEXUS_STORE_UNAVAILABLE' }) as unknown as ToolnexusError)).toBe(503);
  });

  it('falls back to the class for a subclass with a code of its own', () => {
    class PaymentProviderError extends ModelError {
      override readonly code = 'ACME_PAYMENT_PROVIDER';
    }
    expect(httpStatusOf(new PaymentProviderError('acme', 'the payment provider is down'))).toBe(502);
    expect(httpStatusOf(new ToolnexusModuleError('bad options'))).toBe(500);
    expect(new ToolnexusModuleError('bad options').code).toBe('TOOLNEXUS_NEST_MODULE');
  });
});
