/**
 * The root entry, `toolnexus-ts`: the tools layer, what a tool author needs. Declaring tools
 * (`@Tool`, `@Describe`, `@Sensitive`, `defineTool`), dispatching them (`Toolkit`), the
 * results they return and the answers they read, and the errors a tool author throws or
 * catches. Every other name is in the entry of the layer that owns it (`toolnexus-ts/agents`,
 * `/suspension`, `/models`, `/memory`, `/sqlite`, `/postgres`, `/webhooks`, ...; README,
 * "Entries"). test/package/exports.test.ts pins this list and keeps it small (at most 44
 * names, 25 of them values); importing it loads the tools layer's folders only.
 */
import 'reflect-metadata';

// Declaring tools.
export { Tool, Describe, Sensitive } from './decorators';
export type { ToolOptions, ApprovalPolicy, ApprovalByArgs, DeclaredApproval, ToolAnnotations, ClassType } from './decorators';
export { schemaForClass } from './schema';
export type { JsonSchema } from './schema';
export { Toolkit, defineTool, answerFor, REDACTED, standardSchemaOf } from './toolkit';
export type { ToolkitOptions, ToolkitHooks, ToolMetricEvent, ToolContext, FunctionTool } from './toolkit';

// What a tool returns, and the answer it reads when a suspended call is replayed.
export { success, failure, pending, authRequired, pendingOf, isToolResult, sanitizeName, withContent, contentOf } from './results';
export type { ToolResult, PendingRequest, PendingRequestInit, Answer, AnswerReason, ToolContent } from './results';

// The errors of the tools layer. Every class carries a stable `code` (src/errors); the other
// layers' errors are exported by their entries.
export { ToolnexusError, ToolRegistrationError, DtoRuleError, StandardSchemaError, InvalidArgumentError, MissingPeerError } from './errors';

// Telemetry: the `telemetry` option of a Toolkit (and of the other layers' components).
export { SEMCONV_VERSION } from './telemetry';
export type { TelemetryOptions } from './telemetry';
