/**
 * What a guardrail refused never reaches a model (issue 45, docs/guardrails.md): a tool result
 * the `toolOutput` guardrail blocked is kept as withheld (which guardrail, no content) in the
 * transcript, the checkpoint, the session's stored thread and the event stream, so the
 * session's next run sends the model no trace of it (a real mock model server on 127.0.0.1,
 * every stored row of a real SQLite file read back). Guardrails have a time limit that blocks
 * (the runner's clock); guide and code agree on `continue`, non-verdicts and stage names.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, success } from 'toolnexus-ts';
import { FunctionModel, OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type GuardrailVerdict, type RunEvent, type ToolOutputSubject } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { FakeClock, until } from '../fixtures/fake-clock';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { sqliteDrivers } from '../fixtures/sqlite-drivers';

const SECRET = 'SECRET-ACCOUNT-9';
let dir: string;
const servers: MockServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-withheld-'));
});
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const wireTool = () =>
  new Toolkit().register(defineTool({ name: 'wire', description: 'Wires money', run: () => success(`wired (${SECRET})`) }));

function noAccounts(subject: ToolOutputSubject): GuardrailVerdict {
  return subject.result.output.includes('SECRET-ACCOUNT')
    ? { action: 'block', message: 'account numbers stay inside' }
    : { action: 'allow' };
}

/** Every row of every table of the SQLite file, as JSON. */
function everyRow(file: string): string {
  const db = (sqliteDrivers()[0] as ReturnType<typeof sqliteDrivers>[number]).open(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    return JSON.stringify(tables.map(({ name }) => db.prepare(`SELECT * FROM "${name}"`).all()));
  } finally {
    db.close();
  }
}

