/**
 * The public types of the MCP entry that name nothing of the SDK, in a file of their own: the
 * declarations a user's compiler reads from `toolnexus-ts/mcp` never reach the SDK's (and zod's)
 * types, so `skipLibCheck: false` without `esModuleInterop` still compiles, and quickly.
 */
import type { Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import type { ToolContext } from '../toolkit/context';
import type { TelemetryOption } from '../telemetry/options';
import type { Toolkit } from '../toolkit/toolkit';

/** What an MCP server serves: a Toolkit (suspensions kept in memory), or a ResumeCoordinator and its store. */
export type McpToolHost = Toolkit | ResumeCoordinator;

/** Options every transport of {@link serveMcp} shares. */
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
  /**
   * OpenTelemetry: a `tools/call {tool}` SERVER span per call, the child of the client's span
   * when the request's `_meta` carries its `traceparent`; by the global tracer provider unless
   * this picks another or turns it off.
   */
  telemetry?: TelemetryOption;
}

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
}

/** A tool context as the MCP server builds it. */
export type McpToolContext = ToolContext<{ mcp: McpCallInfo }>;
