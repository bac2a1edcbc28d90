import { Limiter } from '../timing/limiter';
import { toolOptionsOf } from '../decorators/tool.decorator';
import type { ApprovalByArgs, ApprovalPolicy, ClassType, ToolAnnotations, ToolOptions } from '../decorators/types';
import { DtoRuleError, StandardSchemaError, ToolRegistrationError } from '../errors';
import { sanitizeName } from '../results/helpers';
import { schemaForClass } from '../schema/generate';
import type { JsonSchema } from '../results/json-schema';
import { approvalPolicyOf } from './approval';
import { boundedPlan, planForClass, planForSchema, type ArgumentsPlan } from './arguments';
import type { ToolContext } from './context';
import { isFunctionTool, type FunctionTool } from './define-tool';
import type { ArgumentLimits } from './plain-copy';
import type { RedactionPlan } from './redaction';
import { isStandardSchema, planForStandardSchema } from './standard-plan';

/** Builds a tool class's instance; plug a DI container in here. Default: `new cls()`. */
export type ToolResolver = (cls: ClassType) => object;

/** Anything `register` accepts: a `@Tool` class, an instance of one, or a `defineTool` object. */
export type Registrable = ClassType | object | FunctionTool;

/** A tool as the Toolkit holds it. */
export interface RegisteredTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly timeoutMs?: number;
  /** The approval calls need before `run`, when the tool declares one: a policy, or a function of each call's arguments. */
  readonly approval?: ApprovalPolicy | ApprovalByArgs;
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

export interface Runnable {
  run(args: unknown, ctx?: ToolContext): unknown;
}

/** A registered tool with what the Toolkit runs it by: its argument plan and its instance. */
export interface Entry extends RegisteredTool {
  readonly instance: Runnable;
  readonly plan: ArgumentsPlan;
  /** The arguments DTO, when the tool declares one: where `@Sensitive` marks are read. */
  readonly dto?: ClassType;
  /** What to redact of a Standard Schema tool's arguments: its declared `sensitive` keys. */
  readonly redaction?: RedactionPlan;
  /** Holds calls beyond the tool's `concurrency` (one per registration: the Toolkit's own). */
  readonly limiter?: Limiter;
}

/**
 * The entry of anything `register` accepts; throws {@link ToolRegistrationError} on a programmer
 * error. Without a `resolver`, a class is built with `new cls()`, and one whose constructor
 * takes arguments is refused (they would be undefined).
 */
export function entryOf(tool: Registrable, resolver: ToolResolver | undefined, limits: ArgumentLimits): Entry {
  if (isFunctionTool(tool)) {
    return makeEntry(tool, tool.name, tool, limits);
  }
  if (typeof tool === 'function') {
    const options = toolOptionsOf(tool as ClassType);
    if (!options) throw new ToolRegistrationError(`class ${tool.name || '(anonymous)'} has no @Tool decorator`);
    if (resolver === undefined) {
      const needed = constructorParameters(tool as ClassType);
      if (needed > 0) {
        const name = tool.name || '(anonymous)';
        throw new ToolRegistrationError(
          `class ${name} takes ${needed} constructor argument${needed === 1 ? '' : 's'} and this Toolkit has no resolver, so they would be undefined: ` +
            `pass new Toolkit({ resolver: (cls) => ... }) to build it (a DI container, or a function that supplies them), or register an instance (new ${name}(...))`,
        );
      }
    }
    const instance = resolver === undefined ? new (tool as ClassType)() : resolver(tool as ClassType);
    return makeEntry(options, defaultToolName(tool.name), instance, limits);
  }
  if (typeof tool === 'object' && tool !== null) {
    const options = toolOptionsOf(tool.constructor as ClassType);
    if (!options) {
      throw new ToolRegistrationError(
        `cannot register ${tool.constructor?.name ?? 'value'}: not a @Tool class, an instance of one, or a defineTool object`,
      );
    }
    return makeEntry(options, defaultToolName(tool.constructor.name), tool, limits);
  }
  throw new ToolRegistrationError(`cannot register ${String(tool)}: not a @Tool class, an instance of one, or a defineTool object`);
}

function makeEntry(options: ToolOptions | FunctionTool, fallbackName: string, instance: object, limits: ArgumentLimits): Entry {
  const name = sanitizeName(options.name ?? fallbackName);
  if (!name) throw new ToolRegistrationError('a tool needs a name');
  if (typeof options.description !== 'string' || options.description === '') {
    throw new ToolRegistrationError(`tool "${name}" needs a description`);
  }
  if (typeof (instance as Partial<Runnable>).run !== 'function') throw new ToolRegistrationError(`tool "${name}" has no run method`);
  if (options.args && options.inputSchema) throw new ToolRegistrationError(`tool "${name}" declares both args and inputSchema`);
  const args: unknown = options.args;
  const standard = isStandardSchema(args) ? args : undefined;
  if (args !== undefined && standard === undefined && typeof args !== 'function') {
    throw new ToolRegistrationError(`tool "${name}": args must be a DTO class or a Standard Schema with JSON Schema`);
  }
  let plan: ArgumentsPlan;
  try {
    const unbounded = standard
      ? planForStandardSchema(standard)
      : options.args
        ? planForClass(options.args as ClassType)
        : planForSchema(options.inputSchema);
    plan = boundedPlan(unbounded, limits);
  } catch (error) {
    // The tool's name goes in front; a DtoRuleError keeps its class, code and property.
    if (error instanceof DtoRuleError) throw new DtoRuleError(error.property, `tool "${name}": ${error.message}`, { cause: error });
    if (error instanceof StandardSchemaError) throw new StandardSchemaError(`tool "${name}": ${error.message}`, { cause: error });
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
    ...(options.args && !standard ? { dto: options.args as ClassType } : {}),
    ...(standard ? sensitiveOf(name, options) : {}),
  };
  // A tool that declares none of the descriptive options keeps exactly the entry shape it always had.
  const described = describedBy(name, options);
  if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean')
    throw new ToolRegistrationError(`tool "${name}": idempotent must be a boolean`);
  if (options.idempotent === true) Object.assign(described, { idempotent: true });
  if (options.concurrency !== undefined) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new ToolRegistrationError(`tool "${name}": concurrency must be a positive integer, got ${String(options.concurrency)}`);
    Object.assign(described, { limiter: new Limiter(options.concurrency) });
  }
  return Object.keys(described).length === 0 ? entry : { ...entry, ...described };
}

/** A Standard Schema tool's `sensitive` keys as a redaction plan (a DTO's come from `@Sensitive`). */
function sensitiveOf(name: string, options: ToolOptions | FunctionTool): { redaction?: RedactionPlan } {
  const keys: unknown = 'sensitive' in options ? options.sensitive : undefined;
  if (keys === undefined) return {};
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
    throw new ToolRegistrationError(`tool "${name}": sensitive must be an array of argument names`);
  }
  return keys.length === 0 ? {} : { redaction: { redacted: new Set(keys), nested: new Map() } };
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

/** `GetWeatherTool` → `get_weather`. */
export function defaultToolName(className: string): string {
  return className
    .replace(/Tool$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}
