import { toolOptionsOf } from '../decorators/tool.decorator';
import type { AnyClass, ApprovalPolicy, ClassType, ToolAnnotations, ToolOptions } from '../decorators/types';
import { DtoRuleError, InvalidArgumentError, ToolRegistrationError } from '../errors';
import { failure, isToolResult, pendingOf, sanitizeName, success } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { schemaForClass } from '../schema/generate';
import { onAbortOf, watchOf, type AbortWatch } from '../timing/abort-latch';
import type { JsonSchema } from '../schema/json-schema';
import { toAnthropicTools, toGeminiTools, toOpenAITools, type AnthropicTool, type GeminiTools, type OpenAITool } from './adapters';
import { approvalPolicyOf, approvalStep } from './approval';
import {
  boundedPlan,
  DEFAULT_ARGUMENT_LIMITS,
  handOut,
  planForClass,
  planForSchema,
  type ArgumentLimits,
  type ArgumentsPlan,
  type ParsedArguments,
} from './arguments';
import type { ToolContext } from './context';
import { isFunctionTool, type FunctionTool } from './define-tool';
import type { ToolkitHooks } from './hooks';
import { REDACTED, redactionPlanFor, redactWith, type RedactionPlan } from './redaction';
import { messageOf } from '../errors/message';
import type { TelemetryOption } from '../telemetry/options';
import { Telemetry } from '../telemetry/telemetry';
import { traceTool } from '../telemetry/tool';

/** Builds a tool class's instance; plug a DI container in here. Default: `new cls()`. */
export type ToolResolver = (cls: ClassType) => object;

/** Options of a {@link Toolkit}. */
export interface ToolkitOptions {
  resolver?: ToolResolver;
  /**
   * Deadline for calls whose context and tool set none. `Infinity` means none; anything
   * above 2^31 − 1 ms (about 24.8 days) is clamped to it, as are `ctx.timeout` and a tool's `timeoutMs`.
   */
  defaultTimeoutMs?: number;
  hooks?: ToolkitHooks;
  /**
   * Largest arguments a call may send, in bytes of JSON (default 1 MB). Checked before
   * anything is parsed into a DTO; larger arguments are an error result.
   */
  maxArgumentBytes?: number;
  /** Longest array, at any depth of the arguments (default 10,000), checked before validation walks it. */
  maxArrayItems?: number;
  /** How many validation failures an error result lists before "… and N more" (default 20). */
  maxErrorCount?: number;
  /**
   * OpenTelemetry: an `execute_tool {tool}` span per call and the tool-call counter, by the
   * global providers unless this picks others or turns them off (docs/observability.md).
   */
  telemetry?: TelemetryOption;
}

/** Anything `register` accepts: a `@Tool` class, an instance of one, or a `defineTool` object. */
export type Registrable = ClassType | object | FunctionTool;

/** A tool as the Toolkit holds it. */
export interface RegisteredTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly timeoutMs?: number;
  /** The approval calls need before `run`, when the tool declares one. */
  readonly approval?: ApprovalPolicy;
  /** The tool instance (or the `defineTool` object) whose `run` is called. */
  readonly instance: object;
  /** A human-readable name for UIs, when declared. */
  readonly title?: string;
  /** Behaviour hints for clients, when declared. */
  readonly annotations?: ToolAnnotations;
  /** The JSON Schema of what `run` returns, when the tool declares an output DTO (or schema). */
  readonly outputSchema?: JsonSchema;
  /** True when the tool declares that running a call again has no further effect (`@Tool({ idempotent: true })`). */
  readonly idempotent?: boolean;
}

interface Runnable {
  run(args: unknown, ctx?: ToolContext): unknown;
}

interface Entry extends RegisteredTool {
  readonly instance: Runnable;
  readonly plan: ArgumentsPlan;
  /** The arguments DTO, when the tool declares one: where `@Sensitive` marks are read. */
  readonly dto?: ClassType;
}

/**
 * Registers tools and dispatches calls by name. `execute` never rejects for anything the
 * model or the tool did: every such case becomes an error {@link ToolResult}.
 */
