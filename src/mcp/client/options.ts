import type { PendingRequest } from '../../results/wire';
import type { WaitFor } from '../../suspension/answers';
import type { TelemetryOption } from '../../telemetry/options';
import type { McpEnvironment } from './config';
import { McpConfigError } from './errors';
import type { McpOAuthOptions } from './oauth/store';
import type { McpSamplingOptions, McpTaskOptions } from './types';

/**
 * Which MCP revision a source speaks: `auto` (the default) asks each server with
 * `server/discover` and speaks 2026-07-28 where it is offered, 2025-11-25 elsewhere; a revision
 * named here is the only one spoken (a server that does not offer it fails to connect).
 */
export type McpProtocolVersion = 'auto' | '2025-11-25' | '2026-07-28';

const PROTOCOL_VERSIONS: readonly McpProtocolVersion[] = ['auto', '2025-11-25', '2026-07-28'];

/** Options of an {@link McpToolSource}. */
export interface McpToolSourceOptions {
  /** An `mcp.json` document (Claude Desktop, Cursor or VS Code shape), or servers already parsed. */
  config: unknown;
  /** Where `${VAR}` in the config is looked up. Default `process.env`. */
  env?: McpEnvironment;
  /**
   * Answers a server's elicitation while its call waits: the elicitation becomes a `pending`
   * request (kind `input`, or `authorization` for a URL) given to this function. Without it the
   * client declares no elicitation capability to a 2025-11-25 server, and a 2026-07-28 server's
   * `input_required` suspends the call instead (docs/mcp.md, "A remote input_required").
   */
  waitFor?: WaitFor;
  /** Told of every elicitation turned into a request, before `waitFor` is asked. */
  onPending?: (request: PendingRequest, server: string) => void;
  /** How long `waitFor` may take before the elicitation is declined, in ms (default 120 000). */
  elicitationTimeoutMs?: number;
  /** How long one call may take without progress, in ms (default 60 000; progress resets it). */
  callTimeoutMs?: number;
  /** How long connecting and listing tools may take per server, all pages together, in ms (default 30 000). */
  connectTimeoutMs?: number;
  /** Most `tools/list` pages read from one server (default 100); a server still giving cursors past it fails. */
  maxListPages?: number;
  /** Longest text output kept from a call (default 1 000 000 characters); the rest is cut, saying so. */
  maxOutputChars?: number;
  /** Most tools taken from one server (default 500). */
  maxToolsPerServer?: number;
  /** Most skills `skills()` takes from one server (default 100); the rest of its listing is not read. */
  maxSkillsPerServer?: number;
  /**
   * The MCP revision spoken to every server (default `auto`: 2026-07-28 where a server offers
   * it, else 2025-11-25). Pin `2025-11-25` for a server whose 2026-07-28 side misbehaves, or to
   * keep 2025-only behaviour (sessions, unsolicited notifications); see docs/mcp.md.
   */
  protocolVersion?: McpProtocolVersion;
  /** The client name servers see. Default `toolnexus`. */
  clientName?: string;
  /**
   * OpenTelemetry: a `tools/call {tool}` CLIENT span per call, its trace context sent in the
   * request's `_meta`; by the global tracer provider unless this picks another or turns it off.
   */
  telemetry?: TelemetryOption;
  /**
   * Answers servers' sampling requests (`sampling/createMessage`) through a model of the
   * host's, when its policy says yes (docs/mcp.md, "Sampling"). Without it the client declares
   * no sampling capability and servers do not ask. Sampling is deprecated as of MCP 2026-07-28
   * (kept for servers of both eras; in 2026-07-28 it comes inside `input_required`): a server
   * that needs a model should call one of its own.
   */
  sampling?: McpSamplingOptions;
  /**
   * OAuth for remote servers that ask for it (docs/mcp.md, "OAuth"): a person's login
   * (the default grant) is reported by `connect()` (`needsLogin`) or suspends the call (a
   * request of kind `authorization`); `client_credentials` and `cross_app` need nobody. Tokens
   * refresh, or are granted again, silently. Without it a 401 fails the server.
   */
  oauth?: McpOAuthOptions;
  /**
   * Takes tasks (the tasks extension, SEP-2663; docs/mcp.md, "Tasks, as a client"): each
   * 2026-07-28 call to a server that offers the extension declares it, and a call the server
   * makes a task is followed with `tasks/get` until it ends, for at most the call's timeout
   * between two answers. What the task asks is answered like a remote `input_required`: by
   * `waitFor` in process, or by suspending the call with the task id kept, the answer sent by
   * `tasks/update` once, from whichever process answers. `true` for the defaults. Off by
   * default: without it the extension is not declared and the server answers MRTR round trips.
   */
  tasks?: boolean | McpTaskOptions;
}

const DEFAULTS = {
  protocolVersion: 'auto' as McpProtocolVersion,
  elicitationTimeoutMs: 120_000,
  callTimeoutMs: 60_000,
  connectTimeoutMs: 30_000,
  maxOutputChars: 1_000_000,
  maxToolsPerServer: 500,
  maxSkillsPerServer: 100,
  maxListPages: 100,
};

const BOUNDS = [
  'elicitationTimeoutMs',
  'callTimeoutMs',
  'connectTimeoutMs',
  'maxOutputChars',
  'maxToolsPerServer',
  'maxListPages',
] as const;

const SAMPLING_BOUNDS = [
  'maxTokens',
  'maxMessages',
  'maxRequestBytes',
  'maxRequestsPerWindow',
  'windowMs',
  'maxTokensPerConnection',
] as const;

/** {@link McpToolSourceOptions} with every bound given its default: what the parts of a source read. */
export type SourceSettings = McpToolSourceOptions & typeof DEFAULTS;

/** The options with their defaults, every bound checked to be a positive number. */
export function sourceSettings(options: McpToolSourceOptions): SourceSettings {
  const settings: SourceSettings = { ...DEFAULTS, ...definedOnly(options), config: options.config };
  if (!PROTOCOL_VERSIONS.includes(settings.protocolVersion))
    throw new McpConfigError(
      `protocolVersion must be one of ${PROTOCOL_VERSIONS.join(', ')}, got ${String(settings.protocolVersion).slice(0, 40)}`,
    );
  for (const key of BOUNDS) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < 1) throw new McpConfigError(`${key} must be a positive number, got ${String(value)}`);
  }
  // A NaN or negative sampling bound would let a server ask without end: refused here, not at its first request.
  const sampling = options.sampling ?? {};
  for (const key of SAMPLING_BOUNDS) {
    const value = (sampling as Partial<Record<(typeof SAMPLING_BOUNDS)[number], number>>)[key];
    if (value !== undefined && (!Number.isFinite(value) || value < 1))
      throw new McpConfigError(`sampling.${key} must be a positive number, got ${String(value)}`);
  }
  const poll = typeof options.tasks === 'object' ? options.tasks.maxPollIntervalMs : undefined;
  if (poll !== undefined && (!Number.isFinite(poll) || poll < 1))
    throw new McpConfigError(`tasks.maxPollIntervalMs must be a positive number, got ${String(poll)}`);
  return settings;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
