/**
 * The webhooks entry, `toolnexus-ts/webhooks`: `Webhooks` posts each suspension and
 * settlement to your endpoints, signed; `verifyWebhook` checks a delivery on the receiving
 * side and `signWebhook` makes the signature (docs/operating.md, "Webhooks").
 */
export { Webhooks } from './webhooks';
export type { WebhooksOptions, WebhookDelivery, WebhookFailure } from './webhooks';
export {
  signWebhook,
  verifyWebhook,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
} from './signature';
export type { WebhookVerification } from './signature';
export type {
  WebhookEvent,
  WebhookGrant,
  WebhookGrantEvent,
  WebhookGrantPayload,
  WebhookPayload,
  WebhookSuspension,
  WebhookSuspensionEvent,
} from './payload';
