/**
 * Approve with edited arguments (docs/who-may-answer.md, "Edit"): where the request allows it
 * (`approval: { editable: true }`), an approval may carry `args`. They are validated by the
 * tool's DTO first: an edit outside `@Max` is refused and nothing is stored. A valid edit runs
 * once with the edited value; the stored call keeps both versions (sensitive fields masked
 * when shown); the model is told which arguments ran. Through resolve and the inbox's JSON API.
 */
import 'reflect-metadata';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sensitive, Tool, Toolkit, pendingOf, success } from 'toolnexus-ts';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { ResumeCoordinator, redactCall } from 'toolnexus-ts/suspension';

class RefundArgs {
  @IsString()
  order!: string;
  @IsInt()
  @Min(1)
  @Max(10_000)
  cents!: number;
  @IsString()
  @Sensitive()
  iban!: string;
}

const ran: RefundArgs[] = [];

@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: { prompt: 'Refund?', editable: true } })
class RefundTool {
  run(args: RefundArgs) {
    ran.push({ ...args });
    return success({ refunded: args.cents });
  }
}

@Tool({ name: 'fixed', description: 'Cannot be edited', args: RefundArgs, approval: true })
class FixedTool {
  run() {
    return 'ran';
  }
}

beforeEach(() => {
  ran.length = 0;
});

const IBAN = 'DE89370400440532013000';
const NEW_IBAN = 'GB33BUKB20201555555555';

it('refuses an edit outside the DTO and changes nothing; runs a valid edit once, keeps both versions, tells the model', async () => {
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(RefundTool, FixedTool) });
  const asked = pendingOf(await coordinator.execute('refund', { order: 'o-1', cents: 2500, iban: IBAN }))!;
  expect(asked.data?.editable).toBe(true);
  const before = await coordinator.get(asked.id);

  await expect(
    coordinator.resolve({ id: asked.id, ok: true, args: { order: 'o-1', cents: 999_999, iban: IBAN } }, undefined, { by: { id: 'ann' } }),
  ).rejects.toThrow(expect.objectContaining({ code: 'TOOLNEXUS_INVALID_ANSWER' }) as Error);
  await expect(
    coordinator.resolve({ id: asked.id, ok: true, args: { order: 'o-1', cents: 999_999, iban: IBAN } }, undefined, { by: { id: 'ann' } }),
  ).rejects.toThrow('cents must not be greater than 10000');
  expect(await coordinator.get(asked.id)).toEqual(before);
  expect(ran).toEqual([]);

  const result = await coordinator.resolve({ id: asked.id, ok: true, args: { order: 'o-1', cents: 2000, iban: NEW_IBAN } }, undefined, {
    by: { id: 'ann' },
  });
  expect(ran).toEqual([{ order: 'o-1', cents: 2000, iban: NEW_IBAN }]);
  expect(result.output).toBe(
    'The approver edited the arguments; the call ran with {"order":"o-1","cents":2000,"iban":"[redacted]"}.\n{"refunded":2000}',
  );
  expect(result.output).not.toContain(NEW_IBAN);
  const stored = (await coordinator.get(asked.id))!;
  expect(stored.args).toEqual({ order: 'o-1', cents: 2500, iban: IBAN });
  expect(stored.answer?.args).toEqual({ order: 'o-1', cents: 2000, iban: NEW_IBAN });
  const shown = redactCall(coordinator.toolkit, stored);
  expect(shown.args).toEqual({ order: 'o-1', cents: 2500, iban: '[redacted]' });
  expect(shown.answer?.args).toEqual({ order: 'o-1', cents: 2000, iban: '[redacted]' });
  expect(JSON.stringify(shown)).not.toContain(NEW_IBAN);

  const fixed = pendingOf(await coordinator.execute('fixed', { order: 'o-2', cents: 5, iban: IBAN }))!;
  await expect(
    coordinator.resolve({ id: fixed.id, ok: true, args: { order: 'o-2', cents: 6, iban: IBAN } }, undefined, { by: { id: 'ann' } }),
  ).rejects.toThrow(`${fixed.id} does not allow edited arguments`);
  await expect(coordinator.resolve({ id: fixed.id, ok: false, args: { order: 'x' } })).rejects.toThrow(
    'args (edited arguments) come only with an approval',
  );
});

it('through the inbox: a bad edit is 400 and nothing is stored; a good one runs with the edit', async () => {
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(RefundTool) });
  const inbox = createInbox({ coordinator, authorize: bearerTokens([{ token: 'ann-token-0123456789abcdef', principal: { id: 'ann' } }]) });
  const server: Server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const answer = (id: string, body: unknown) =>
    fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
      method: 'POST',
      headers: { authorization: 'Bearer ann-token-0123456789abcdef', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  try {
    const asked = pendingOf(await coordinator.execute('refund', { order: 'o-3', cents: 700, iban: IBAN }))!;
    const bad = await answer(asked.id, { ok: true, args: { order: 'o-3', cents: 0, iban: IBAN } });
    expect(bad.status).toBe(400);
    expect((await coordinator.get(asked.id))?.status).toBe('pending');
    const good = await answer(asked.id, { ok: true, args: { order: 'o-3', cents: 650, iban: IBAN } });
    expect(good.status).toBe(200);
    expect(ran).toEqual([{ order: 'o-3', cents: 650, iban: IBAN }]);
    const view = ((await good.json()) as { suspension: { args: unknown; outcome: { output: string } } }).suspension;
    expect(view.args).toEqual({ order: 'o-3', cents: 700, iban: '[redacted]' });
    expect(view.outcome.output).toContain('"cents":650');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    inbox.close();
  }
});
