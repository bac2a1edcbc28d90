import { InvalidArgumentError } from '../../errors';
import { systemClock, type Clock } from '../../timing/clock';
import { httpUrlOf } from '../../http/settings';
import type { A2APushReceiver } from './push';

/** Where `${VAR}` in {@link A2AAgentToolOptions.headers} is looked up. */
export type A2AEnvironment = Readonly<Record<string, string | undefined>>;

/** Options of {@link a2aAgentTool}: which agent, what the tool is called, and the bounds of a call. */
export interface A2AAgentToolOptions {
  /**
   * The agent's base URL (its card is read from `.well-known/agent-card.json` under its path,
   * else at its host's root) or the URL of its card itself (a path ending in `.json`). Give
   * this or `card`.
   */
  url?: string;
  /** The agent card as its JSON (A2A 1.0, or 0.3 when the SDK's compatibility reads it), when the host has it already. */
  card?: Record<string, unknown>;
  /** The tool's name; default the card's `name`, sanitized (upstream's prefix). */
  name?: string;
  /** The tool's description; default the card's description and its skills. */
  description?: string;
  /**
   * Headers sent with every request to the agent, the card's included (an `authorization`, an
   * API key). `${VAR}`, `${env:VAR}` and `${VAR:-fallback}` are replaced at call time from
   * `env`; every value is redacted as `***` from results, errors and stored rows.
   */
  headers?: Record<string, string>;
  /**
   * Origins besides the card's (`url`'s) the headers may be sent to: an agent whose card names an
   * endpoint elsewhere (`https://api.example.com`). A request with headers to any other origin
   * fails before it is sent. With `card` given instead of `url`, the endpoints the card names
   * may have them too (the card is the host's).
   */
  headerOrigins?: string[];
  /** Where `${VAR}` is looked up. Default `process.env`. */
  env?: A2AEnvironment;
  /** The whole wait of one call (its send, the polls, and each answer's send), in ms. Default 300 000 (upstream's). */
  timeoutMs?: number;
  /** How often a task still `submitted` or `working` is read again, in ms. Default 1 000 (upstream's). */
  pollEveryMs?: number;
  /** Most bytes of one HTTP response from the agent (the card, a task). Default 1 MiB. */
  maxResponseBytes?: number;
  /** Most parts of a task's artifacts (or reply) turned into the result; the rest are left out, saying so. Default 100. */
  maxParts?: number;
  /** The `fetch` requests go through (a proxy's, an instrumented one). Default the platform's. */
  fetch?: typeof globalThis.fetch;
  /** Time of the waits and deadlines. Default the system clock. */
  clock?: Clock;
  /**
   * Push instead of polling (docs/a2a.md, "Push instead of polling"): a call sends its task
   * without waiting (`returnImmediately`) with a push config naming this receiver and a token of
   * its own, and reads the task again when the agent tells it of a change, or after `pollEveryMs`
   * when nothing came (give a longer one: it is only the fallback). Needs an agent whose card
   * says `pushNotifications`; otherwise the tool polls. An answer's send waits for the agent, as
   * without push.
   */
  push?: A2APushReceiver;
}

const DEFAULTS = { timeoutMs: 300_000, pollEveryMs: 1_000, maxResponseBytes: 1_048_576, maxParts: 100 };

/** The options with their defaults, checked once. */
export type A2AAgentSettings = Omit<A2AAgentToolOptions, keyof typeof DEFAULTS | 'env' | 'fetch' | 'clock' | 'headers'> &
  typeof DEFAULTS & {
    env: A2AEnvironment;
    fetch: typeof globalThis.fetch;
    clock: Clock;
    headers: Record<string, string>;
  };

export function agentSettings(options: A2AAgentToolOptions): A2AAgentSettings {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('a2aAgentTool needs options with a url or a card');
  if ((options.url === undefined) === (options.card === undefined))
    throw new InvalidArgumentError('a2aAgentTool needs exactly one of url (where the agent card is) and card (the card itself)');
  if (options.url !== undefined) httpUrlOf(options.url, 'a2aAgentTool: url is not a URL', 'a2aAgentTool: url must be http or https');
  if (options.card !== undefined && (typeof options.card !== 'object' || options.card === null || Array.isArray(options.card)))
    throw new InvalidArgumentError('a2aAgentTool: card must be the agent card as a JSON object');
  for (const origin of options.headerOrigins ?? []) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed?.origin !== origin)
      throw new InvalidArgumentError(`a2aAgentTool: headerOrigins must be origins (scheme://host[:port]), got ${JSON.stringify(origin)}`);
  }
  const headers = options.headers ?? {};
  for (const [key, value] of Object.entries(headers))
    if (typeof value !== 'string') throw new InvalidArgumentError(`a2aAgentTool: header ${key} must be a string`);
  const settings: A2AAgentSettings = {
    ...options,
    ...DEFAULTS,
    ...definedBounds(options),
    headers: { ...headers },
    env: options.env ?? process.env,
    fetch: options.fetch ?? globalThis.fetch,
    clock: options.clock ?? systemClock,
  };
  for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < 1)
      throw new InvalidArgumentError(`a2aAgentTool: ${key} must be a positive number, got ${String(value)}`);
  }
  return settings;
}

function definedBounds(options: A2AAgentToolOptions): Partial<typeof DEFAULTS> {
  const out: Partial<typeof DEFAULTS> = {};
  for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) if (options[key] !== undefined) out[key] = options[key];
  return out;
}
