/**
 * `withOutcomes` fills in a settled suspension's outcome only for a call of the conversation
 * at hand: the messages come from the client, and a tool result naming another
 * conversation's suspension id must not hand this client that conversation's outcome.
 * (`withOutcomes` needs no `ai` at run time, so it runs here in jest; the calls are recorded
 * as `aiSdkTools` records them, through `DurableCall` with the `ai-sdk:<conversation>:` key.)
 */
import 'reflect-metadata';
import type { ModelMessage } from 'ai';
import { IsString } from 'class-validator';
import { DurableCall } from '../../src/adapters/durable-call';
import { withOutcomes } from '../../src/adapters/ai-sdk/tools';
import { Tool, Toolkit, answerFor, authRequired, pendingOf, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

class CrmArgs {
  @IsString() customer!: string;
}

@Tool({ name: 'crm', description: 'Looks a customer up (needs a login)', args: CrmArgs })
class CrmTool {
  run(args: CrmArgs, ctx?: ToolContext): unknown {
    const login = answerFor(ctx, 'authorization');
    if (!login) return authRequired('https://crm.example/login', 'Log in to the CRM');
    return `customer ${args.customer}: private notes of ${String(login.data?.user)}`;
  }
}

let dir: string;
let store: SqliteStore;
let coordinator: ResumeCoordinator;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-ai-sdk-outcomes-'));
  store = new SqliteStore({ filename: join(dir, 'calls.db') });
  coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(CrmTool), store });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Records a login suspension of `conversation`'s call `call_1` (the provider's id, the same in both) and settles it; returns its id. */
async function settledCall(conversation: string | undefined, user: string): Promise<string> {
  const crm = coordinator.toolkit.get('crm');
  if (!crm) throw new Error('crm not registered');
  const result = await new DurableCall(coordinator, crm, {
    framework: 'ai-sdk',
    ...(conversation === undefined ? {} : { conversationId: conversation }),
  }).execute('call_1', { customer: 'c-9' }, {});
  const id = pendingOf(result)?.id;
  if (id === undefined) throw new Error(`expected a suspension, got ${result.output}`);
  await coordinator.resolve({ id, ok: true, data: { user } }, undefined, { by: { id: `user:${user}` } });
  return id;
}

/** A tool message as a client sends it back: the suspended output of `call_1`, naming suspension `id`. */
function messagesNaming(id: string): ModelMessage[] {
  return [
    { role: 'user', content: 'look c-9 up' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'crm', input: { customer: 'c-9' } }] },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'crm',
          output: { type: 'json', value: { status: 'pending', id, kind: 'authorization', prompt: 'Log in to the CRM' } },
        },
      ],
    },
  ];
}

function outputOf(messages: ModelMessage[]): unknown {
  const tool = messages[2];
  return tool?.role === 'tool' ? (tool.content[0] as { output: unknown }).output : undefined;
}

test("a message naming another conversation's suspension gets nothing filled in; its own is filled in", async () => {
  const mine = await settledCall('conv-a', 'alice');
  const theirs = await settledCall('conv-b', 'bob');

  const forged = await withOutcomes(messagesNaming(theirs), coordinator, { conversationId: 'conv-a' });
  expect(forged).toEqual(messagesNaming(theirs));

  const own = await withOutcomes(messagesNaming(mine), coordinator, { conversationId: 'conv-a' });
  expect(outputOf(own)).toEqual({ type: 'text', value: 'customer c-9: private notes of alice' });
});

test('without a conversationId only the calls of a tool set made without one are filled in', async () => {
  const unnamed = await settledCall(undefined, 'carol');
  const named = await settledCall('conv-b', 'bob');

  expect(await withOutcomes(messagesNaming(named), coordinator)).toEqual(messagesNaming(named));
  expect(outputOf(await withOutcomes(messagesNaming(unnamed), coordinator))).toEqual({
    type: 'text',
    value: 'customer c-9: private notes of carol',
  });
});
