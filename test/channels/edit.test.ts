/**
 * The Edit button of an editable approval (docs/channels.md, "Edit"), with the real Chat SDK and
 * Slack adapter against the Slack stand-in: a signed click on Edit opens a modal of the tool's
 * arguments (its `@Sensitive` card number neither shown nor asked), and the signed submission
 * approves the call with the edited arguments through `answerAs`; a bad value or a refused
 * approver is told in the modal, and nothing changes.
 */
import { createServer } from 'node:http';
import { pendingOf } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { createChannels, type Channels } from 'toolnexus-ts/channels';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { FakeClock } from '../fixtures/fake-clock';
import {
  BOT_TOKEN,
  clickBody,
  SIGNING_SECRET,
  slackHeaders,
  slackStandIn,
  submitBody,
  type SlackStandIn,
} from '../fixtures/channels/slack';
import { CARD_NUMBER, principalOf, refundCoordinator, route } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let store: MemoryStore;
let coordinator: ResumeCoordinator;
let channels: Channels;
let webhook: string;

beforeEach(async () => {
  closers = [];
  const clock = new FakeClock(Date.now());
  slack = await slackStandIn(closers);
  store = new MemoryStore({ clock });
  coordinator = refundCoordinator(store);
  channels = await createChannels({
    host: coordinator,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
    principalOf,
    route,
    clock,
  });
  closers.push(() => channels.close());
  webhook = await listening(createServer(channels.nodeHandler('slack')), closers);
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

async function suspend(tool = 'refund_editable'): Promise<{ id: string; ts: string }> {
  const result = await coordinator.execute(tool, { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return { id, ts: String(slack.of('chat.postMessage').at(-1)?.reply?.ts) };
}

function post(body: string): Promise<Response> {
  return fetch(`${webhook}/slack`, { method: 'POST', headers: slackHeaders(body), body });
}

/** Clicks Edit as `user`, and returns the modal Slack was asked to open (its view), if any. */
async function edit(user: string, id: string, ts: string): Promise<Record<string, unknown> | undefined> {
  const before = slack.of('views.open').length;
  expect((await post(clickBody({ user, channel: 'C0FINANCE', ts, actionId: 'toolnexus.edit', value: id }))).status).toBe(200);
  const opened = slack.of('views.open');
  return opened.length > before ? (opened.at(-1)!.body.view as Record<string, unknown>) : undefined;
}

async function submit(user: string, view: Record<string, unknown>, values: Record<string, string>): Promise<Response> {
  const body = submitBody({
    user,
    viewId: 'V1',
    callbackId: String(view.callback_id),
    privateMetadata: String(view.private_metadata),
    values,
  });
  return post(body);
}

it('offers Edit on an editable approval only; the modal holds its fields with their values, never the @Sensitive card', async () => {
  const plain = await suspend('refund_soon');
  expect(JSON.stringify(slack.of('chat.postMessage').at(-1)!.body.blocks)).not.toContain('toolnexus.edit');
  const { id, ts } = await suspend();
  expect(JSON.stringify(slack.of('chat.postMessage').at(-1)!.body.blocks)).toContain('toolnexus.edit');
  const view = (await edit('U0ANN', id, ts))!;
  expect(view.callback_id).toBe(`toolnexus.edit:${id}`);
  const inputs = (view.blocks as Array<{ block_id?: string; element?: { action_id?: string; initial_value?: string } }>).map((b) => [
    b.element?.action_id,
    b.element?.initial_value,
  ]);
  expect(inputs).toEqual([
    ['customer', 'ACME'],
    ['cents', '25000'],
  ]);
  for (const call of slack.calls) expect(call.raw).not.toContain(CARD_NUMBER);
  // A plain approval's call has no Edit: a forged Edit click on its card opens nothing.
  expect(await edit('U0ANN', plain.id, plain.ts)).toBeUndefined();
  expect(String(slack.of('chat.postEphemeral').at(-1)?.body.text)).toContain('can no longer be edited');
});

it('the submitted modal approves with the edited arguments, the card number kept; the card shows the outcome', async () => {
  const { id, ts } = await suspend();
  const view = (await edit('U0ANN', id, ts))!;
  // Only the amount comes back (a field the submission does not hold keeps its value, as the card number does).
  const response = await submit('U0ANN', view, { cents: '20000' });
  expect(response.status).toBe(200);
  const call = await store.get(id);
  expect(call).toMatchObject({ status: 'resolved', answeredBy: { id: 'finance:ann' }, comment: 'edited in slack' });
  // The model is told the approver changed the arguments, and what ran (redacted).
  expect(call?.outcome?.output).toBe(
    'The approver edited the arguments; the call ran with {"customer":"ACME","cents":20000,"card":"[redacted]"}.\n{"refunded":20000}',
  );
  expect(call?.answer?.args).toEqual({ customer: 'ACME', cents: 20_000, card: CARD_NUMBER });
  expect(JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks)).toContain('Approved by finance:ann');
  expect(JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks)).not.toContain('toolnexus.edit');
  for (const sent of slack.calls) expect(sent.raw).not.toContain(CARD_NUMBER);
});

it('a value that is not its type, one the DTO refuses, or a refused approver is told in the modal, and nothing changes', async () => {
  const { id, ts } = await suspend();
  const view = (await edit('U0ANN', id, ts))!;
  const before = await store.get(id);
  const notNumber = await submit('U0ANN', view, { customer: 'ACME', cents: 'lots' });
  expect(await notNumber.json()).toEqual({ response_action: 'errors', errors: { cents: 'must be a whole number' } });
  const invalid = await submit('U0ANN', view, { customer: 'ACME', cents: '0' });
  const refusedByDto = (await invalid.json()) as { response_action: string; errors: Record<string, string> };
  expect(refusedByDto.response_action).toBe('errors');
  expect(refusedByDto.errors.cents).toMatch(/invalid: .*cents/);
  // The requester may not approve their own request (separation of duties), even by a modal.
  const own = (await (await submit('U0CY', view, { customer: 'ACME', cents: '100' })).json()) as { errors: Record<string, string> };
  expect(own.errors.customer).toMatch(/You may not answer this request/);
  const stranger = (await (await submit('U0STRANGER', view, { customer: 'ACME', cents: '100' })).json()) as {
    errors: Record<string, string>;
  };
  expect(stranger.errors.customer).toMatch(/not mapped/);
  expect(await store.get(id)).toEqual(before);
  // The requester is not even shown the modal.
  expect(await edit('U0CY', id, ts)).toBeUndefined();
  expect(String(slack.of('chat.postEphemeral').at(-1)?.body.text)).toContain('You may not answer this request');
});