describe('a blocked tool result', () => {
  for (const durability of ['halt', 'step'] as const) {
    it(`is kept as withheld, never its content, and the session’s next run never sends it (durability: ${durability})`, async () => {
      const server = await startMockServer([openaiCalls([{ id: 'call_1', name: 'wire', args: {} }]), openaiText('Anything else?')]);
      servers.push(server);
      const file = join(dir, 'runs.db');
      const store = new SqliteStore({ filename: file });
      try {
        const runner = new AgentRunner({
          model: new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
          toolkit: wireTool(),
          sessions: store,
          durability,
          guardrails: { toolOutput: [noAccounts] },
        });
        const events: RunEvent[] = [];
        for await (const event of runner.stream('Wire 100 to Bob', { session: 'sess-1' })) events.push(event);
        const blocked = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
        expect(blocked.result.status).toBe('blocked');
        expect(blocked.result.stop).toEqual({
          status: 'blocked',
          guardrail: 'noAccounts',
          stage: 'toolOutput',
          message: 'account numbers stay inside',
        });
        expect(blocked.result.messages.at(-1)).toMatchObject({
          role: 'tool',
          isError: true,
          content: 'withheld: the guardrail noAccounts blocked this result (toolOutput)',
        });
        expect(blocked.result.toolCalls[0]?.result.metadata).toEqual({ withheld: { guardrail: 'noAccounts', stage: 'toolOutput' } });
        expect(JSON.stringify(events)).not.toContain(SECRET);

        const next = await runner.run('And now?', { session: 'sess-1' });
        expect(next.status).toBe('done');
        expect(server.requests).toHaveLength(2);
        expect(server.requests[1]?.raw).toContain('withheld: the guardrail noAccounts blocked this result');
        expect(server.requests[1]?.raw).not.toContain(SECRET);
      } finally {
        await store.close();
      }
      expect(everyRow(file)).not.toContain(SECRET);
    });
  }

  it('a result blocked beside another: both blocked results are withheld, and the first block is the stop', async () => {
    const model = new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool')
        ? 'unreachable'
        : {
            toolCalls: [
              { id: 'a', name: 'wire', arguments: {} },
              { id: 'b', name: 'wire', arguments: {} },
            ],
          },
    );
    const runner = new AgentRunner({ model, toolkit: wireTool(), guardrails: { toolOutput: [noAccounts] } });
    const result = await runner.run('Wire twice');
    expect(result.status).toBe('blocked');
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});

describe('the time limit of guardrails', () => {
  it('a guardrail that never settles blocks the run once timeoutMs passes on the runner’s clock (fail closed)', async () => {
    const clock = new FakeClock();
    let modelCalls = 0;
    const runner = new AgentRunner({
      model: new FunctionModel(() => {
        modelCalls++;
        return 'hello';
      }),
      toolkit: new Toolkit(),
      clock,
      guardrails: {
        timeoutMs: 5_000,
        input: [
          function directory(): Promise<GuardrailVerdict> {
            return new Promise(() => undefined);
          },
        ],
      },
    });
    let settled = false;
    const running = runner.run('Hi').finally(() => (settled = true));
    await until(() => clock.timers.some((t) => t.ms === 5_000));
    clock.advance(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    clock.advance(1);
    const result = await running;
    expect(result.status).toBe('blocked');
    expect(result.stop).toEqual({
      status: 'blocked',
      guardrail: 'directory',
      stage: 'input',
      message: 'the guardrail directory timed out after 5000 ms',
    });
    expect(modelCalls).toBe(0);
  });

  it('refuses a time limit that is no positive number', () => {
    expect(
      () => new AgentRunner({ model: new FunctionModel(() => 'x'), toolkit: new Toolkit(), guardrails: { timeoutMs: -1, input: [] } }),
    ).toThrow('guardrails.timeoutMs must be a positive number of milliseconds, got -1');
  });
});

describe('guide and code agree', () => {
  it('a non-verdict blocks with "returned no verdict", a throw with "failed"', async () => {
    const run = (check: () => GuardrailVerdict) =>
      new AgentRunner({ model: new FunctionModel(() => 'x'), toolkit: new Toolkit(), guardrails: { input: [check] } }).run('Hi');
    const none = await run(function vague() {
      return { action: 'maybe' } as unknown as GuardrailVerdict;
    });
    expect(none.stop).toMatchObject({ guardrail: 'vague', message: 'the guardrail vague returned no verdict' });
    const thrown = await run(function broken(): GuardrailVerdict {
      throw new Error('down');
    });
    expect(thrown.stop).toMatchObject({ guardrail: 'broken', message: 'the guardrail broken failed' });
  });

  it('continue on a blocked run resolves with its result and runs nothing, as on any finished run; resume and recover refuse', async () => {
    const store = new SqliteStore({ filename: join(dir, 'blocked.db') });
    let modelCalls = 0;
    try {
      const runner = new AgentRunner({
        model: new FunctionModel(() => {
          modelCalls++;
          return { toolCalls: [{ id: 'c1', name: 'wire', arguments: {} }] };
        }),
        toolkit: wireTool(),
        runs: store,
        durability: 'step',
        guardrails: { toolOutput: [noAccounts] },
      });
      const blocked = await runner.run('Wire', { runId: 'run-blocked' });
      expect(blocked.status).toBe('blocked');
      expect(await runner.continue('run-blocked')).toMatchObject({
        status: 'blocked',
        stop: { guardrail: 'noAccounts', stage: 'toolOutput' },
      });
      await expect(runner.recover('run-blocked', { force: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_RESUME' });
      expect(modelCalls).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('a checkpoint stored with the old stage names is read with the new ones', async () => {
    const store = new SqliteStore({ filename: join(dir, 'old.db') });
    try {
      const runner = new AgentRunner({
        model: new FunctionModel(() => ({ toolCalls: [{ id: 'c1', name: 'wire', arguments: {} }] })),
        toolkit: wireTool(),
        runs: store,
        durability: 'step',
        guardrails: { toolOutput: [noAccounts] },
      });
      const blocked = await runner.run('Wire', { runId: 'run-old' });
      expect(blocked.status).toBe('blocked');
      const stored = (await store.loadRun('run-old'))!;
      const state = stored.state as { stop: { stage: string }; guardrails: { records: Array<{ stage: string }> } };
      // As a checkpoint of an earlier version has it.
      state.stop.stage = 'tool_output';
      for (const record of state.guardrails.records) record.stage = 'tool_output';
      expect(await store.saveRun({ ...stored, version: stored.version + 1, state })).toBe(true);
      const read = await runner.continue('run-old');
      expect(read.stop).toMatchObject({ stage: 'toolOutput' });
      expect(read.guardrails?.map((r) => r.stage)).toEqual(['toolOutput']);
    } finally {
      await store.close();
    }
  });
});
