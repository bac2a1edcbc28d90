/**
 * The approval request an adapter hands its framework's approval UI (the AI SDK's
 * `tool-approval-request` reason): the declared prompt, recorded once per call id, with
 * `@Sensitive()` values redacted the way every other shown copy redacts them.
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { DurableCall } from '../../src/adapters/durable-call';
import { Sensitive, Tool, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';

class TransferArgs {
  @IsString() @Sensitive() iban!: string;
  @IsInt() @Min(1) cents!: number;
}

@Tool({
  name: 'transfer',
  description: 'Transfers money',
  args: TransferArgs,
  approval: { prompt: (a: TransferArgs) => `Transfer ${a.cents} cents to ${a.iban}?` },
})
class TransferTool {
  run(): string {
    return 'sent';
  }
}

function setup() {
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(TransferTool), store });
  const tool = coordinator.toolkit.get('transfer');
  if (!tool) throw new Error('transfer is not registered');
  return { store, call: new DurableCall(coordinator, tool, { framework: 'test' }) };
}

test('the approval request is recorded once per call id and shown with its sensitive values redacted', async () => {
  const { store, call } = setup();
  const args = { iban: 'DE89370400440532013000', cents: 500 };
  const first = await call.approvalRequest('c1', args, undefined);
  expect(first).toMatchObject({ kind: 'approval', prompt: 'Transfer 500 cents to [redacted]?' });
  // Asked again for the same call (a framework re-checking an approved call): the recorded request, nothing new.
  const again = await call.approvalRequest('c1', args, undefined);
  expect(again).toEqual(first);
  const stored = await store.list({});
  expect(stored).toHaveLength(1);
  expect(stored[0]?.request.prompt).toBe('Transfer 500 cents to DE89370400440532013000?');
  expect(await call.needsApproval('c1', args, undefined)).toBe(true);
});

test('invalid arguments need no approval: the execution reports them, nothing is recorded', async () => {
  const { store, call } = setup();
  expect(await call.approvalRequest('c2', { iban: 'x', cents: 0 }, undefined)).toBeUndefined();
  expect(await store.list({})).toEqual([]);
});

test('with an answer policy, the principal a call was made for may not approve it through the adapter; another may (docs/who-may-answer.md)', async () => {
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(TransferTool),
    store,
    policy: rulesPolicy([{ principals: '*' }]),
  });
  const tool = coordinator.toolkit.get('transfer');
  if (!tool) throw new Error('transfer is not registered');
  const rita = { id: 'user:rita' };
  const own = new DurableCall(coordinator, tool, { framework: 'ai-sdk', approvedBy: rita, principal: rita });
  const args = { iban: 'DE89370400440532013000', cents: 500 };
  await own.approvalRequest('c9', args, undefined);
  const [asked] = await store.list({});
  expect(asked?.requestedBy).toEqual(rita);
  const refused = await own.execute('c9', args, {});
  expect(refused).toMatchObject({ isError: true });
  expect(refused.output).toContain('separation of duties');
  expect((await store.get(asked?.request.id as string))?.status).toBe('pending');
  const manager = new DurableCall(coordinator, tool, { framework: 'ai-sdk', approvedBy: { id: 'manager:ann' }, principal: rita });
  expect(await manager.execute('c9', args, {})).toEqual({ output: 'sent', isError: false });
});

test('a request an automatic answer approves when it is recorded needs no approval: the call ran once, execute returns its outcome', async () => {
  let runs = 0;
  @Tool({ name: 'transfer', description: 'Transfers money', args: TransferArgs, approval: true })
  class CountedTransfer {
    run(): string {
      runs++;
      return 'sent';
    }
  }
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(CountedTransfer),
    store,
    automaticAnswers: { name: 'small', decide: () => 'approved' },
  });
  const tool = coordinator.toolkit.get('transfer');
  if (!tool) throw new Error('transfer is not registered');
  const call = new DurableCall(coordinator, tool, { framework: 'ai-sdk' });
  const args = { iban: 'DE89370400440532013000', cents: 5 };
  expect(await call.needsApproval('c3', args, undefined)).toBe(false);
  // Asked again (the framework re-checks): still no.
  expect(await call.approvalRequest('c3', args, undefined)).toBeUndefined();
  expect(await call.execute('c3', args, {})).toEqual({ output: 'sent', isError: false });
  expect(runs).toBe(1);
  expect(await store.list({})).toEqual([expect.objectContaining({ status: 'resolved', answeredBy: { id: 'policy:small' } })]);
});

test('"always approve" needs a conversation to scope the grant to and a principal to give it; a call not pending gets none', async () => {
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(TransferTool), store });
  const tool = coordinator.toolkit.get('transfer');
  if (!tool) throw new Error('transfer is not registered');
  const ann = { id: 'manager:ann' };
  const args = { iban: 'DE89370400440532013000', cents: 500 };
  const unnamed = new DurableCall(coordinator, tool, { framework: 'ai-sdk', approvedBy: ann });
  await unnamed.approvalRequest('c4', args, undefined);
  // Without a conversation every unnamed conversation would share the grant.
  await expect(unnamed.alwaysApprove('c4')).rejects.toThrow(/needs a conversationId/);
  const nobody = new DurableCall(coordinator, tool, { framework: 'ai-sdk', conversationId: 'k' });
  await nobody.approvalRequest('c5', args, undefined);
  await expect(nobody.alwaysApprove('c5')).rejects.toThrow(/needs approvedBy/);
  const named = new DurableCall(coordinator, tool, { framework: 'ai-sdk', conversationId: 'k', approvedBy: ann });
  expect(await named.alwaysApprove('c-never-asked')).toBeUndefined();
  expect(await coordinator.grants()).toEqual([]);
  expect(await named.alwaysApprove('c5')).toMatchObject({ by: ann, tool: 'transfer', scope: 'session', subject: 'ai-sdk:k' });
});
