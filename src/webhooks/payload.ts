import type { SuspendedCall, SuspensionStatus } from '../suspension/store';
import type { Principal } from '../suspension/audit';
import type { AnswerRefusal } from '../suspension/authority';
import type { Signature } from '../results/wire';
import type { Grant, GrantScope } from '../suspension/grants';

/** The events a webhook is sent for about one suspension. */
export type WebhookSuspensionEvent =
  'suspension.pending' | 'suspension.settled' | 'suspension.signed' | 'suspension.escalated' | 'suspension.expired' | 'suspension.refused';

/** The events a webhook is sent for about a standing grant (docs/who-may-answer.md, "Grants"). */
export type WebhookGrantEvent = 'grant.given' | 'grant.revoked';

/** The events a webhook is sent for. */
export type WebhookEvent = WebhookSuspensionEvent | WebhookGrantEvent;

/** The suspension as a webhook carries it: what a person needs to decide, with sensitive arguments redacted. */
export interface WebhookSuspension {
  id: string;
  kind: string;
  prompt: string;
  tool: string;
  /** The arguments after `toolkit.redact`: `@Sensitive` fields read `"[redacted]"`. Too large ones are replaced by a note. */
  args: unknown;
  status: SuspensionStatus;
  runId?: string;
  callId?: string;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339, when the request has a deadline. */
  expiresAt?: string;
  /** Where a person answers it: the inbox link, when the Webhooks were given `inboxUrl`. */
  url?: string;
  /** Settled only: the outcome (its output cut to 2000 characters, metadata left out). */
  outcome?: { isError: boolean; output: string };
  answeredBy?: Principal;
  answeredAt?: string;
  comment?: string;
  /** Settled only, when the replay asked something new: the next suspension's id. */
  next?: string;
  /** A quorum request's approvals so far (`suspension.signed`, and after). */
  signatures?: Signature[];
  /** `suspension.refused` only: who was refused what, and why (docs/who-may-answer.md). */
  refusal?: AnswerRefusal;
}

/** A standing grant as a webhook carries it: what it covers and until when; nothing else is kept on a grant. */
export interface WebhookGrant {
  id: string;
  tool: string;
  scope: GrantScope;
  /** The run id, session id or principal id the scope names. */
  subject: string;
  /** Who granted it. */
  by: Principal;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339: when it lapses; absent, until revoked. */
  until?: string;
  /** RFC 3339, `grant.revoked` only: when it was revoked (the store's clock). */
  revokedAt?: string;
}

/** The JSON body of a delivery about a standing grant (`grant.given`, `grant.revoked`). */
export interface WebhookGrantPayload {
  /** The delivery id (also the `x-toolnexus-delivery` header), the same on every retry. */
  id: string;
  type: WebhookGrantEvent;
  /** RFC 3339: when the grant was given or revoked. */
  occurredAt: string;
  grant: WebhookGrant;
}

/** The JSON body of a delivery about a suspension. */
export interface WebhookPayload {
  /** The delivery id (also the `x-toolnexus-delivery` header), the same on every retry. */
  id: string;
  type: WebhookSuspensionEvent;
  /** RFC 3339: when the event happened (not when this attempt was sent). */
  occurredAt: string;
  suspension: WebhookSuspension;
}

const MAX_PROMPT = 2000;
const MAX_OUTPUT = 2000;
/** Arguments larger than this as JSON are replaced by a note: a webhook is a notification, not a copy of the store. */
const MAX_ARGS_BYTES = 16 * 1024;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The payload of `event` for `call`, which the coordinator already redacted. */
export function payloadOf(
  id: string,
  event: WebhookSuspensionEvent,
  call: SuspendedCall,
  url: string | undefined,
  refusal?: AnswerRefusal,
): WebhookPayload {
  const { request } = call;
  const argsJson = JSON.stringify(call.args) ?? 'null';
  const suspension: WebhookSuspension = {
    id: request.id,
    kind: request.kind,
    prompt: cut(String(request.prompt), MAX_PROMPT),
    tool: call.tool,
    args: Buffer.byteLength(argsJson) > MAX_ARGS_BYTES ? `[${Buffer.byteLength(argsJson)} bytes of arguments: see the inbox]` : call.args,
    status: call.status,
    createdAt: call.createdAt,
  };
  if (call.runId !== undefined) suspension.runId = call.runId;
  if (call.callId !== undefined) suspension.callId = call.callId;
  if (request.expiresAt !== undefined) suspension.expiresAt = request.expiresAt;
  if (url !== undefined) suspension.url = url;
  if (call.outcome) {
    suspension.outcome = { isError: call.outcome.isError, output: cut(String(call.outcome.output), MAX_OUTPUT) };
  }
  if (call.answeredBy !== undefined) suspension.answeredBy = call.answeredBy;
  if (call.answeredAt !== undefined) suspension.answeredAt = call.answeredAt;
  if (call.comment !== undefined) suspension.comment = call.comment;
  if (call.next !== undefined) suspension.next = call.next;
  if (call.signatures !== undefined) suspension.signatures = call.signatures;
  if (refusal !== undefined) suspension.refusal = refusal;
  const occurredAt =
    (event === 'suspension.pending'
      ? call.createdAt
      : event === 'suspension.settled' || event === 'suspension.signed' || event === 'suspension.expired'
        ? call.updatedAt
        : undefined) ?? new Date().toISOString();
  return { id, type: event, occurredAt, suspension };
}

/** The payload of a grant event: the grant's own fields, picked one by one so nothing else a store adds is sent. */
export function grantPayloadOf(id: string, event: WebhookGrantEvent, grant: Grant): WebhookGrantPayload {
  const by: Principal = { id: grant.by.id, ...(grant.by.name === undefined ? {} : { name: grant.by.name }) };
  const shown: WebhookGrant = {
    id: grant.id,
    tool: grant.tool,
    scope: grant.scope,
    subject: grant.subject,
    by,
    createdAt: grant.createdAt,
  };
  if (grant.until !== undefined) shown.until = grant.until;
  if (grant.revokedAt !== undefined) shown.revokedAt = grant.revokedAt;
  const occurredAt = (event === 'grant.revoked' ? grant.revokedAt : grant.createdAt) ?? new Date().toISOString();
  return { id, type: event, occurredAt, grant: shown };
}
