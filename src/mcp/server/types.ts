/**
 * The public types of the MCP server that name nothing of the SDK, in a file of their own: the
 * declarations a user's compiler reads from `toolnexus-ts/mcp` never reach the SDK's (and zod's)
 * types, so `skipLibCheck: false` without `esModuleInterop` still compiles, and quickly.
 */
import type { Principal } from '../../suspension/audit';
import type { RequestStateKeys } from './request-state';
import type { McpTaskSupport } from './tasks';
import type { McpCatalog } from './catalog/catalog';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { ToolContext } from '../../toolkit/context';
import type { Skills } from '../../skills/skills';
import type { TelemetryOption } from '../../telemetry/options';
import type { Toolkit } from '../../toolkit/toolkit';

/** What an MCP server serves: a Toolkit (suspensions kept in memory), or a ResumeCoordinator and its store. */
export type McpToolHost = Toolkit | ResumeCoordinator;

/**
 * Options every transport of {@link serveMcp} shares: stdio and HTTP both serve 2025-11-25
 * (sessions, elicitation) and 2026-07-28 (MRTR round trips, tasks) clients.
 */
export interface McpServerOptions {
  /** The server's name in the `initialize` answer. Default `toolnexus`. */
  name?: string;
  /** The server's version in the `initialize` answer. Default `0.0.0`. */
  version?: string;
  /** Guidance for the client's model, sent in the `initialize` answer. */
  instructions?: string;
  /**
   * How long an elicitation may wait for the client's user, in ms (default 600 000). When it
   * runs out the suspension stays in the store, to be answered out of band.
   */
  elicitationTimeoutMs?: number;
  /** Resources, resource templates and prompts served beside the tools (docs/mcp.md, "The catalog"). */
  catalog?: McpCatalog;
  /**
   * Skills served through the Skills extension (`loadSkills` of `toolnexus-ts/skills`):
   * `skills/list`, `skills/get` and each file as a `skill://` resource with its SHA-256 digest,
   * to clients of both revisions (docs/mcp.md, "Skills over MCP").
   */
  skills?: Skills;
  /** Bounds on what a tool may ask the client's model through `ctx.sample` (docs/mcp.md, "Sampling"). */
  sampling?: McpSamplingLimits;
  /**
   * OpenTelemetry: a `tools/call {tool}` SERVER span per call, the child of the client's span
   * when the request's `_meta` carries its `traceparent`; by the global tracer provider unless
   * this picks another or turns it off.
   */
  telemetry?: TelemetryOption;
  /**
   * Serve the approval card, an MCP App (docs/mcp.md, "The approval card"): every tool that
   * declares an approval carries `_meta.ui.resourceUri` to the `ui://toolnexus/approval-card`
   * HTML resource, which MCP Apps hosts render; the card reads and answers the waiting call
   * through two app-only tools, as the request's principal, judged by the answer policy.
   * Default off.
   */
  approvalCard?: boolean;
  /**
   * How long a call's outcome answers a repeat of its idempotency key (`_meta`
   * `io.toolnexus/idempotency-key`, docs/mcp.md, "Idempotency keys"), per principal: a repeat
   * within it runs nothing and gets the first outcome, over any connection or process sharing
   * the store. Default a day.
   */
  idempotencyRetentionMs?: number;
  /**
   * How long a running keyed call holds its idempotency key without a renewal: the call renews
   * it every third of this for as long as it runs, so a repeat is run again only after the
   * holder's process died (or stalled) this long. Default ten minutes.
   */
  idempotencyLeaseMs?: number;
  /**
   * The keys `requestState` is sealed with (HMAC-SHA256, each at least 32 bytes) for
   * 2026-07-28 clients (docs/mcp.md, "A suspended call over MCP"): the first signs, every one
   * opens. Give every server process on one store the same list, so a retry may reach any of
   * them. To rotate: put the new key first, and drop the old one once `requestStateTtlMs` has
   * passed. Default: a random key of this server (a retry then must reach this process).
   */
  requestStateKeys?: RequestStateKeys;
  /** How long a `requestState` is good for, in ms (default 3 600 000; never past the call's `expiresAt`). */
  requestStateTtlMs?: number;
  /**
   * The page where a call is answered by someone other than the caller (the inbox), given to a
   * 2026-07-28 client as a URL-mode elicitation when the answer policy says another person
   * must answer: `(suspensionId) => url`. Without it that client is told only to retry later.
   */
  inboxUrl?: (suspensionId: string) => string;
  /**
   * Whether a call may become a task for a 2026-07-28 client that declared the tasks extension
   * (SEP-2663; docs/mcp.md, "Tasks"): when it suspends, or is still running after `taskAfterMs`.
   * One setting for every tool, or one per tool name (`allowed` for the rest). `never`: MRTR
   * round trips only; `always`: a client without the extension is refused (`-32021`). Default `allowed`.
   */
  tasks?: McpTaskSupport | Record<string, McpTaskSupport>;
  /**
   * How long a call of a client that takes tasks may run before it answers a `working` task
   * instead (SEP-2663's server-directed task creation; docs/mcp.md, "Tasks"), in ms. A call that
   * ends sooner answers its result. Default 1000.
   */
  taskAfterMs?: number;
}

