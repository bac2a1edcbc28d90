/**
 * The public types of the catalog: what `@Resource`, `@ResourceTemplate` and `@Prompt` classes
 * declare and return. They name nothing of the MCP SDK (as ../types.ts), so the declarations a
 * user compiles never reach the SDK's types.
 */
import type { ClassType } from '../../../decorators/types';
import type { ToolContext } from '../../../toolkit/context';
import type { ToolResult } from '../../../results/wire';

/** Options of {@link Resource}: one resource at a fixed URI. */
export interface ResourceOptions {
  /** The resource's URI (`file:///…`, `test://static-text`, `app://orders/today`). */
  uri: string;
  /** A short name for lists. Default: the class name. */
  name?: string;
  title?: string;
  description?: string;
  /** The MIME type of what `read` returns (`text/plain`, `image/png`…). */
  mimeType?: string;
}

/** Options of {@link ResourceTemplate}: resources whose URIs follow a pattern. */
export interface ResourceTemplateOptions {
  /**
   * An RFC 6570 URI template with simple `{name}` expressions (level 1): `app://orders/{id}`.
   * Each expression matches one path segment's worth of characters (no `/`).
   */
  uriTemplate: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /**
   * A DTO the template's parameters are validated into (class-validator, as tool arguments
   * are); without one, `read` gets the raw strings.
   */
  params?: ClassType;
}

/** Options of {@link Prompt}. */
export interface PromptOptions {
  /** Default: the class name in snake_case with a trailing `Prompt` dropped. */
  name?: string;
  title?: string;
  description?: string;
  /** A DTO of string fields: its properties are the prompt's arguments, validated as tool arguments are. */
  args?: ClassType;
}

/** A resource's content as `read` may return it: text, or bytes (sent base64). */
export type ResourceBody = string | Uint8Array | { text: string; mimeType?: string } | { blob: Uint8Array | string; mimeType?: string };

/** One content item of a read resource, as sent to the client. */
export type ResourceContents = { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string };

/** What a prompt message may carry. */
export type PromptContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ResourceContents };

/** One message of a prompt. */
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: PromptContent;
}

/**
 * What `get` may return: the messages, a single text (one user message), or both with a
 * description; or `inputRound(...)` to ask a 2026-07-28 client first (docs/mcp.md, "Input rounds").
 */
export type PromptBody = string | PromptMessage[] | { description?: string; messages: PromptMessage[] } | ToolResult;

/**
 * The context `read`, `get` and `complete` receive: the session's, as a tool's would be. A
 * prompt asked again after its input round (2026-07-28) reads the client's answers on
 * `mcp.inputResponses` and the state it gave on `mcp.requestState`, as a tool does.
 */
export type CatalogContext = ToolContext<{
  mcp?: { sessionId?: string; inputResponses?: Record<string, unknown>; requestState?: string };
}>;

/**
 * A class with `complete` offers completions for its arguments (a prompt's) or parameters (a
 * template's): given the argument's name and what the user typed so far (and the values of the
 * other arguments already chosen), the suggestions, best first. At most 100 are sent.
 */
export interface Completes {
  complete(argument: string, value: string, context: { arguments: Record<string, string> }): string[] | Promise<string[]>;
}