export class Toolkit {
  private readonly entries = new Map<string, Entry>();
  private readonly resolver: ToolResolver;
  private readonly defaultTimeoutMs?: number;
  private readonly hooks?: ToolkitHooks;
  private readonly hasResolver: boolean;
  private readonly limits: ArgumentLimits;
  /** Each DTO's redaction plan, built on its first `redact` (docs/operating.md, "Sensitive fields"). */
  private readonly redactionPlans = new Map<AnyClass, RedactionPlan | undefined>();
  private readonly changeListeners = new Set<() => void>();
  private readonly telemetry: Telemetry;
  /** The `traceparent` of the span of each suspended result this toolkit returned, for the store to keep. */
  private readonly suspendedSpans = new WeakMap<ToolResult, string>();

  constructor(options: ToolkitOptions = {}) {
    this.resolver = options.resolver ?? ((cls) => new cls());
    this.hasResolver = options.resolver !== undefined;
    const defaultTimeoutMs = options.defaultTimeoutMs;
    if (
      defaultTimeoutMs !== undefined &&
      (typeof defaultTimeoutMs !== 'number' || Number.isNaN(defaultTimeoutMs) || defaultTimeoutMs < 0)
    ) {
      throw new InvalidArgumentError(
        `defaultTimeoutMs must be a non-negative number of milliseconds (or Infinity for none), got ${String(defaultTimeoutMs)}`,
      );
    }
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.hooks = options.hooks;
    this.telemetry = new Telemetry(options.telemetry, 'Toolkit');
    this.limits = {
      maxArgumentBytes: limitOption('maxArgumentBytes', options.maxArgumentBytes, DEFAULT_ARGUMENT_LIMITS.maxArgumentBytes),
      maxArrayItems: limitOption('maxArrayItems', options.maxArrayItems, DEFAULT_ARGUMENT_LIMITS.maxArrayItems),
      maxErrorCount: limitOption('maxErrorCount', options.maxErrorCount, DEFAULT_ARGUMENT_LIMITS.maxErrorCount),
    };
  }

  /** Registers tools; throws {@link ToolRegistrationError} on a programmer error. Chainable. */
  register(...tools: Registrable[]): this {
    for (const tool of tools) this.add(this.toEntry(tool));
    if (tools.length > 0) this.changed();
    return this;
  }

  /** Removes a tool; true if it was there. */
  unregister(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.changed();
    return removed;
  }

  /**
   * Listens to registrations and removals (serveMcp tells its clients their tool list
   * changed); returns the function that stops listening.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener();
      } catch {
        // A listener that fails (a closed session) does not stop the registration or the others.
      }
    }
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  get(name: string): RegisteredTool | undefined {
    return this.entries.get(name);
  }

  tools(): RegisteredTool[] {
    return [...this.entries.values()];
  }

  toOpenAI(): OpenAITool[] {
    return toOpenAITools(this.tools());
  }

  toAnthropic(): AnthropicTool[] {
    return toAnthropicTools(this.tools());
  }

  toGemini(): [GeminiTools] {
    return toGeminiTools(this.tools());
  }

  /**
   * A JSON copy of a call's arguments fit to show: every DTO property marked `@Sensitive()`
   * (in nested `@ValidateNested()` DTOs and arrays of them too) reads `"[redacted]"`. It fails
   * closed: arguments of a tool not registered here, or that JSON cannot copy, are
   * `"[redacted]"` whole. Tools without a DTO (a raw `inputSchema`) mark nothing.
   */
  redact(name: string, args: unknown): unknown {
    const entry = this.entries.get(name);
    if (!entry) return REDACTED;
    return redactWith(entry.dto ? redactionPlanFor(entry.dto, this.redactionPlans) : undefined, args);
  }

  /**
   * The arguments a call of `name` would run with: parsed, cleaned and validated as
   * {@link execute} does it (one plan per tool), or why not; `undefined` for an unknown tool.
   * The value, passed straight to `execute`, is taken as it is, not validated a second time:
   * the coordinator stores what the tool was given (docs/design.md, "the path of a call").
   */
  async parseArguments(name: string, args: unknown): Promise<ParsedArguments | undefined> {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    try {
      const parsed = await entry.plan.parse(args);
      return parsed.ok ? { ok: true, value: handOut(parsed.value) } : parsed;
    } catch (error) {
      return { ok: false, problem: messageOf(error) };
    }
  }

