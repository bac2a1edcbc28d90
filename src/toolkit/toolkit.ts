import type { StandardSchemaWithJson } from '../decorators/standard-schema';
import type { AnyClass } from '../decorators/types';
import { InvalidArgumentError, ToolRegistrationError } from '../errors';
import { messageOf } from '../errors/message';
import { failure } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import type { TelemetryOption } from '../telemetry/options';
import { Telemetry, type Tracing } from '../telemetry/telemetry';
import { traceTool } from '../telemetry/tool';
import { toAnthropicTools, toGeminiTools, toOpenAITools, type AnthropicTool, type GeminiTools, type OpenAITool } from './adapters';
import type { ParsedArguments } from './arguments';
import type { ToolContext } from './context';
import { dispatch, type DispatchSettings } from './dispatch';
import { entryOf, type Entry, type Registrable, type RegisteredTool, type ToolResolver } from './entry';
import { afterCall, type ToolkitHooks } from './hooks';
import { DEFAULT_ARGUMENT_LIMITS, type ArgumentLimits } from './plain-copy';
import { PreparedCall, type Preparation, type RanCall, type RefusedCall } from './prepared';
import { standardSchemaOfPlan } from './standard-schema';
import { REDACTED, redactionPlanFor, redactWith, showCalls, type RedactionPlan } from './redaction';

export { defaultToolName } from './entry';
export type { Registrable, RegisteredTool, ToolResolver } from './entry';
export { MAX_TIMEOUT_MS, toResult } from './dispatch';
export { PreparedCall } from './prepared';
export type { Preparation, RanCall, RefusedCall, StoredArguments } from './prepared';

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

/**
 * Registers tools and dispatches calls by name. `execute` never rejects for anything the
 * model or the tool did: every such case becomes an error {@link ToolResult}.
 */
export class Toolkit {
  private readonly entries = new Map<string, Entry>();
  private readonly resolver?: ToolResolver;
  private readonly hooks?: ToolkitHooks;
  /** What running a call needs: the hooks and the default deadline. */
  private readonly settings: DispatchSettings;
  private readonly limits: ArgumentLimits;
  /** Each DTO's redaction plan, built on its first `redact` (docs/operating.md, "Sensitive fields"). */
  private readonly redactionPlans = new Map<AnyClass, RedactionPlan | undefined>();
  private readonly changeListeners = new Set<() => void>();
  private readonly telemetry: Telemetry;

  constructor(options: ToolkitOptions = {}) {
    this.resolver = options.resolver;
    const defaultTimeoutMs = options.defaultTimeoutMs;
    if (
      defaultTimeoutMs !== undefined &&
      (typeof defaultTimeoutMs !== 'number' || Number.isNaN(defaultTimeoutMs) || defaultTimeoutMs < 0)
    ) {
      throw new InvalidArgumentError(
        `defaultTimeoutMs must be a non-negative number of milliseconds (or Infinity for none), got ${String(defaultTimeoutMs)}`,
      );
    }
    this.hooks = options.hooks;
    this.settings = { hooks: options.hooks, defaultTimeoutMs };
    this.telemetry = new Telemetry(options.telemetry, 'Toolkit');
    this.limits = {
      maxArgumentBytes: limitOption('maxArgumentBytes', options.maxArgumentBytes, DEFAULT_ARGUMENT_LIMITS.maxArgumentBytes),
      maxArrayItems: limitOption('maxArrayItems', options.maxArrayItems, DEFAULT_ARGUMENT_LIMITS.maxArrayItems),
      maxErrorCount: limitOption('maxErrorCount', options.maxErrorCount, DEFAULT_ARGUMENT_LIMITS.maxErrorCount),
    };
  }

