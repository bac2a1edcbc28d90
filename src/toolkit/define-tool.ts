import type { StandardOutput, StandardSchemaWithJson } from '../decorators/standard-schema';
import type { ApprovalByArgs, ApprovalPolicy, ClassType, ToolAnnotations } from '../decorators/types';
import type { JsonSchema } from '../results/json-schema';
import type { ToolContext } from './context';

/** Marks objects made by {@link defineTool}, so the Toolkit registers them as they are. */
export const FUNCTION_TOOL = Symbol.for('toolnexus:function-tool');

interface FunctionToolBase {
  name: string;
  description: string;
  timeoutMs?: number;
  /** As `@Tool({ approval })`: calls need an approval before `run`. */
  approval?: boolean | ApprovalPolicy | ApprovalByArgs;
  /** As `@Tool({ title })`. */
  title?: string;
  /** As `@Tool({ idempotent })`: running a call again has no further effect. */
  idempotent?: boolean;
  /** As `@Tool({ concurrency })`: the most calls of this tool running at once through its Toolkit. */
  concurrency?: number;
  /** As `@Tool({ annotations })`. */
  annotations?: ToolAnnotations;
  /** As `@Tool({ output })`: the DTO class describing what `run` returns. */
  output?: ClassType;
  /** A raw JSON Schema of what `run` returns, for tools without an output DTO (an MCP server's tool, say). */
  outputSchema?: JsonSchema;
}

/** A tool whose arguments are a DTO class. */
export interface DtoFunctionToolSpec<TArgs extends object> extends FunctionToolBase {
  args: ClassType<TArgs>;
  inputSchema?: undefined;
  run(args: TArgs, ctx?: ToolContext): unknown;
}

/**
 * A tool whose arguments are any Standard Schema with JSON Schema (zod 4, arktype, valibot with
 * `toStandardJsonSchema`): the model is shown its `jsonSchema.input`, and `run` gets what its
 * `validate` gives (docs/standard-schema.md).
 */
export interface StandardFunctionToolSpec<S extends StandardSchemaWithJson> extends FunctionToolBase {
  args: S;
  inputSchema?: undefined;
  /** The top-level argument names whose values are secrets, redacted wherever a call is shown. */
  sensitive?: readonly string[];
  run(args: StandardOutput<S>, ctx?: ToolContext): unknown;
}

/** A tool described by a raw JSON Schema (or taking no arguments). */
export interface SchemaFunctionToolSpec extends FunctionToolBase {
  args?: undefined;
  inputSchema?: JsonSchema;
  run(args: Record<string, unknown>, ctx?: ToolContext): unknown;
}

/** What {@link defineTool} returns: register it on a Toolkit as it is. */
export type FunctionTool = (DtoFunctionToolSpec<object> | StandardFunctionToolSpec<StandardSchemaWithJson> | SchemaFunctionToolSpec) & {
  readonly [FUNCTION_TOOL]: true;
};

/**
 * Makes a tool from a plain function, for quick cases.
 *
 * @example
 * ```ts
 * const add = defineTool({ name: 'add', description: 'Add two numbers', args: AddArgs,
 *   run: ({ a, b }) => a + b })
 * ```
 */
export function defineTool<TArgs extends object>(spec: DtoFunctionToolSpec<TArgs>): FunctionTool;
export function defineTool<S extends StandardSchemaWithJson>(spec: StandardFunctionToolSpec<S>): FunctionTool;
export function defineTool(spec: SchemaFunctionToolSpec): FunctionTool;
export function defineTool(
  spec: DtoFunctionToolSpec<object> | StandardFunctionToolSpec<StandardSchemaWithJson> | SchemaFunctionToolSpec,
): FunctionTool {
  return { ...spec, [FUNCTION_TOOL]: true };
}

/** True for objects made by {@link defineTool}. */
export function isFunctionTool(value: unknown): value is FunctionTool {
  return typeof value === 'object' && value !== null && (value as FunctionTool)[FUNCTION_TOOL] === true;
}