  /**
   * Runs tool `name`. Without `ctx`, `run` is called with one argument; with it, with the
   * very object passed (a shallow copy with a deadline signal when a deadline applies).
   */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
  async execute<TState extends object = {}>(name: string, args?: unknown, ctx?: ToolContext<TState>): Promise<ToolResult> {
    const tracing = this.telemetry.active();
    if (tracing === undefined) return this.executeCall(name, args, ctx);
    const { result, traceparent } = await traceTool(
      tracing,
      name,
      this.entries.has(name),
      (ctx as { callId?: unknown } | undefined)?.callId,
      args,
      (tool, shown) => this.redact(tool, shown),
      () => this.executeCall(name, args, ctx),
    );
    if (traceparent !== undefined) this.suspendedSpans.set(result, traceparent);
    return result;
  }

  /**
   * The W3C `traceparent` of the `execute_tool` span that returned this suspended result, when
   * a tracer recorded it: the coordinator stores it with the suspension, so the span that
   * resolves it, maybe days later in another process, links back to it.
   */
  traceparentOf(result: ToolResult): string | undefined {
    return this.suspendedSpans.get(result);
  }

  private async executeCall(name: string, args: unknown, ctx: ToolContext | undefined): Promise<ToolResult> {
    const started = performance.now();
    const entry = this.entries.get(name);
    let seenArgs = args;
    let result: ToolResult;
    if (!entry) {
      result = failure(`unknown tool: ${name}`);
    } else {
      try {
        const parsed = await entry.plan.parse(args);
        if (!parsed.ok) {
          result = failure(`invalid arguments for ${name}: ${parsed.problem}`);
        } else {
          seenArgs = parsed.value;
          result = await this.dispatch(entry, parsed.value, ctx);
        }
      } catch (error) {
        result = failure(messageOf(error));
      }
    }
    return this.hooks ? this.finish(name, seenArgs, result, started) : result;
  }

  private async dispatch(entry: Entry, args: object, given: ToolContext | undefined): Promise<ToolResult> {
    if (watchOf(given)?.aborted) return failure(`${entry.name} cancelled`);
    let ctx = given;
    if (entry.approval) {
      const step = await approvalStep(entry.name, entry.approval, args, ctx);
      if ('result' in step) return step.result;
      ctx = step.run;
    }
    const guard = await this.hooks?.beforeTool?.({ name: entry.name, args, ctx });
    if (guard)
      return isToolResult(guard.result)
        ? guard.result
        : failure(`the beforeTool hook of ${entry.name} returned { result } without a ToolResult`);
    const timeoutMs = deadlineMs(ctx?.timeout ?? entry.timeoutMs ?? this.defaultTimeoutMs);
    const watch = watchOf(ctx);
    if (timeoutMs === undefined && watch === undefined) return invoke(entry, args, ctx);
    return this.guarded(entry, args, ctx, timeoutMs, watch);
  }

  /**
   * Races `run` against its deadline and the caller's cancellation. One AbortController per
   * call carries both to `run`; the listener on the caller's (possibly long-lived) signal and
   * the timer are removed in `finally`, so nothing is retained per call (unlike
   * `AbortSignal.any` on Node 20, whose sources keep every combined signal).
   */
  private async guarded(
    entry: Entry,
    args: object,
    ctx: ToolContext | undefined,
    timeoutMs: number | undefined,
    watch: AbortWatch | undefined,
  ): Promise<ToolResult> {
    let callCtx = ctx;
    let timer: NodeJS.Timeout | undefined;
    let unwatch: (() => void) | undefined;
    const stops: Array<Promise<ToolResult>> = [];
    const call = timeoutMs === undefined ? undefined : new AbortController();
    if (call) {
      callCtx = { ...ctx, signal: call.signal, timeout: timeoutMs };
      stops.push(
        new Promise((resolve) => {
          timer = setTimeout(() => {
            call.abort(new Error(`${entry.name} timed out after ${timeoutMs} ms`));
            resolve(failure(`${entry.name} timed out after ${timeoutMs} ms`));
          }, timeoutMs);
        }),
      );
    }
    if (watch) {
      stops.push(
        new Promise((resolve) => {
          unwatch = onAbortOf(watch, (reason) => {
            call?.abort(reason);
            resolve(failure(`${entry.name} cancelled`));
          });
        }),
      );
    }
    try {
      return await Promise.race([invoke(entry, args, callCtx), ...stops]);
    } finally {
      if (timer) clearTimeout(timer);
      unwatch?.();
    }
  }