  /** Registers tools; throws {@link ToolRegistrationError} on a programmer error. Chainable. */
  register(...tools: Registrable[]): this {
    for (const tool of tools) this.add(entryOf(tool, this.resolver, this.limits));
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
   * `"[redacted]"` whole. A Standard Schema tool's `sensitive` keys read `"[redacted]"` too;
   * tools with a raw `inputSchema` mark nothing.
   */
  redact(name: string, args: unknown): unknown {
    const entry = this.entries.get(name);
    if (!entry) return REDACTED;
    return redactWith(entry.dto ? redactionPlanFor(entry.dto, this.redactionPlans) : entry.redaction, args);
  }

  /**
   * The arguments a call of `name` would run with: parsed, cleaned and validated as
   * {@link prepare} does it, or why not; `undefined` for an unknown tool. For a caller that
   * only validates (a framework's validator); one that runs the call next keeps the
   * {@link PreparedCall} instead, so the arguments are not parsed twice.
   */
  async parseArguments(name: string, args: unknown): Promise<ParsedArguments | undefined> {
    if (!this.entries.has(name)) return undefined;
    const call = await this.prepare(name, args);
    return call.ok ? { ok: true, value: call.args } : { ok: false, problem: call.problem };
  }

  /**
   * The arguments of the registered tool `name` as a Standard Schema with its JSON Schema, to
   * hand to a library that takes one (docs/standard-schema.md): `validate` parses as
   * {@link prepare} does, under this Toolkit's bounds, and `jsonSchema.input` is the tool's
   * `inputSchema`. A tool whose `args` is already a Standard Schema gets this face too, so its
   * bounds apply. `undefined` for an unknown tool.
   */
  standardSchemaOf(name: string): StandardSchemaWithJson<Record<string, unknown>, object> | undefined {
    const entry = this.entries.get(name);
    return entry && standardSchemaOfPlan(entry.plan);
  }

  /**
   * The first half of {@link execute}: finds the tool and parses, cleans and validates the
   * arguments (the model's JSON text, or an object). A {@link PreparedCall} is ready for
   * {@link run}; a {@link RefusedCall} holds the error result `execute` returns (`unknown tool:
   * NAME`, `invalid arguments for NAME: ...`). Nothing runs and no hook is told here.
   */
  async prepare(name: string, args?: unknown): Promise<Preparation> {
    const entry = this.entries.get(name);
    if (!entry) return refusal(name, args, 'unknown tool', failure(`unknown tool: ${name}`));
    try {
      const parsed = await entry.plan.parse(args);
      if (parsed.ok) return new PreparedCall(entry, parsed.value);
      return refusal(name, args, parsed.problem, failure(`invalid arguments for ${name}: ${parsed.problem}`));
    } catch (error) {
      const problem = messageOf(error);
      return refusal(name, args, problem, failure(problem));
    }
  }

  /**
   * The second half of {@link execute}: runs a call {@link prepare} made (declared approval,
   * `beforeTool`, `run` under its deadline, the result as a `ToolResult`, `afterTool`,
   * `onMetric`), or reports a refused one to the hooks and returns its error result. A call
   * whose tool was unregistered (or replaced) since it was prepared is `unknown tool: NAME`.
   * Without `ctx`, `run` is called with one argument; with it, with the very object passed.
   */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
  async run<TState extends object = {}>(call: Preparation, ctx?: ToolContext<TState>): Promise<ToolResult> {
    return (await this.runTraced(call, ctx)).result;
  }

  /**
   * {@link run}, with the `traceparent` of the call's `execute_tool` span when a tracer recorded
   * it and the call suspended: the coordinator stores it with the suspension, so the span that
   * resolves it, maybe days later in another process, links back to it.
   */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
  async runTraced<TState extends object = {}>(call: Preparation, ctx?: ToolContext<TState>): Promise<RanCall> {
    const tracing = this.telemetry.active();
    if (tracing === undefined) return { result: await this.finish(call, ctx, performance.now()) };
    const { result, traceparent } = await this.traced(tracing, call.name, call.ok ? call.args : call.raw, ctx, () =>
      this.finish(call, ctx, performance.now()),
    );
    return traceparent === undefined ? { result } : { result, traceparent };
  }

  /**
   * Runs tool `name`: {@link prepare}, then {@link run}. Without `ctx`, `run` is called with
   * one argument; with it, with the very object passed (a shallow copy with a deadline signal
   * when a deadline applies).
   */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
  async execute<TState extends object = {}>(name: string, args?: unknown, ctx?: ToolContext<TState>): Promise<ToolResult> {
    const tracing = this.telemetry.active();
    if (tracing === undefined) return this.prepareAndFinish(name, args, ctx);
    return (await this.traced(tracing, name, args, ctx, () => this.prepareAndFinish(name, args, ctx))).result;
  }

  /** Runs `body` inside the call's `execute_tool` span, showing `args` redacted. */
  private traced(
    tracing: Tracing,
    name: string,
    args: unknown,
    ctx: ToolContext | undefined,
    body: () => Promise<ToolResult>,
  ): Promise<{ result: ToolResult; traceparent: string | undefined }> {
    const callId = (ctx as { callId?: unknown } | undefined)?.callId;
    const show = (calls: readonly { tool: string; args: unknown }[]) => showCalls((tool, value) => this.redact(tool, value), calls);
    return traceTool(tracing, name, this.entries.has(name), callId, args, show, body);
  }

  /** One call from its raw arguments; its time, as the hooks are told it, includes the parse. */
  private async prepareAndFinish(name: string, args: unknown, ctx: ToolContext | undefined): Promise<ToolResult> {
    const started = performance.now();
    return this.finish(await this.prepare(name, args), ctx, started);
  }

  /** Runs a prepared call (or takes a refused one's result) and tells the hooks. */
  private async finish(call: Preparation, ctx: ToolContext | undefined, started: number): Promise<ToolResult> {
    let result: ToolResult;
    if (!call.ok) {
      result = call.result;
    } else if (this.entries.get(call.name) !== call.tool) {
      result = failure(`unknown tool: ${call.name}`);
    } else {
      try {
        result = await dispatch(this.settings, call.tool as Entry, call.args, ctx);
      } catch (error) {
        result = failure(messageOf(error));
      }
    }
    return this.hooks ? afterCall(this.hooks, call.name, call.ok ? call.args : call.raw, result, started) : result;
  }

  private add(entry: Entry): void {
    if (this.entries.has(entry.name)) throw new ToolRegistrationError(`a tool named "${entry.name}" is already registered`);
    this.entries.set(entry.name, entry);
  }
}

function refusal(name: string, raw: unknown, problem: string, result: ToolResult): RefusedCall {
  return { ok: false, name, raw, result, problem };
}

/** A limit option: a positive number (`Infinity` for none), else the default. */
function limitOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 1)
    throw new InvalidArgumentError(`${name} must be a number of at least 1, got ${String(value)}`);
  return value;
}
