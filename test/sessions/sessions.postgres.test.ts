/**
 * Sessions on PostgreSQL: two replicas (two runners, two pools) alternate the requests of
 * one conversation, one refund halting on one and answered on the other; the transcript is
 * intact and balanced. And the in-place upgrade of layout version 3 tables to 4 (sessions).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from 'toolnexus-ts/models';
import { answerAs } from 'toolnexus-ts/agents';
import { POSTGRES_STORE_SCHEMA_VERSION, PostgresStore } from 'toolnexus-ts/postgres';
import { buildChatAgent, chatModel, readLedger, type ChatAgent } from '../fixtures/chat/agent';
import { dropSchema, postgresUrl, sql, uniqueSchema } from '../fixtures/pg/server';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const schema = uniqueSchema('sessions');
let url: string;
let dir: string;
let server: MockServer;
beforeAll(async () => {
  url = await postgresUrl();
});
afterAll(async () => {
  await dropSchema(url, schema);
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sessions-pg-'));
  server = await startMockServer(chatModel);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every tool call has its result right after its turn; every user message is answered. */
function expectBalanced(messages: readonly ChatMessage[]): void {
  let open: string[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      expect(open).toContain(message.callId);
      open = open.filter((id) => id !== message.callId);
    } else {
      expect(open).toEqual([]);
      if (message.role === 'assistant') open = (message.toolCalls ?? []).map((call) => call.id);
    }
  }
  expect(open).toEqual([]);
}

it('two replicas alternate the requests of one conversation: transcript intact and balanced, the refund ran once', async () => {
  const ledger = join(dir, 'ledger');
  const replicas: ChatAgent[] = [0, 1].map(() => buildChatAgent({ postgres: url, schema }, ledger, server.url));
  const [a, b] = replicas as [ChatAgent, ChatAgent];
  try {
    await a.runner.run('hello', { session: 'conv-pg' });
    await b.runner.run('lookup o-1', { session: 'conv-pg' });
    const halted = await a.runner.run('refund o-2 900', { session: 'conv-pg' });
    expect(halted.status).toBe('halted');
    const answered = await answerAs(b.runner, { id: halted.pending!.id, ok: true }, { by: { id: 'agent-b' } });
    expect(answered.run?.result?.status).toBe('done');
    await a.runner.run('bye', { session: 'conv-pg' });
    const thread = (await b.runner.sessions!.loadSession('conv-pg'))!.messages;
    expect(thread.map((m) => m.role).join(' ')).toBe(
      'user assistant user assistant tool assistant user assistant tool assistant user assistant',
    );
    expect(thread.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hello', 'lookup o-1', 'refund o-2 900', 'bye']);
    expectBalanced(thread);
    expect(readLedger(ledger)).toHaveLength(1);
    expect((await a.runner.sessions!.listSessions()).find((s) => s.id === 'conv-pg')).toMatchObject({ messageCount: 12 });
  } finally {
    await Promise.all(replicas.map((r) => r.store.close()));
  }
});

it('upgrades layout version 3 tables in place to version 4: suspensions and runs kept, sessions added', async () => {
  const t = (name: string) => `"${schema}".v3_${name}`;
  await sql(url, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  // Layout version 3 as released (steps 1 to 3 folded).
  await sql(
    url,
    `CREATE TABLE ${t('schema_version')} (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version integer NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())`,
  );
  await sql(
    url,
    `CREATE TABLE ${t('suspensions')} (
     id text PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY, tool text NOT NULL, kind text NOT NULL,
     status text NOT NULL CHECK (status IN ('pending', 'resolving', 'resolved', 'declined', 'expired', 'cancelled')),
     request json NOT NULL, args json, answer json, outcome json, call_id text, run_id text, created_at text NOT NULL,
     updated_at text, lease_until_ms bigint, fence integer CHECK (fence >= 1), chain json, next_id text, binding text,
     answered_by json, answered_at text, comment text)`,
  );
  await sql(
    url,
    `CREATE TABLE ${t('runs')} (run_id text PRIMARY KEY, version integer NOT NULL CHECK (version >= 1), state json NOT NULL, updated_at text NOT NULL)`,
  );
  await sql(url, `INSERT INTO ${t('schema_version')} (singleton, version) VALUES (true, 3)`);
  await sql(
    url,
    `INSERT INTO ${t('suspensions')} (id, tool, kind, status, request, args, created_at) VALUES ('pnd-3', 'refund', 'approval', 'pending', '{"id":"pnd-3","kind":"approval","prompt":"ok?"}', '{}', '2030-01-01T00:00:00.000Z')`,
  );
  await sql(url, `INSERT INTO ${t('runs')} VALUES ('run-3', 1, '{"x":1}', '2030-01-01T00:00:00.000Z')`);

  const strict = new PostgresStore({ connectionString: url, schema, tablePrefix: 'v3_', autoMigrate: false });
  await expect(strict.get('pnd-3')).rejects.toThrow(/at layout version 3, this library needs 4/);
  await strict.close();
  const store = new PostgresStore({ connectionString: url, schema, tablePrefix: 'v3_' });
  try {
    expect((await store.get('pnd-3'))?.status).toBe('pending');
    expect((await store.loadRun('run-3'))?.state).toEqual({ x: 1 });
    const at = '2030-01-01T00:00:00.000Z';
    expect(
      await store.saveSession({ id: 's-1', version: 1, messages: [{ role: 'user', content: 'hi' }], createdAt: at, updatedAt: at }),
    ).toBe(true);
    expect(await store.saveSession({ id: 's-1', version: 1, messages: [], createdAt: at, updatedAt: at })).toBe(false);
    expect((await store.loadSession('s-1'))?.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(await sql(url, `SELECT version FROM ${t('schema_version')}`)).toEqual([{ version: POSTGRES_STORE_SCHEMA_VERSION }]);
    expect(POSTGRES_STORE_SCHEMA_VERSION).toBe(4);
  } finally {
    await store.close();
  }
});