  private async finish(name: string, args: unknown, result: ToolResult, started: number): Promise<ToolResult> {
    const hooks = this.hooks as ToolkitHooks;
    let final = result;
    if (hooks.afterTool) {
      try {
        const replaced: unknown = await hooks.afterTool({ name, args, result, ms: performance.now() - started });
        if (replaced !== undefined && replaced !== null)
          final = isToolResult(replaced) ? replaced : failure(`the afterTool hook of ${name} returned something that is not a ToolResult`);
      } catch (error) {
        final = failure(messageOf(error));
      }
    }
    if (hooks.onMetric) {
      // A metric sink that throws must not change (or reject) the call's result.
      try {
        const isPending = pendingOf(final) !== undefined;
        hooks.onMetric({
          event: 'tool',
          tool: name,
          isError: final.isError && !isPending,
          pending: isPending,
          ms: performance.now() - started,
        });
      } catch {
        // dropped: the result stands
      }
    }
    return final;
  }

  private add(entry: Entry): void {
    if (this.entries.has(entry.name)) throw new ToolRegistrationError(`a tool named "${entry.name}" is already registered`);
    this.entries.set(entry.name, entry);
  }

  private toEntry(tool: Registrable): Entry {
    if (isFunctionTool(tool)) {
      return makeEntry(tool, tool.name, tool, this.limits);
    }
    if (typeof tool === 'function') {
      const options = toolOptionsOf(tool as ClassType);
      if (!options) throw new ToolRegistrationError(`class ${tool.name || '(anonymous)'} has no @Tool decorator`);
      if (!this.hasResolver) {
        const needed = constructorParameters(tool as ClassType);
        if (needed > 0) {
          const name = tool.name || '(anonymous)';
          throw new ToolRegistrationError(
            `class ${name} takes ${needed} constructor argument${needed === 1 ? '' : 's'} and this Toolkit has no resolver, so they would be undefined: ` +
              `pass new Toolkit({ resolver: (cls) => ... }) to build it (a DI container, or a function that supplies them), or register an instance (new ${name}(...))`,
          );
        }
      }
      const instance = this.resolver(tool as ClassType);
      return makeEntry(options, defaultToolName(tool.name), instance, this.limits);
    }
    if (typeof tool === 'object' && tool !== null) {
      const options = toolOptionsOf(tool.constructor as ClassType);
      if (!options) {
        throw new ToolRegistrationError(
          `cannot register ${tool.constructor?.name ?? 'value'}: not a @Tool class, an instance of one, or a defineTool object`,
        );
      }
      return makeEntry(options, defaultToolName(tool.constructor.name), tool, this.limits);
    }
    throw new ToolRegistrationError(`cannot register ${String(tool)}: not a @Tool class, an instance of one, or a defineTool object`);
  }
}

function makeEntry(options: ToolOptions | FunctionTool, fallbackName: string, instance: object, limits: ArgumentLimits): Entry {
  const name = sanitizeName(options.name ?? fallbackName);
  if (!name) throw new ToolRegistrationError('a tool needs a name');
  if (typeof options.description !== 'string' || options.description === '') {
    throw new ToolRegistrationError(`tool "${name}" needs a description`);
  }
  if (typeof (instance as Partial<Runnable>).run !== 'function') throw new ToolRegistrationError(`tool "${name}" has no run method`);
  if (options.args && options.inputSchema) throw new ToolRegistrationError(`tool "${name}" declares both args and inputSchema`);
  let plan: ArgumentsPlan;
  try {
    plan = boundedPlan(options.args ? planForClass(options.args) : planForSchema(options.inputSchema), limits);
  } catch (error) {
    // The tool's name goes in front; a DtoRuleError keeps its class, code and property.
    if (error instanceof DtoRuleError) throw new DtoRuleError(error.property, `tool "${name}": ${error.message}`, { cause: error });
    if (error instanceof ToolRegistrationError) throw new ToolRegistrationError(`tool "${name}": ${error.message}`, { cause: error });
    throw error;
  }
  const entry: Entry = {
    name,
    description: options.description,
    inputSchema: plan.schema,
    timeoutMs: options.timeoutMs,
    approval: approvalPolicyOf(options.approval),
    instance: instance as Runnable,
    plan,
    ...(options.args ? { dto: options.args } : {}),
  };
  // A tool that declares none of the descriptive options keeps exactly the entry shape it always had.
  const described = describedBy(name, options);
  if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean')
    throw new ToolRegistrationError(`tool "${name}": idempotent must be a boolean`);
  if (options.idempotent === true) Object.assign(described, { idempotent: true });
  return Object.keys(described).length === 0 ? entry : { ...entry, ...described };
}

