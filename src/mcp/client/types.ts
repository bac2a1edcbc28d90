/**
 * The public types of the MCP client that name nothing of the SDK, in a file of their own (as
 * the server's, ../server/types.ts): the declarations a user's compiler reads from
 * `toolnexus-ts/mcp` never reach the SDK's (and zod's) types.
 */
import type { ChatModel } from '../../models/types';
import type { Clock } from '../../timing/clock';

/** A server's sampling request as the host's policy sees it: text only, cut for display. */
export interface McpSamplingRequestInfo {
  server: string;
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  systemPrompt?: string;
  maxTokens: number;
}

/**
 * How {@link McpToolSource} answers a server's `sampling/createMessage`: through `model`, and
 * only when `approve` says yes (`'ask'` asks a person through the source's `waitFor`, as an
 * `approval` request). Without this option the client declares no sampling capability.
 */
export interface McpSamplingOptions {
  /** The host's model the request goes to (any ChatModel: OpenAI, Anthropic, an AI SDK model...). */
  model: ChatModel;
  /** Decides per request; a refusal is answered to the server as the user's rejection. */
  approve: (request: McpSamplingRequestInfo) => boolean | 'ask' | Promise<boolean | 'ask'>;
  /** Largest `maxTokens` a server may ask (default 4096); past it the request is refused before the policy sees it. */
  maxTokens?: number;
  /** Most messages in one request (default 100). */
  maxMessages?: number;
  /** Largest request in bytes of JSON (default 1 MiB). */
  maxRequestBytes?: number;
  /**
   * Most sampling requests one server may make in `windowMs` (default 10 per 60 000 ms);
   * past it a request is refused before the policy or the model sees it.
   */
  maxRequestsPerWindow?: number;
  /** The sliding window of `maxRequestsPerWindow`, in ms (default 60 000). */
  windowMs?: number;
  /**
   * Most tokens (input and output, as the model reports them) one server's requests may spend
   * over one connection (default 50 000). A request whose `maxTokens` would go past what is
   * left is refused before the policy sees it; a call that reports no usage counts as its
   * `maxTokens`.
   */
  maxTokensPerConnection?: number;
  /** Where the window's time is read from (default the system's). */
  clock?: Clock;
}

/**
 * How {@link McpToolSource} follows a remote server's tasks (the tasks extension,
 * `io.modelcontextprotocol/tasks`, SEP-2663; docs/mcp.md, "Tasks, as a client").
 */
export interface McpTaskOptions {
  /**
   * The longest wait between two `tasks/get` polls, in ms (default 30 000): a server's
   * `pollIntervalMs` above it is shortened, and the backoff used when it suggests none stops there.
   */
  maxPollIntervalMs?: number;
  /** Where the waits between polls and the call's deadline are read from (default the system's). */
  clock?: Clock;
}

/** A resource of a connected server, as it listed it. */
export interface McpServerResource {
  server: string;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A prompt of a connected server, as it listed it. */
export interface McpServerPrompt {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
}

/** How connecting went, per server: one server failing leaves the others working. */
export interface McpConnectReport {
  connected: Array<{ server: string; tools: string[] }>;
  failed: Array<{ server: string; error: Error }>;
  /** Servers that need a person to log in at `url` first; `finishLogin(server, code)` connects them. */
  needsLogin: Array<{ server: string; url: string }>;
  /** Servers the config turns off (`"enabled": false` or `"disabled": true`): never started. */
  disabled: string[];
}
