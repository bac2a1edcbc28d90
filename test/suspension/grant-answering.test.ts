/**
 * A grant given in answer to a request (`grant(init, { answering })`, what the adapters'
 * "always approve" makes): judged at once as the granter's approval of that request, so
 * whoever may not approve it may not grant it (docs/who-may-answer.md, "Grants").
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { InvalidArgumentError, Tool, Toolkit, pendingOf, success } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { AnswerRefusedError, ResumeCoordinator, UnknownSuspensionError, rulesPolicy, type AnswerRefusal } from 'toolnexus-ts/suspension';

class OrderArgs {
  @IsString() order!: string;
}

@Tool({ name: 'refund', description: 'Refunds an order', args: OrderArgs, approval: true })
class RefundTool {
  run(args: OrderArgs) {
    return success(`refunded ${args.order}`);
  }
}

@Tool({ name: 'wire', description: 'Wires money', args: OrderArgs, approval: true })
class WireTool {
  run(args: OrderArgs) {
    return success(`wired ${args.order}`);
  }
}

const RITA = { id: 'customer:rita' };
const ANN = { id: 'manager:ann' };
const CARL = { id: 'clerk:carl' };

async function asked() {
  const refusals: AnswerRefusal[] = [];
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(RefundTool, WireTool),
    store: new MemoryStore(),
    policy: rulesPolicy([{ principals: [RITA.id, ANN.id] }]),
    observers: [{ onRefused: (_call, refusal) => refusals.push(refusal) }],
  });
  const result = await coordinator.execute('refund', { order: 'o-1' }, undefined, { runId: 'r1', callId: 'c1', principal: RITA });
  const id = pendingOf(result)?.id ?? '';
  const grant = { tool: 'refund', scope: 'principal' as const, subject: RITA.id };
  return { coordinator, id, grant, refusals };
}

it('records the grant of a principal who may approve the request it answers', async () => {
  const { coordinator, id, grant } = await asked();
  const given = await coordinator.grant({ ...grant, by: ANN }, { answering: id });
  expect(given).toMatchObject({ by: ANN, tool: 'refund' });
  expect(await coordinator.grants()).toEqual([given]);
  // The request answered is still the framework's to approve: the grant alone settles nothing now.
  expect((await coordinator.get(id))?.status).toBe('pending');
});

it('refuses, with the typed error and nothing stored, whom the policy refuses and the requester', async () => {
  const { coordinator, id, grant, refusals } = await asked();
  for (const by of [CARL, RITA]) {
    const refused = await coordinator.grant({ ...grant, by }, { answering: id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AnswerRefusedError);
    expect(refused).toMatchObject({ code: 'TOOLNEXUS_ANSWER_REFUSED', principalId: by.id });
  }
  expect(refusals.map((r) => r.by?.id)).toEqual([CARL.id, RITA.id]);
  expect(refusals[1]?.reason).toContain('separation of duties');
  expect(await coordinator.grants()).toEqual([]);
  expect((await coordinator.get(id))?.status).toBe('pending');
});

it('refuses a grant of another tool than the one that asked, of a settled request, or of an unknown one', async () => {
  const { coordinator, id, grant } = await asked();
  await expect(coordinator.grant({ ...grant, tool: 'wire', by: ANN }, { answering: id })).rejects.toThrow(InvalidArgumentError);
  await expect(coordinator.grant({ ...grant, by: ANN }, { answering: 'nope' })).rejects.toThrow(UnknownSuspensionError);
  await coordinator.resolve({ id, ok: true }, undefined, { by: ANN });
  await expect(coordinator.grant({ ...grant, by: ANN }, { answering: id })).rejects.toThrow(/no longer pending/);
  expect(await coordinator.grants()).toEqual([]);
});
