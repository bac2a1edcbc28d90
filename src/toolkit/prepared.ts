import { messageOf } from '../errors/message';
import type { ToolResult } from '../results/wire';
import type { RegisteredTool } from './entry';

/** A call's arguments as a store keeps them (their JSON text), or why JSON cannot carry them (a BigInt, a cycle). */
export type StoredArguments = { ok: true; json: string } | { ok: false; problem: string };

/**
 * A call the Toolkit parsed and validated ({@link Toolkit.prepare}), ready for
 * {@link Toolkit.run}: the value carries the fact that it was checked, so nothing on the path
 * of a call parses it a second time (docs/design.md, "The path of a call").
 */
export class PreparedCall {
  readonly ok = true;
  private storedForm?: StoredArguments;

  /** Made by the Toolkit only: `tool` is the entry `run` checks is still the one registered. */
  constructor(
    /** The tool that runs, as the Toolkit held it when the call was prepared. */
    readonly tool: RegisteredTool,
    /** What `run` receives: the DTO instance (unknown properties stripped), or the cleaned object of a schema tool. */
    readonly args: object,
  ) {}

  /** The tool's name. */
  get name(): string {
    return this.tool.name;
  }

  /**
   * The arguments as a store keeps them, taken the first time it is read: read it before
   * the call runs, since the tool is given `args` itself and may change them. Only a caller
   * that may record the call reads it, so a plain `execute` never pays for the JSON.
   */
  get stored(): StoredArguments {
    if (this.storedForm === undefined) {
      try {
        this.storedForm = { ok: true, json: JSON.stringify(this.args) };
      } catch (error) {
        this.storedForm = { ok: false, problem: messageOf(error) };
      }
    }
    return this.storedForm;
  }
}

/**
 * A call {@link Toolkit.prepare} refused: no tool of that name, or arguments that do not
 * parse or validate. {@link Toolkit.run} reports it as `execute` would (hooks, metrics, span)
 * and returns its `result`.
 */
export interface RefusedCall {
  readonly ok: false;
  /** The name the call asked for. */
  readonly name: string;
  /** The arguments as given (the model's text, or an object). */
  readonly raw: unknown;
  /** The error result: `unknown tool: NAME`, `invalid arguments for NAME: ...`, or what a plan threw. */
  readonly result: ToolResult;
  /** Why, without the tool's name in front: the arguments' problem, or `unknown tool`. */
  readonly problem: string;
}

/** What {@link Toolkit.prepare} makes of a call. */
export type Preparation = PreparedCall | RefusedCall;

/**
 * A call's result and, when a tracer recorded the call's span and the call suspended, that
 * span's W3C `traceparent`: a store keeps it with the suspension so the span that resolves
 * it, maybe days later in another process, links back.
 */
export interface RanCall {
  result: ToolResult;
  traceparent?: string;
}
