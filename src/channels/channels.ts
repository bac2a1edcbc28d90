import { InvalidArgumentError } from '../errors';
import { MemoryDeliveries } from '../deliveries/memory';
import type { Delivery, DeliveryStore } from '../deliveries/store';
import type { AgentRunner } from '../runner/agent-runner';
import { askingCallOf } from '../suspension/asking';
import type { Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { redactCall } from '../suspension/redact';
import type { SuspendedCall } from '../suspension/store';
import { systemClock, type Clock, type ClockTimer } from '../timing/clock';
import { APPROVE_ACTION, DECLINE_ACTION, EDIT_ACTION } from './card';
import { openEdit, submitEdit, type EditParts } from './edit';
import { click, type PlatformUser } from './clicks';
import { work, type DeliveryEvent, type OutboxParts, type DeliveryRetry } from './outbox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeRoute } from './node';
import { emailSender, mailOnly, type EmailOptions, type MailSend } from './email';
import { escalationNotices, type EscalationRoute } from './escalation';
import { maySurface, outermostOf } from './surfaced';
import { adapterFor, loadChannelPeer, ADAPTER_FACTORIES, type AdapterLike, type ChatLike, type ChatModule } from './peer';

/** A platform this entry delivers to, by its Chat SDK adapter's name. */
export type Platform = keyof typeof ADAPTER_FACTORIES;

/**
 * One platform's adapter options, passed to its Chat SDK factory as they are
 * (`createSlackAdapter`, `createTeamsAdapter`, `createGoogleChatAdapter`; docs/channels.md, "Set-up").
 * Slack: `signingSecret`, `botToken` (and `apiUrl` for a stand-in); Teams: `appId`,
 * `appPassword`, `appTenantId`; Google Chat: `credentials` or `useApplicationDefaultCredentials`.
 */
export type PlatformOptions = Record<string, unknown>;

/** Options of {@link createChannels}. */
export interface ChannelsOptions {
  /** Where answers go: the runner (the run continues here) or a coordinator alone (the call settles; its run waits for a process with its runner). */
  host: AgentRunner | ResumeCoordinator;
  /** The platforms to deliver to, each with its adapter's options (none when only `email` is given). */
  platforms?: Partial<Record<Platform, PlatformOptions>>;
  /** E-mail approvals: a route's target `email:<principal id>` is mailed once, with signed links to the inbox (docs/channels.md, "E-mail"). */
  email?: EmailOptions;
  /** Who a verified platform user is (a directory lookup); `undefined` refuses them. Required with a platform; e-mail alone needs none. */
  principalOf?(user: PlatformUser): Principal | undefined | Promise<Principal | undefined>;
  /**
   * Where a pending approval's card goes: Chat SDK channel ids (`slack:C0FINANCE`) or
   * `email:<principal id>`, given the redacted call and who may answer it as far as the request
   * and the answer policy can say (docs/channels.md, "Routing").
   */
  route(call: SuspendedCall, answerers: RouteAnswerers): readonly string[] | Promise<readonly string[]>;
  /** Where a call's escalation notice goes when its escalation comes due (docs/channels.md, "Escalation"); default `route`. */
  escalationRoute?: EscalationRoute;
  /** Where deliveries are kept; default the coordinator's store's `deliveries` (every built-in store has them), else in memory. */
  deliveries?: DeliveryStore;
  /** Time for retries, leases and deadlines; the system's by default. */
  clock?: Clock;
  /** Failed deliveries are tried again after `baseMs` (1 s), doubled per failure, at most `maxMs` (5 min). */
  retry?: DeliveryRetry;
  /** How long a worker holds a delivery while it posts (30 s): after that, another worker may. */
  leaseMs?: number;
  /** How often a posted card of a waiting call is checked against its call (60 s): a call answered elsewhere updates it. */
  refreshMs?: number;
  /** Told of each delivery posted, updated or failed (a failure is tried again; it is never thrown). */
  onDelivery?(event: DeliveryEvent): void;
  /** The bot's name, for the Chat SDK. Default `toolnexus`. */
  userName?: string;
  /** A Chat SDK state adapter (locks, dedupe); default `@chat-adapter/state-memory`'s, one per process (answers are exactly once through the store regardless). */
  state?: unknown;
  /** Told of a failure no delivery event carries (a click whose answer failed for a reason other than a refusal). */
  onError?(error: unknown): void;
}

/**
 * Who may answer a call, as far as its request and the coordinator's answer policy can say
 * (`coordinator.answerersOf`): its quorum's `from`, the principals a policy that can list them
 * names (`rulesPolicy`), its escalation's `to` once due; empty when nothing can say. For routing only:
 * the policy still judges every click.
 */
export interface RouteAnswerers {
  principals: readonly string[];
  /**
   * For a request a sub-agent surfaced, the tool that asked (its **asking call**'s, docs/design.md
   * glossary) and the sub-agent tools above it, outermost first: route by it, since the call's own
   * `tool` is the sub-agent's. Absent for a tool's own request. Its arguments are not given: the
   * sub-agent's toolkit, not this coordinator's, knows which of them are sensitive.
   */
  asking?: { tool: string; path: readonly string[] };
}

/** What {@link Channels.deliver} did in one tick. */
export interface DeliveryReport {
  /** Deliveries recorded for pending calls that had none. */
  queued: number;
  /** Deliveries worked on (posted, edited, checked or failed). */
  worked: number;
}

/**
 * Open approval requests delivered to the people who may answer them, in Slack, Microsoft
 * Teams and Google Chat, on Vercel's Chat SDK, and by e-mail with signed links to the inbox
 * (docs/channels.md). Every card is a delivery in
 * the store (an outbox), so a crash before it was posted still posts it once, and a call
 * settled anywhere brings its cards to the outcome. A click is an answer through `answerAs`,
 * judged by the coordinator's answer policy like every other door's.
 */
export class Channels {
  private readonly store: DeliveryStore;
  private readonly clock: Clock;
  private readonly outbox: OutboxParts;
  private timer: ClockTimer | undefined;
  /** The tick in progress, which {@link close} waits for (the store may close right after). */
  private ticking: Promise<void> | undefined;
  private unobserve: (() => void) | undefined;
  private closed = false;
  /** Each call's refresh in progress here: the next one waits for it. */
  private readonly running = new Map<string, Promise<void>>();

  /** Use {@link createChannels}. */
  constructor(
    private readonly options: ChannelsOptions,
    private readonly chat: ChatLike,
    chatModule: ChatModule,
    adapters: ReadonlyMap<string, AdapterLike>,
    mail?: MailSend,
  ) {
    this.clock = options.clock ?? systemClock;
    this.store = options.deliveries ?? deliveriesOf(this.coordinator.store) ?? new MemoryDeliveries();
    this.outbox = {
      store: this.store,
      clock: this.clock,
      chat: chatModule,
      adapters,
      ...(mail ? { mail } : {}),
      read: async (id) => {
        const call = await this.coordinator.get(id);
        return call ? redactCall(this.coordinator.toolkit, call) : undefined;
      },
      tell: (event) => options.onDelivery?.(event),
      leaseMs: options.leaseMs ?? 30_000,
      refreshMs: options.refreshMs ?? 60_000,
      retry: { baseMs: options.retry?.baseMs ?? 1000, maxMs: options.retry?.maxMs ?? 300_000 },
    };
    const parts: EditParts = {
      host: options.host,
      store: this.store,
      principalOf: (user) => options.principalOf?.(user),
      refresh: (id) => this.refresh(id),
      fail: (e) => this.fail(e),
      outermost: async (id) => {
        const call = await this.coordinator.get(id);
        return call ? (await outermostOf(this.coordinator, call)).request.id : id;
      },
      coordinator: this.coordinator,
      modal: chatModule,
    };
    chat.onAction([APPROVE_ACTION, DECLINE_ACTION], (event) => click(parts, event));
    chat.onAction([EDIT_ACTION], (event) => openEdit(parts, event));
    chat.onModalSubmit((event) => submitEdit(parts, event));
    // In this process, a new request or a change of one is delivered at once; other processes'
    // changes are found by the tick (`start`), from the store.
    const kick = (call: SuspendedCall) => void this.refresh(call.request.id).catch((error: unknown) => this.fail(error));
    this.unobserve = this.coordinator.observe({ onPending: kick, onSigned: kick, onSettled: kick, onEscalated: kick });
  }

  private get coordinator(): ResumeCoordinator {
    const host = this.options.host as Partial<AgentRunner>;
    return typeof host.resume === 'function' ? (host as AgentRunner).coordinator : (this.options.host as ResumeCoordinator);
  }

  /**
   * Handles one platform's webhook (its events and its card clicks): the adapter verifies the
   * request (Slack's signing secret, Teams' Bot Framework token, Google Chat's bearer token) and
   * answers 401 to one it cannot; the click is then answered before the response returns.
   */
  async handle(platform: Platform, request: Request): Promise<Response> {
    const hook = this.chat.webhooks[platform];
    if (!hook) return new Response(`no ${platform} adapter is configured`, { status: 404 });
    const tasks: Promise<unknown>[] = [];
    const response = await hook(request, { waitUntil: (task) => tasks.push(task) });
    await Promise.allSettled(tasks);
    return response;
  }

  /** {@link handle} as a node:http route (Express and Nest take it too): mount it at the platform's webhook URL. */
  nodeHandler(platform: Platform): (req: IncomingMessage, res: ServerResponse) => void {
    return nodeRoute((request) => this.handle(platform, request));
  }

  /**
   * One tick of the outbox: records a delivery for each route of every pending approval that
   * has none (a crash between "suspended" and "posted" leaves one such), then works every
   * delivery that is due: posts, edits to the call's state, or tries a failed one again.
   */
  async deliver(): Promise<DeliveryReport> {
    let queued = 0;
    for (const call of await this.coordinator.list({ status: 'pending', kind: 'approval' })) queued += await this.queue(call);
    let worked = 0;
    for (const delivery of await this.store.listDeliveries({ dueBy: this.clock.now() })) {
      if (await this.attempt(delivery)) worked++;
    }
    return { queued, worked };
  }

  /**
   * Delivers one call's cards now: queued if new, posted, or edited to its state (a card
   * already final is left). In this process one call's refreshes run one after another, so a
   * refresh returns once what it asked for is on the platform.
   */
  refresh(callId: string): Promise<void> {
    const next = (this.running.get(callId) ?? Promise.resolve()).catch(() => undefined).then(() => this.refreshNow(callId));
    this.running.set(callId, next);
    const forget = (): void => {
      if (this.running.get(callId) === next) this.running.delete(callId);
    };
    next.then(forget, forget);
    return next;
  }

  private async refreshNow(callId: string): Promise<void> {
    const call = await this.coordinator.get(callId);
    if (call?.status === 'pending' && call.request.kind === 'approval') await this.queue(call);
    // A few rounds: the call may move on while its card is being sent (another approver's click).
    for (let round = 0; round < 3; round++) {
      let moved = false;
      for (const delivery of await this.store.listDeliveries({ callId })) {
        // A failed one waits out its backoff, an escalation notice its escalation: the tick tries it then.
        const waiting = delivery.dueAt > this.clock.now() && (delivery.attempts > 0 || delivery.message === undefined);
        if (!delivery.done && !waiting && (await this.attempt(delivery))) moved = true;
      }
      if (!moved) return;
    }
  }

  /** Runs {@link deliver} every `everyMs` on the clock (default 5 s), until {@link close}. */
  start(everyMs = 5000): void {
    if (!Number.isSafeInteger(everyMs) || everyMs < 1)
      throw new InvalidArgumentError('Channels.start: everyMs must be a whole number of milliseconds');
    const tick = (): void => {
      if (this.closed) return;
      this.ticking = this.deliver()
        .then(
          () => undefined,
          (error: unknown) => this.fail(error),
        )
        .finally(() => {
          if (!this.closed) this.timer = this.clock.setTimeout(tick, everyMs);
        });
    };
    this.timer = this.clock.setTimeout(tick, 0);
  }

  /** Stops the tick (waiting for one in progress) and the observer, shuts the Chat SDK down, and closes the mail transport it made. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.unobserve?.();
    await this.ticking;
    this.outbox.mail?.close?.();
    await this.chat.shutdown?.();
  }

  private async queue(call: SuspendedCall): Promise<number> {
    // A sub-agent's own request is answered as the request the root's run surfaced it as: that
    // one's card is the only one (docs/channels.md, "A sub-agent's request").
    if ((await outermostOf(this.coordinator, call)).request.id !== call.request.id) {
      await this.retire(call.request.id);
      return 0;
    }
    // The run above surfaces it in a moment: the tick comes back for it.
    if (maySurface(call, this.clock.now())) return 0;
    const redacted = redactCall(this.coordinator.toolkit, call);
    const asking = await askingCallOf(this.coordinator.store, call);
    const answerers: RouteAnswerers = {
      principals: await this.coordinator.answerersOf(call),
      ...('call' in asking && asking.path.length > 0 ? { asking: { tool: asking.call.tool, path: asking.path } } : {}),
    };
    const route = (shown: SuspendedCall) =>
      this.options.route(shown, {
        ...answerers,
        principals: [...answerers.principals],
        ...(answerers.asking ? { asking: { ...answerers.asking, path: [...answerers.asking.path] } } : {}),
      });
    let queued = 0;
    for (const target of await route(redacted)) {
      const platform = target.slice(0, target.indexOf(':'));
      const delivery: Delivery = {
        id: `${call.request.id} ${target}`,
        callId: call.request.id,
        platform,
        target,
        version: 1,
        done: false,
        attempts: 0,
        dueAt: this.clock.now(),
      };
      if (await this.store.insertDelivery(delivery)) queued++;
    }
    for (const notice of await escalationNotices(redacted, route, this.options.escalationRoute)) {
      if (await this.store.insertDelivery(notice)) queued++;
    }
    return queued;
  }

  /**
   * A surfaced request's cards not posted yet (queued before the run above surfaced it) are
   * never posted; one already posted follows its call, and its click answers the surfaced one.
   */
  private async retire(callId: string): Promise<void> {
    const now = this.clock.now();
    for (const delivery of await this.store.listDeliveries({ callId })) {
      if (delivery.done || delivery.message || (delivery.leaseUntil !== undefined && delivery.leaseUntil > now)) continue;
      await this.store.saveDelivery({ ...delivery, done: true, dueAt: now, version: delivery.version + 1 });
    }
  }

  /** Works one delivery as stored now (a list may be stale by the time it is reached). */
  private async attempt(delivery: Delivery): Promise<boolean> {
    const stored = await this.store.getDelivery(delivery.id);
    if (!stored || stored.done) return false;
    return work(this.outbox, stored);
  }

  private fail(error: unknown): void {
    try {
      this.options.onError?.(error);
    } catch {
      // An observer that throws is ignored, like every hook.
    }
  }
}

/**
 * Builds {@link Channels}: loads the Chat SDK and each platform's adapter (ES modules, optional
 * peers of this entry), and creates the Chat SDK's `Chat` over them.
 *
 * @throws {@link MissingPeerError} when `chat` or a platform's adapter is not installed.
 */
export async function createChannels(options: ChannelsOptions): Promise<Channels> {
  const platforms = Object.entries(options.platforms ?? {}) as [Platform, PlatformOptions][];
  if (platforms.length === 0 && options.email === undefined)
    throw new InvalidArgumentError('createChannels needs at least one of platforms.slack, .teams, .gchat, or email');
  for (const [platform] of platforms) {
    if (!(platform in ADAPTER_FACTORIES))
      throw new InvalidArgumentError(`createChannels: unknown platform ${platform} (slack, teams, gchat)`);
  }
  if ((platforms.length > 0 && typeof options.principalOf !== 'function') || typeof options.route !== 'function') {
    throw new InvalidArgumentError('createChannels needs principalOf(user) and route(call)');
  }
  const mail = options.email === undefined ? undefined : await emailSender(options.email, options.clock ?? systemClock);
  if (platforms.length === 0) {
    const only = mailOnly();
    return new Channels(options, only.chat, only.module, new Map(), mail);
  }
  const chatModule = await loadChannelPeer<ChatModule>('chat');
  const adapters = new Map<string, AdapterLike>();
  for (const [platform, settings] of platforms) adapters.set(platform, await adapterFor(platform, settings));
  const state =
    options.state ?? (await loadChannelPeer<{ createMemoryState(): unknown }>('@chat-adapter/state-memory')).createMemoryState();
  const chat = new chatModule.Chat({
    adapters: Object.fromEntries(adapters),
    state,
    userName: options.userName ?? 'toolnexus',
    logger: 'silent',
    concurrency: 'concurrent',
  });
  await chat.initialize();
  return new Channels(options, chat, chatModule, adapters, mail);
}

function deliveriesOf(store: object): DeliveryStore | undefined {
  const deliveries = (store as { deliveries?: DeliveryStore }).deliveries;
  return deliveries && typeof deliveries.insertDelivery === 'function' ? deliveries : undefined;
}
