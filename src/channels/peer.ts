import { MissingPeerError } from '../errors';
import type { CardBuilders, CardElement } from './card';

/**
 * The `chat` SDK and its adapters are ES modules only (their `exports` name no `require`
 * condition), so this CommonJS package loads them with a real `import()`, which TypeScript would
 * turn into a `require`. A direct `eval` keeps it, and keeps the calling module as its referrer
 * (a `new Function` would not: its import is resolved by whatever loader the realm has, which
 * under a test runner may be one already torn down).
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- read by the eval'd import(), which the linter cannot see
async function importModule(specifier: string): Promise<unknown> {
  return (await eval('import(specifier)')) as unknown;
}

/** What a click on a card tells (the `chat` SDK's `ActionEvent`, the part this entry reads). */
export interface ActionEventLike {
  actionId: string;
  value?: string;
  messageId: string;
  threadId: string;
  user: { userId: string; userName: string; fullName: string };
  adapter: AdapterLike;
  /** Opens a modal in answer to the click (Slack's `views.open` with the click's trigger id, Teams' dialog in the `task/fetch` invoke's answer). */
  openModal?(modal: unknown): Promise<unknown>;
}

/** A modal submitted (the `chat` SDK's `ModalSubmitEvent`, the part this entry reads). */
export interface ModalSubmitLike {
  callbackId: string;
  values: Record<string, string>;
  user: { userId: string; userName: string; fullName: string };
  adapter: AdapterLike;
}

/** What a modal's submission is answered with: closed, or its fields' errors shown. */
export type ModalSubmitResponse = { action: 'close' } | { action: 'errors'; errors: Record<string, string> };

/** The modal builders of the `chat` package this entry uses. */
export interface ModalBuilders {
  Modal(options: { callbackId: string; title: string; submitLabel?: string; children?: unknown[] }): unknown;
  TextInput(options: { id: string; label: string; initialValue?: string; optional?: boolean; maxLength?: number }): unknown;
}

/** A message as an adapter posts or edits it. */
export type Postable = string | { card: CardElement; fallbackText?: string };

/** What this entry calls on a Chat SDK adapter. */
export interface AdapterLike {
  readonly name: string;
  postChannelMessage?(channelId: string, message: Postable): Promise<{ id: string; threadId: string }>;
  postMessage(threadId: string, message: Postable): Promise<{ id: string; threadId: string }>;
  editMessage(threadId: string, messageId: string, message: Postable): Promise<unknown>;
  postEphemeral?(threadId: string, userId: string, message: Postable): Promise<unknown>;
}

/** What this entry calls on the `chat` SDK's `Chat`. */
export interface ChatLike {
  initialize(): Promise<void>;
  onAction(actionIds: string[], handler: (event: ActionEventLike) => Promise<void>): void;
  /** Every modal's submission (the Edit modal's callback id names its call, so it is matched by its prefix). */
  onModalSubmit(handler: (event: ModalSubmitLike) => Promise<ModalSubmitResponse | undefined>): void;
  readonly webhooks: Record<string, (request: Request, options?: { waitUntil?: (task: Promise<unknown>) => void }) => Promise<Response>>;
  shutdown?(): Promise<void>;
}

/** The `chat` module: its `Chat` class and its card builders. */
export interface ChatModule extends CardBuilders, ModalBuilders {
  Chat: new (config: Record<string, unknown>) => ChatLike;
}

const INSTALL = 'npm install chat @chat-adapter/slack @chat-adapter/teams @chat-adapter/gchat @chat-adapter/state-memory';

/** Loads an optional peer of `toolnexus-ts/channels`; without it, {@link MissingPeerError} names the install command (`install`). */
export async function loadChannelPeer<T>(peer: string, install = INSTALL): Promise<T> {
  try {
    return (await importModule(peer)) as T;
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(peer)) {
      throw new MissingPeerError('toolnexus-ts/channels', peer, install, { cause: error });
    }
    throw error;
  }
}

/** The factory each platform's adapter package exports, by the name this entry gives the platform. */
export const ADAPTER_FACTORIES = {
  slack: ['@chat-adapter/slack', 'createSlackAdapter'],
  teams: ['@chat-adapter/teams', 'createTeamsAdapter'],
  gchat: ['@chat-adapter/gchat', 'createGoogleChatAdapter'],
} as const;

/** Builds one platform's adapter from the host's options (passed to the adapter as they are). */
export async function adapterFor(platform: keyof typeof ADAPTER_FACTORIES, options: object): Promise<AdapterLike> {
  const [peer, factory] = ADAPTER_FACTORIES[platform];
  const module = await loadChannelPeer<Record<string, (config: object) => AdapterLike>>(peer);
  // Slack's WebClient would retry a failed call itself, for up to half an hour, and wait on a
  // silent server without end, while the delivery's lease (30 s) lapses and another worker posts
  // the same card: the outbox owns retries, and a call is given up well within the lease.
  const own =
    platform === 'slack'
      ? { webClientOptions: { retryConfig: { retries: 0 }, timeout: 10_000, logLevel: 'error', ...webClientOptionsOf(options) } }
      : {};
  return module[factory]!({ logger: silentLogger, ...options, ...own });
}

function webClientOptionsOf(options: object): object {
  const given = (options as { webClientOptions?: unknown }).webClientOptions;
  return typeof given === 'object' && given !== null ? given : {};
}

/** The Chat SDK logs through the host's logger when it gives one; by default it says nothing (failures reach observers instead). */
export const silentLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
