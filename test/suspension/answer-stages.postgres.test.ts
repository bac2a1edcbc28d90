/**
 * The path of an answer as named stages on a store that claims early (PostgreSQL: the read and
 * the claim are one statement, docs/performance.md): a `resolve` under an answer policy still
 * enters each stage once, in the documented order, and the store is asked once before the
 * settlement (its early claim), never read again; a refused answer's early claim is given back.
 */
import { Toolkit, defineTool, pending, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { ORDER, runsOf, watchStages } from '../fixtures/answer-stages';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const schema = uniqueSchema('stages');
let url: string;
let store: PostgresStore;
const log: string[] = [];

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys after approval',
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  run: (args, ctx) => (ctx?.answer ? `deployed ${String(args.env)}` : pending({ kind: 'approval', prompt: `Deploy ${String(args.env)}?` })),
});

beforeAll(async () => {
  url = await postgresUrl();
  store = new PostgresStore({ connectionString: url, schema });
  // Each store method the path may call logs its name, and calls through.
  for (const method of ['get', 'claimEarly', 'restoreClaim', 'claim', 'complete'] as const) {
    const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
    Object.assign(store, { [method]: (...args: unknown[]) => (log.push(method), original(...args)) });
  }
});
afterAll(async () => {
  await store?.close();
  await dropSchema(url, schema);
});
afterEach(() => jest.restoreAllMocks());

describe('the path of an answer on a store that claims early', () => {
  it('enters each stage once, in order, and asks the store for the call once, with its claim', async () => {
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(deploy),
      store,
      policy: ({ principal }) => (principal.id === 'alice' ? 'allow' : { deny: 'not on the list' }),
    });
    const id = pendingOf(await coordinator.execute('deploy', { env: 'prod' }))!.id;

    let entered = watchStages();
    log.length = 0;
    await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'mallory' } })).rejects.toThrow(/not on the list/);
    expect(runsOf(entered())).toEqual(['read', 'identify', 'judge']);
    expect(log).toEqual(['claimEarly', 'restoreClaim']);
    expect((await coordinator.get(id))?.status).toBe('pending');
    jest.restoreAllMocks();

    entered = watchStages();
    log.length = 0;
    expect(await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'alice' } })).toEqual({
      output: 'deployed prod',
      isError: false,
    });
    expect(runsOf(entered())).toEqual(ORDER);
    expect(log).toEqual(['claimEarly', 'complete']);
  });
});
