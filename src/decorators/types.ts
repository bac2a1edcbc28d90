import type { JsonSchema } from '../schema/json-schema';

/**
 * A class that can be constructed with `new` (the DTO or tool class itself). Its parameter
 * list is `any[]` because that is the constructor type tsyringe, InversifyJS and
 * class-transformer accept: with `unknown[]` or `never[]`, a resolver could not hand the
 * class to a container. The parameters are the resolver's business, never the Toolkit's.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ClassType<T = object> = new (...args: any[]) => T;

/** An abstract or concrete class; used where the class is only inspected, never built. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyClass<T = object> = abstract new (...args: any[]) => T;

/** Options of {@link Tool}. */
export interface ToolOptions {
  /** Defaults to the class name in snake_case with a trailing `Tool` dropped. Sanitized. */
  name?: string;
  /** What the tool does, for the model. Required. */
  description: string;
  /** The arguments DTO: validated with class-validator and the source of the JSON Schema. */
  args?: ClassType;
  /** A raw JSON Schema for tools without a DTO. */
  inputSchema?: JsonSchema;
  /** Per-tool deadline in milliseconds. */
  timeoutMs?: number;
}
