import 'reflect-metadata';
import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import {
  AlreadyResolvedError, InvalidAnswerError, InvalidResumeError, ModelHttpError, RunCheckpointError, RunConflictError, RunNotFoundError,
  StoreUnavailableError, UnknownSuspensionError, UnregisteredToolError, type ToolnexusError,
} from 'toolnexus-ts';
import { ToolnexusExceptionFilter, httpStatusOf, type ToolnexusErrorBody } from 'toolnexus-ts/nest';

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
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  async function get(kind: string): Promise<{ status: number; body: ToolnexusErrorBody }> {
    const response = await fetch(`${base}/throw/${kind}`);
    return { status: response.status, body: (await response.json()) as ToolnexusErrorBody };
  }

  it.each([
    ['unknown', 404, 'Not Found', 'unknown suspension: pnd-1', 'UnknownSuspensionError'],
    ['no-run', 404, 'Not Found', 'no checkpoint for run run-1', 'RunNotFoundError'],
    ['settled', 409, 'Conflict', 'suspension pnd-1 is already resolved', 'AlreadyResolvedError'],
    ['conflict', 409, 'Conflict', 'run run-1: checkpoint version 2 was changed by another process', 'RunConflictError'],
    ['malformed', 400, 'Bad Request', 'invalid answer: ok must be a boolean', 'InvalidAnswerError'],
    ['bad-resume', 400, 'Bad Request', 'resume needs at least one answer', 'InvalidResumeError'],
    ['store-down', 503, 'Service Unavailable', 'connection refused', 'StoreUnavailableError'],
    ['model-down', 502, 'Bad Gateway', 'openai returned HTTP 500: overloaded (after 3 attempts)', 'ModelHttpError'],
  ])('%s → %i with a body that says what happened', async (kind, statusCode, error, message, code) => {
    expect(await get(kind)).toEqual({ status: statusCode, body: { statusCode, error, message, code } });
  });

  it('answers server-side faults with 500 and no internals', async () => {
    expect(await get('corrupt')).toEqual({ status: 500, body: { statusCode: 500, error: 'Internal Server Error', message: 'Internal server error', code: 'RunCheckpointError' } });
    expect((await get('unregistered')).status).toBe(500);
  });

  it('leaves errors that are not toolnexus errors to Nest', async () => {
    expect(await get('plain')).toEqual({ status: 500, body: { statusCode: 500, message: 'Internal server error' } });
  });

  it('maps statuses without a request, for hosts with their own error handling', () => {
    expect(httpStatusOf(new UnknownSuspensionError('x') as ToolnexusError)).toBe(404);
    expect(httpStatusOf(new AlreadyResolvedError('x', 'declined'))).toBe(409);
  });
});
