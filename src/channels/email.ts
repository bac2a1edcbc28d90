import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import type { Delivery } from '../deliveries/store';
import { httpUrlOf } from '../http/settings';
import { signTicket, ticketKey, type TicketAction } from '../tickets/ticket';
import type { Clock } from '../timing/clock';
import { approvalMail } from './mail';
import { loadChannelPeer, type ChatLike, type ChatModule } from './peer';
import type { CardView } from './view';

/** The platform name of e-mail deliveries: a route's target `email:<principal id>`. */
export const EMAIL_PLATFORM = 'email';

/** A message as this entry hands it to a transport (nodemailer's `sendMail` takes it as is). */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`, the same on every try of one delivery, so a mail sent twice after a lapsed lease reads as one. */
  messageId: string;
}

/** What sends a mail: a nodemailer transporter, or anything with its `sendMail`. */
export interface MailTransport {
  sendMail(message: MailMessage): Promise<{ messageId?: string }>;
  close?(): void;
}

/** Options of e-mail approvals (`ChannelsOptions.email`, docs/channels.md, "E-mail"). */
export interface EmailOptions {
  /**
   * nodemailer's transport options (SMTP: `host`, `port`, `secure`, `auth`, …), passed to
   * `createTransport` as they are (its timeouts default here to 10 s to connect and greet and
   * 20 s of silence, well within a delivery's lease), or a transport of your own with `sendMail`.
   */
  transport: Record<string, unknown> | MailTransport;
  /** The sender: `"Approvals" <approvals@example.com>`. */
  from: string;
  /** The address of a principal a route names (`email:<principal id>`); `undefined` fails the delivery, which is tried again later. */
  addressOf(principalId: string): string | undefined | Promise<string | undefined>;
  /** The inbox's public URL, where the links lead: `https://approvals.example.com/inbox` (its `tickets` option verifies them). */
  inboxUrl: string;
  /** What the links are signed with (HMAC-SHA256): at least 32 bytes, the same as the inbox's `tickets.secret`. */
  secret: string | Uint8Array;
  /** How long a link works, in ms: 72 h by default, never past the request's own deadline. */
  ttlMs?: number;
}

/** Sends one e-mail delivery's mail; what it returns is recorded as the delivery's message. `close` ends a transport this entry made (a pool's connections). */
export type MailSend = ((delivery: Delivery, view: CardView) => Promise<{ threadId: string; id: string }>) & { close?(): void };

const INSTALL = 'npm install nodemailer';
const DEFAULT_TTL_MS = 72 * 3600_000;

/**
 * Builds the e-mail sender of {@link EmailOptions}: checks the options, loads `nodemailer` (an
 * optional peer, only when e-mail is configured and no transport of the host's own is given)
 * and signs, per mail, one ticket per answer for the principal the route names.
 *
 * @throws {@link InvalidArgumentError} a secret under 32 bytes, an `inboxUrl` that is not http(s).
 * @throws {@link MissingPeerError} naming `npm install nodemailer` when it is needed and not installed.
 */
export async function emailSender(options: EmailOptions, clock: Clock): Promise<MailSend> {
  const key = ticketKey(options.secret, 'createChannels: email');
  if (typeof options.from !== 'string' || options.from === '') throw new InvalidArgumentError('createChannels: email.from is required');
  if (typeof options.addressOf !== 'function') throw new InvalidArgumentError('createChannels: email needs addressOf(principalId)');
  const inbox = httpUrlOf(
    options.inboxUrl,
    'createChannels: email.inboxUrl must be the absolute URL of the inbox',
    'createChannels: email.inboxUrl must be http(s)',
  );
  const base = inbox.href.replace(/\/+$/, '');
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 60_000) throw new InvalidArgumentError('createChannels: email.ttlMs must be at least 60000');
  const own = typeof (options.transport as Partial<MailTransport>)?.sendMail !== 'function';
  const transport = await transportOf(options.transport);
  const domain = /@([^>\s]+)>?\s*$/.exec(options.from)?.[1] ?? 'toolnexus.invalid';
  const send: MailSend = async (delivery, view) => {
    const principal = delivery.target.slice(EMAIL_PLATFORM.length + 1);
    const to = await options.addressOf(principal);
    if (typeof to !== 'string' || to === '') throw new Error(`no e-mail address for ${principal}`);
    const deadline = view.deadline === undefined ? Infinity : Date.parse(view.deadline);
    const expiresAt = Math.min(clock.now() + ttlMs, deadline);
    const link = (action: TicketAction): string =>
      `${base}/tickets/${signTicket(key, { principal, callId: delivery.callId, action, expiresAt })}`;
    const mail = approvalMail(
      view,
      [
        { label: 'Approve', url: link('approve') },
        { label: 'Decline', url: link('decline') },
      ],
      new Date(expiresAt).toISOString(),
      principal,
    );
    const messageId = `<${createHash('sha256').update(delivery.id).digest('hex').slice(0, 32)}@${domain}>`;
    const sent = await transport.sendMail({ from: options.from, to, messageId, ...mail });
    return { threadId: delivery.target, id: typeof sent?.messageId === 'string' ? sent.messageId.slice(0, 300) : messageId };
  };
  // A transport the host gave stays the host's to close.
  if (own) send.close = () => transport.close?.();
  return send;
}

async function transportOf(given: EmailOptions['transport']): Promise<MailTransport> {
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('createChannels: email.transport is required');
  if (typeof (given as MailTransport).sendMail === 'function') return given as MailTransport;
  type Nodemailer = { createTransport?: (this: void, options: object) => MailTransport };
  const loaded = await loadChannelPeer<Nodemailer & { default?: Nodemailer }>('nodemailer', INSTALL);
  // Imported from CommonJS, its functions may sit on the namespace or under `default`.
  const module = typeof loaded.createTransport === 'function' ? loaded : loaded.default;
  if (typeof module?.createTransport !== 'function')
    throw new InvalidArgumentError('createChannels: the installed nodemailer has no createTransport');
  // The outbox owns retries; a silent server must not hold a delivery past its lease.
  return module.createTransport({ connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000, ...given });
}

/** The Chat SDK's part when only e-mail is configured: no adapter, no webhook, no card. */
export function mailOnly(): { chat: ChatLike; module: ChatModule } {
  const none = (): never => {
    throw new Error('no chat platform is configured');
  };
  const chat: ChatLike = { initialize: async () => undefined, onAction: () => undefined, onModalSubmit: () => undefined, webhooks: {} };
  return {
    chat,
    module: {
      Chat: none as never,
      Card: none,
      CardText: none,
      Fields: none,
      Field: none,
      Actions: none,
      Button: none,
      Modal: none,
      TextInput: none,
    },
  };
}