/** The optional, descriptive options (title, annotations, output schema), only those declared. */
function describedBy(
  name: string,
  options: ToolOptions | FunctionTool,
): { title?: string; annotations?: ToolAnnotations; outputSchema?: JsonSchema } {
  const described: { title?: string; annotations?: ToolAnnotations; outputSchema?: JsonSchema } = {};
  if (options.title !== undefined) {
    if (typeof options.title !== 'string') throw new ToolRegistrationError(`tool "${name}": title must be a string`);
    described.title = options.title;
  }
  if (options.annotations !== undefined) {
    const annotations = options.annotations as unknown;
    if (typeof annotations !== 'object' || annotations === null)
      throw new ToolRegistrationError(`tool "${name}": annotations must be an object`);
    for (const [key, value] of Object.entries(annotations)) {
      if (!ANNOTATION_KEYS.has(key)) throw new ToolRegistrationError(`tool "${name}": unknown annotation ${key}`);
      if (typeof value !== 'boolean') throw new ToolRegistrationError(`tool "${name}": annotation ${key} must be a boolean`);
    }
    described.annotations = { ...(annotations as ToolAnnotations) };
  }
  const rawOutput = 'outputSchema' in options ? options.outputSchema : undefined;
  if (options.output !== undefined && rawOutput !== undefined)
    throw new ToolRegistrationError(`tool "${name}" declares both output and outputSchema`);
  if (options.output !== undefined) {
    if (typeof options.output !== 'function') throw new ToolRegistrationError(`tool "${name}": output must be a DTO class`);
    described.outputSchema = schemaForClass(options.output);
  } else if (rawOutput !== undefined) {
    described.outputSchema = rawOutput;
  }
  return described;
}

const ANNOTATION_KEYS = new Set(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']);

/** A limit option: a positive number (`Infinity` for none), else the default. */
function limitOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 1)
    throw new InvalidArgumentError(`${name} must be a number of at least 1, got ${String(value)}`);
  return value;
}

/**
 * How many parameters the constructor `new cls()` would run declares. A class with no
 * constructor of its own runs its parent's: with emitDecoratorMetadata, TypeScript records
 * `design:paramtypes` on every decorated class that declares one, so a class without it
 * and without parameters is followed up to the parent whose constructor actually runs.
 */
function constructorParameters(cls: ClassType): number {
  let current: unknown = cls;
  while (typeof current === 'function' && current !== Function.prototype) {
    const declared = current.length > 0 || Reflect.getOwnMetadata('design:paramtypes', current) !== undefined;
    if (declared) return current.length;
    current = Object.getPrototypeOf(current);
  }
  return 0;
}

async function invoke(entry: Entry, args: object, ctx: ToolContext | undefined): Promise<ToolResult> {
  const value: unknown = await (ctx === undefined ? entry.instance.run(args) : entry.instance.run(args, ctx));
  return toResult(value);
}

/** What `run` returned, as a ToolResult. */
export function toResult(value: unknown): ToolResult {
  if (isToolResult(value)) return value;
  if (value === undefined) return success('');
  return success(value);
}

/** The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The deadline a call gets from a configured timeout: `undefined` and `Infinity` mean none;
 * anything longer than {@link MAX_TIMEOUT_MS} is clamped to it (a timer cannot wait longer).
 */
function deadlineMs(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined || timeoutMs === Number.POSITIVE_INFINITY) return undefined;
  return timeoutMs > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : timeoutMs;
}

/** `GetWeatherTool` → `get_weather`. */
export function defaultToolName(className: string): string {
  return className
    .replace(/Tool$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}