/** Bounds on `ctx.sample`: what one request may ask of the client's model. */
export interface McpSamplingLimits {
  /** Largest `maxTokens` a request may ask (default 4096); a larger one is refused before it is sent. */
  maxTokens?: number;
  /** Most messages in one request (default 100). */
  maxMessages?: number;
  /** Largest request, in bytes of its JSON (default 1 MiB). */
  maxRequestBytes?: number;
  /** How long the client (and its user, who may be asked to approve) may take, in ms (default 120 000). */
  timeoutMs?: number;
}

/** One message of a sampling request or its answer: text, or an image or audio clip (base64). */
export type McpSamplingContent =
  { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'audio'; data: string; mimeType: string };

/** What a served tool asks the client's model with `ctx.sample` (MCP `sampling/createMessage`). */
export interface McpSampleRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: McpSamplingContent }>;
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  /** Hints for the client's choice of model (`{ hints: [{ name: 'claude' }], intelligencePriority: 0.8 }`). */
  modelPreferences?: {
    hints?: Array<{ name?: string }>;
    costPriority?: number;
    speedPriority?: number;
    intelligencePriority?: number;
  };
}

/** The client model's answer to a sampling request. */
export interface McpSampleResult {
  role: 'user' | 'assistant';
  content: McpSamplingContent;
  /** The model the client used. */
  model: string;
  stopReason?: string;
}

/**
 * Asks the client's model; present on `ctx.sample` only when a 2025-11-25 client declared the
 * sampling capability.
 *
 * @deprecated Sampling is deprecated as of MCP 2026-07-28 (SEP-2577) and absent for those
 * clients: call a model of your own (docs/mcp.md, "Two eras").
 */
export type McpSample = (request: McpSampleRequest) => Promise<McpSampleResult>;

/**
 * What the MCP server adds to a tool's context, on `ctx.mcp`: which session the call belongs
 * to, and (over HTTP with resumability) a way to close the call's event stream early so the
 * client polls for the rest.
 */
export interface McpCallInfo {
  /** The Streamable HTTP session id; absent over stdio. */
  sessionId?: string;
  /** Closes this call's SSE stream; the client reconnects and the result is replayed. Absent when not possible. */
  closeStream?: () => void;
  /** Who opened the session, when serveMcp over HTTP has `authorize`; answers given in it are recorded as theirs. */
  principal?: Principal;
  /** Which revision the request speaks: `2025-11-25` (and earlier, with sessions) or `2026-07-28` (stateless). */
  protocol?: 'legacy' | 'modern';
  /** 2026-07-28: the capabilities the client declared in this request's `_meta` (what it can be asked). */
  clientCapabilities?: Record<string, unknown>;
  /**
   * 2026-07-28: the answers a retry carries to the tool's last input round (`inputRound`),
   * keyed as the tool named its requests. Sent by the client and not checked: validate them.
   */
  inputResponses?: Record<string, unknown>;
  /** 2026-07-28: the state the tool gave its last input round, verified unchanged (sealed by serveMcp). */
  requestState?: string;
}

/** A tool context as the MCP server builds it. */
export type McpToolContext = ToolContext<{ mcp: McpCallInfo; sample?: McpSample }>;
