/**
 * The same approval card as Microsoft Teams and Google Chat get it (docs/channels.md): built
 * once with the `chat` SDK's card model, rendered by each adapter's own converter, the one its
 * `postMessage` and `editMessage` send (an Adaptive Card; a Card v2). Pinned as snapshots.
 */
import { approvalCard, cardViewOf, type CardBuilders, type CardElement } from 'toolnexus-ts/channels';
import type { SuspendedCall } from 'toolnexus-ts/suspension';

import { loadChannelPeer as load } from '../../src/channels/peer';

const CALL: SuspendedCall = {
  request: {
    id: 'pnd-00000000-0000-4000-8000-000000000001',
    kind: 'approval',
    prompt: 'Refund 25000 cents to ACME?',
    expiresAt: '2030-01-02T09:00:00.000Z',
    data: { quorum: { of: 2, from: ['finance:ann', 'finance:ben', 'finance:cy'] } },
  },
  tool: 'refund',
  args: { customer: 'ACME', cents: 25000, card: '[redacted]' },
  status: 'pending',
  createdAt: '2030-01-01T09:00:00.000Z',
  requestedBy: { id: 'finance:cy' },
  signatures: [{ by: { id: 'finance:ann' }, at: '2030-01-01T09:01:00.000Z' }],
};
const NOW = Date.parse('2030-01-01T09:02:00.000Z');

let chat: CardBuilders;
let teams: { cardToAdaptiveCard(card: CardElement): unknown };
let gchat: { cardToGoogleCard(card: CardElement, options: { cardId: string }): unknown };

beforeAll(async () => {
  chat = await load<CardBuilders>('chat');
  teams = await load('@chat-adapter/teams');
  gchat = await load('@chat-adapter/gchat');
});

it('is an Adaptive Card for Teams: the call, who asked, "1 of 2 (finance)", the deadline, Approve and Decline', () => {
  const { card } = approvalCard(chat, cardViewOf(CALL, NOW));
  const adaptive = teams.cardToAdaptiveCard(card);
  const json = JSON.stringify(adaptive);
  for (const shown of ['Refund 25000 cents to ACME?', 'finance:cy', '1 of 2 (finance)', '2030-01-02T09:00:00.000Z', 'toolnexus.approve']) {
    expect(json).toContain(shown);
  }
  expect(json).toContain(CALL.request.id);
  expect(adaptive).toMatchSnapshot();
});

it('is a Card v2 for Google Chat, with the same content', () => {
  const { card } = approvalCard(chat, cardViewOf(CALL, NOW));
  const google = gchat.cardToGoogleCard(card, { cardId: 'card-1' });
  const json = JSON.stringify(google);
  for (const shown of ['Refund 25000 cents to ACME?', 'finance:cy', '1 of 2 (finance)', 'toolnexus.approve', 'toolnexus.decline']) {
    expect(json).toContain(shown);
  }
  expect(google).toMatchSnapshot();
});

it('once settled, shows the outcome and no buttons on either platform', () => {
  const settled: SuspendedCall = {
    ...CALL,
    status: 'resolved',
    signatures: [...(CALL.signatures ?? []), { by: { id: 'finance:ben' }, at: '2030-01-01T09:03:00.000Z' }],
    answeredBy: { id: 'finance:ben' },
  };
  const { card, fallbackText } = approvalCard(chat, cardViewOf(settled, NOW));
  expect(fallbackText).toBe('Approved by both finance:ann and finance:ben');
  for (const json of [JSON.stringify(teams.cardToAdaptiveCard(card)), JSON.stringify(gchat.cardToGoogleCard(card, { cardId: 'c' }))]) {
    expect(json).toContain('2 of 2 (finance)');
    expect(json).not.toContain('toolnexus.approve');
  }
});

it('a pending call past its deadline shows expired, with no buttons', () => {
  const { fallbackText, card } = approvalCard(chat, cardViewOf(CALL, Date.parse('2030-01-03T00:00:00.000Z')));
  expect(fallbackText).toContain('Expired');
  expect(JSON.stringify(card)).not.toContain('toolnexus.approve');
});
