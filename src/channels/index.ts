/**
 * The channels entry, `toolnexus-ts/channels`: open approval requests delivered where people
 * work (Slack, Microsoft Teams, Google Chat) on Vercel's Chat SDK, answered there through the
 * same answer policy as every door (docs/channels.md). Loads its optional peers (`chat`, the
 * `@chat-adapter/*` packages) only when {@link createChannels} is called.
 */
export { Channels, createChannels } from './channels';
export type { ChannelsOptions, DeliveryReport, Platform, PlatformOptions, RouteAnswerers } from './channels';
export type { PlatformUser } from './clicks';
export type { EmailOptions, MailMessage, MailTransport } from './email';
export type { EscalationRoute } from './escalation';
export type { DeliveryEvent, DeliveryRetry } from './outbox';
export { APPROVE_ACTION, DECLINE_ACTION, EDIT_ACTION, approvalCard } from './card';
export type { CardBuilders, CardElement } from './card';
export { cardViewOf } from './view';
export type { CardView, CardState } from './view';
export type { Delivery, DeliveryFilter, DeliveryStore } from '../deliveries/store';
export { MemoryDeliveries } from '../deliveries/memory';
