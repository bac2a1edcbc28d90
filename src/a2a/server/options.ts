import type { IncomingMessage } from 'node:http';
import type { RunStore } from '../../runner/core/store';
import type { Skills } from '../../skills/skills';
import type { Principal } from '../../suspension/audit';
import type { Clock } from '../../timing/clock';

/** How the agent sends push notifications (docs/a2a.md, "Listing and push"). */
export interface A2APushOptions {
  /** Send to private, loopback and link-local addresses too (a test, a trusted network). Default false. */
  allowPrivateNetworks?: boolean;
  /** Attempts per notification, the first included. Default 8. */
  maxAttempts?: number;
  /** The pause before the first retry; each further one doubles, up to 5 minutes. Default 1000 ms. */
  retryDelayMs?: number;
  /** How long one attempt may take. Default 10 000 ms. */
  timeoutMs?: number;
  /** The largest body sent, in bytes: a bigger status is sent without its message. Default 64 KiB. */
  maxBodyBytes?: number;
  /** The most push configs one task keeps. Default 5. */
  maxConfigs?: number;
  /** Where retries and the outbox's sweep take their time. Default the system clock. */
  clock?: Clock;
}

/** A skill the agent card lists (A2A `AgentSkill`): what the agent can be asked, in words. */
export interface A2ASkill {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
}

/**
 * Who is asking, from the request (a bearer token, a session cookie, headers an authenticating
 * proxy set); `undefined` or `null` refuses it with 401. The same shape as the inbox's and the
 * chat's, so one function serves every front door.
 */
export type A2AAuthenticate = (request: IncomingMessage) => Principal | undefined | null | Promise<Principal | undefined | null>;

/** What the agent card says of the agent (docs/a2a.md, "The agent card"). */
export interface A2ACardOptions {
  /** The public URL of the JSON-RPC endpoint, as clients reach it (behind a proxy, the proxy's). */
  url: string;
  /** Default: the runner's `name`, else `toolnexus-agent` (upstream's). */
  name?: string;
  /** Default `''`. */
  description?: string;
  /** The agent's own version. Default `0.1.0`. */
  version?: string;
  provider?: { organization: string; url: string };
  /** The skills the card lists: a `loadSkills` result (each skill's name and description), or your own. Default none: the card never lists raw tools. */
  skills?: Skills | readonly A2ASkill[];
}

/** Where the agent logs a run that failed (the client is told only that its task failed). */
export interface A2ALogger {
  error(message: string): void;
}

/** Options of {@link a2aHandler} and its Fastify and Nest forms. */
export interface A2AServeOptions extends A2ACardOptions {
  /** Who asks: every JSON-RPC request is authenticated (the agent card is public). */
  authenticate: A2AAuthenticate;
  /** The host's context for the run's tool calls (a DI scope, the tenant...), per principal. */
  context?: (principal: Principal) => object;
  /**
   * Where the runner keeps its checkpoints, when it was given `runs` apart from its
   * coordinator's store. Default: the coordinator's store (the built-in stores keep both).
   */
  runs?: RunStore;
  /** The largest request body read, in bytes. Default 1 MiB; a larger one is answered 413. */
  maxBodyBytes?: number;
  /** The most parts one message may carry. Default 20. */
  maxParts?: number;
  /**
   * Where a failed run is logged: one line naming the task and the error's code (for a model,
   * its provider and HTTP status), never the error's message. Default: stderr. A logger that
   * throws is ignored.
   */
  logger?: A2ALogger;
  /**
   * How push notifications are sent (docs/a2a.md, "Listing and push"): by default never to a
   * private, loopback or link-local address, retried with backoff from the task's durable outbox.
   */
  push?: A2APushOptions;
  /**
   * How long the task a new message's idempotency key started (message metadata
   * `io.toolnexus/idempotency-key`, docs/a2a.md, "Idempotency keys") answers a repeat of that
   * key from the same principal: the repeat gets the task as it stands, and nothing starts.
   * Default a day.
   */
  idempotencyRetentionMs?: number;
}
