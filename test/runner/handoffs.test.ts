/**
 * Handoffs: triage hands the conversation to billing (its own instructions, model and
 * tools), billing halts on an approval, the answer given through triage's runner resumes
 * the run in billing, and billing hands it back to triage, which answers. The transcript
 * records both handoffs; every request went to the agent holding the conversation.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { InvalidArgumentError, Tool, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, answerAs, type RunResult } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

class RefundArgs {
  @IsString() order!: string;
}

let refunds = 0;
@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: true })
class RefundTool {
  run(args: RefundArgs) {
    refunds++;
    return success({ refunded: args.order });
  }
}

const model: Reply = (res, req, index) => {
  const messages = req.body.messages as Array<{ role: string; content: string | null; name?: string }>;
  const agent = String(messages[0]?.content);
  const last = messages.at(-1);
  if (agent === 'triage') {
    if (last?.role === 'user') return openaiCalls([{ id: 'call_h1', name: 'transfer_to_billing', args: {} }])(res, req, index);
    return openaiText(`triage: all set after ${messages.filter((m) => m.role === 'tool').length} tool results`)(res, req, index);
  }
  if (last?.content === 'Transferred to billing.')
    return openaiCalls([{ id: 'call_r1', name: 'refund', args: { order: 'o-7' } }])(res, req, index);
  return openaiCalls([{ id: 'call_h2', name: 'transfer_to_triage', args: {} }])(res, req, index);
};

let dir: string;
let server: MockServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-handoffs-'));
  server = await startMockServer(model);
  refunds = 0;
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function agents(store: SqliteStore) {
  const chat = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } });
  const agent = (name: string, toolkit: Toolkit) =>
    new AgentRunner({ name, model: chat, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }), systemPrompt: name });
  const triage = agent('triage', new Toolkit());
  const billing = agent('billing', new Toolkit().register(new RefundTool()));
  triage.handoffTo(billing, { description: 'Billing questions and refunds' });
  billing.handoffTo(triage);
  return { triage, billing };
}

it('hands the conversation to billing and back; a halt in billing resumes in billing', async () => {
  const store = new SqliteStore({ filename: join(dir, 'runs.db') });
  try {
    const { triage } = agents(store);
    const halted = await triage.run('Refund order 7', { runId: 'handoff-1' });
    expect(halted.status).toBe('halted');
    expect(halted.pending?.kind).toBe('approval');
    expect((await store.loadRun('handoff-1'))?.state).toMatchObject({ phase: 'halted', agent: 'billing' });

    // A fresh set of runners (as another process would build them), answered through triage's.
    const again = agents(store);
    const answered = await answerAs(again.triage, { id: halted.pending?.id as string, ok: true }, { by: { id: 'ops' } });
    const final = answered.run?.result as RunResult;
    expect(final.status).toBe('done');
    expect(final.text).toBe('triage: all set after 3 tool results');
    expect(refunds).toBe(1);
    expect(final.messages.map((m) => (m.role === 'tool' ? `tool:${m.name}` : m.role))).toEqual([
      'user',
      'assistant',
      'tool:transfer_to_billing',
      'assistant',
      'tool:refund',
      'assistant',
      'tool:transfer_to_triage',
      'assistant',
    ]);
    // Each request went to the agent holding the conversation, with that agent's tools.
    const asked = server.requests.map((r) => {
      const body = r.body as { messages: Array<{ content: string }>; tools?: Array<{ function: { name: string } }> };
      return `${body.messages[0]?.content}:${(body.tools ?? []).map((t) => t.function.name).join(',')}`;
    });
    expect(asked).toEqual([
      'triage:transfer_to_billing',
      'billing:refund,transfer_to_triage',
      'billing:refund,transfer_to_triage',
      'triage:transfer_to_billing',
    ]);
    expect((await store.loadRun('handoff-1'))?.state).toMatchObject({ phase: 'done', agent: 'triage' });
  } finally {
    await store.close();
  }
});

it('refuses handoffs between agents without names', () => {
  const toolkit = new Toolkit();
  const chat = new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'mock' });
  const anonymous = new AgentRunner({ model: chat, toolkit });
  const named = new AgentRunner({ name: 'b', model: chat, toolkit: new Toolkit() });
  expect(() => anonymous.handoffTo(named)).toThrow(InvalidArgumentError);
  expect(() => new AgentRunner({ name: '', model: chat, toolkit })).toThrow(InvalidArgumentError);
});
