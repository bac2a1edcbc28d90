import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { defaultMetadataStorage } from '../metadata/transformer-storage';
import { validate, validateSync, type ValidationError, type ValidatorOptions } from 'class-validator';
import type { ClassType } from '../decorators/types';
import { schemaForClass } from '../schema/generate';
import type { JsonSchema } from '../results/json-schema';
import { DEFAULT_ARGUMENT_LIMITS, toPlainObject, type ArgumentLimits } from './plain-copy';
import { hasAsyncConstraints } from './async-constraints';
import { needsShape, Problems, shapeProblems, type Problem } from './shape';
import { quickCheckFor, type QuickCheck } from './quick-check';

/**
 * The outcome of turning a model's raw arguments into what `run` receives. A failure's
 * `problem` is the text the model reads; `issues`, when the plan has them, are the same
 * failures one by one (what a Standard Schema reports).
 */
export type ParsedArguments = { ok: true; value: object } | { ok: false; problem: string; issues?: readonly Problem[] };

/** Parses, cleans and validates one tool's arguments; built once per DTO class or schema. */
export interface ArgumentsPlan {
  readonly schema: JsonSchema;
  parse(raw: unknown, limits?: ArgumentLimits): Promise<ParsedArguments>;
  /**
   * The same as `parse`, synchronously, for a plan whose every rule is synchronous (a DTO
   * with no async class-validator constraint); absent otherwise.
   */
  readonly parseSync?: (raw: unknown, limits?: ArgumentLimits) => ParsedArguments;
}

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

/** What class-validator finds in an instance the quick check passed. */
const NO_ERRORS: readonly ValidationError[] = [];

/**
 * Plans are this module's cache, not something a decorator declared, so they live here
 * rather than in the class's reflect-metadata; weak keys let a discarded class go.
 */
const plans = new WeakMap<ClassType, ArgumentsPlan>();

/** The plan for a DTO class, computed on first use and then reused. */
export function planForClass(dto: ClassType): ArgumentsPlan {
  let plan = plans.get(dto);
  if (!plan) {
    plan = new DtoArgumentsPlan(dto);
    plans.set(dto, plan);
  }
  return plan;
}

/** The plan for a raw JSON Schema tool (no DTO): shallow type and `required` checks. */
export function planForSchema(schema: JsonSchema | undefined): ArgumentsPlan {
  return new SchemaArgumentsPlan(schema ?? { type: 'object', properties: {}, required: [] });
}

/** `plan` under a Toolkit's limits: the size and array bounds are checked while the arguments are copied, before the plan (and class-validator) sees them. */
export function boundedPlan(plan: ArgumentsPlan, limits: ArgumentLimits): ArgumentsPlan {
  const { parseSync } = plan;
  return {
    schema: plan.schema,
    parse: (raw) => plan.parse(raw, limits),
    ...(parseSync ? { parseSync: (raw: unknown) => parseSync(raw, limits) } : {}),
  };
}

class DtoArgumentsPlan implements ArgumentsPlan {
  readonly schema: JsonSchema;
  /** Whether the schema has anything {@link shapeProblems} checks: a nested DTO, a `maxItems` or an `enum`. */
  private readonly shaped: boolean;
  /** A DTO with no properties: class-validator refuses its instances ("an unknown value"), so it is not asked. */
  private readonly empty: boolean;
  /** class-transformer has nothing recorded for the DTO: flat arguments become an instance without it ({@link flatInstance}). */
  private readonly untransformed: boolean;
  /** The DTO's rules planned once, passing a valid instance without class-validator's executor; undefined when only the executor applies them. */
  private readonly quick: QuickCheck | undefined;
  readonly parseSync?: (raw: unknown, limits?: ArgumentLimits) => ParsedArguments;

  constructor(private readonly dto: ClassType) {
    this.schema = schemaForClass(dto);
    const properties = Object.values(this.schema.properties ?? {});
    this.shaped = properties.some(needsShape);
    this.empty = properties.length === 0;
    this.untransformed = untransformed(dto);
    this.quick = quickCheckFor(dto);
    // class-validator's `validateSync` skips a constraint declared async, so a DTO with one has
    // no synchronous parse: a Standard Schema of it answers with a promise instead.
    if (!hasAsyncConstraints(dto)) this.parseSync = (raw, limits) => this.parseNow(raw, limits);
  }

  async parse(raw: unknown, limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS): Promise<ParsedArguments> {
    const built = this.build(raw, limits);
    if (built.ok !== 'built') return built;
    return this.finish(built, this.quick?.(built.instance) ? NO_ERRORS : await validate(built.instance, VALIDATOR_OPTIONS), limits);
  }

  private parseNow(raw: unknown, limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS): ParsedArguments {
    const built = this.build(raw, limits);
    if (built.ok !== 'built') return built;
    return this.finish(built, this.quick?.(built.instance) ? NO_ERRORS : validateSync(built.instance, VALIDATOR_OPTIONS), limits);
  }

  /** Everything before class-validator runs: the bounded copy, the shape check, the instance. */
  private build(raw: unknown, limits: ArgumentLimits): ParsedArguments | Built {
    const plain = toPlainObject(raw, limits, this.shaped ? this.schema : undefined);
    if (!plain.ok) return { ok: false, problem: plain.problem, issues: [{ path: '', message: plain.problem }] };
    // Every key is unknown to an empty DTO, and whitelisting would strip it: the instance is bare.
    if (this.empty) return { ok: true, value: plainToInstance<object, Record<string, unknown>>(this.dto, {}) };
    let problems: Problems | undefined;
    // Values of the wrong shape are reported here and removed, so class-validator neither
    // walks them nor reports them a second time; every other property is still validated.
    const removed = new Set<string>();
    if (this.shaped) {
      problems = new Problems(limits.maxErrorCount);
      shapeProblems(this.schema, plain.value, '', problems, removed);
    }
    const instance =
      (this.untransformed ? flatInstance(this.dto, plain.value) : undefined) ??
      plainToInstance<object, Record<string, unknown>>(this.dto, plain.value);
    return { ok: 'built', instance, problems, removed };
  }

  private finish(built: Built, errors: readonly ValidationError[], limits: ArgumentLimits): ParsedArguments {
    let problems = built.problems;
    if (errors.length > 0) {
      problems ??= new Problems(limits.maxErrorCount);
      describeErrors(errors, '', problems, built.removed);
    }
    if (problems !== undefined && problems.total > 0) return { ok: false, problem: problems.text(), issues: problems.shown };
    return { ok: true, value: built.instance };
  }
}

/** An instance built from the arguments, waiting for class-validator. */
interface Built {
  readonly ok: 'built';
  readonly instance: object;
  readonly problems: Problems | undefined;
  readonly removed: ReadonlySet<string>;
}

/** The maps class-transformer's storage keeps per class (`@Type`, `@Transform`, `@Expose`, `@Exclude`). */
const TRANSFORMER_MAPS = ['_typeMetadatas', '_transformMetadatas', '_exposeMetadatas', '_excludeMetadatas'] as const;

/**
 * Whether class-transformer has nothing recorded for `dto` or a class it extends, so that
 * its `plainToInstance` of flat values reduces to {@link flatInstance}. Read from the
 * storage's own maps; a class-transformer that keeps them elsewhere says no (the full path).
 */
function untransformed(dto: ClassType): boolean {
  const maps = TRANSFORMER_MAPS.map((name) => (defaultMetadataStorage as unknown as Record<string, unknown>)[name]);
  if (!maps.every((map) => map instanceof Map)) return false;
  for (let cls: unknown = dto; typeof cls === 'function' && cls !== Function.prototype; cls = Object.getPrototypeOf(cls)) {
    if (maps.some((map) => (map as Map<unknown, unknown>).has(cls))) return false;
  }
  return true;
}

/**
 * What `plainToInstance(dto, value)` builds when class-transformer has nothing recorded for
 * the class ({@link untransformed}) and no value is an object: `new dto()`, then every key
 * copied as it is, except those class-transformer skips (`__proto__`, `constructor`, a
 * prototype accessor without a setter or a method, a function-valued field). Its per-key
 * metadata lookups were most of a small call's transform cost. `undefined` when a value is
 * an object (nested values take the full path).
 */
export function flatInstance(dto: ClassType, value: Record<string, unknown>): object | undefined {
  const keys = Object.keys(value);
  for (const key of keys) {
    const item = value[key];
    if (typeof item === 'object' && item !== null) return undefined;
  }
  const instance = new dto() as Record<string, unknown>;
  const proto = (instance.constructor as { prototype?: object } | undefined)?.prototype;
  for (const key of keys) {
    if (key === '__proto__' || key === 'constructor') continue;
    if (proto) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      if ((descriptor && !descriptor.set) || instance[key] instanceof Function) continue;
    }
    instance[key] = value[key];
  }
  return instance;
}

class SchemaArgumentsPlan implements ArgumentsPlan {
  private readonly properties: Record<string, JsonSchema>;
  private readonly required: readonly string[];
  private readonly closed: boolean;

  constructor(readonly schema: JsonSchema) {
    this.properties = schema.properties ?? {};
    this.required = schema.required ?? [];
    this.closed = schema.additionalProperties === false;
  }

  async parse(raw: unknown, limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS): Promise<ParsedArguments> {
    const plain = toPlainObject(raw, limits);
    if (!plain.ok) return plain;
    const value = plain.value;
    const problems: string[] = [];
    // Own keys only: `toString` or `valueOf` must not be found on Object.prototype.
    for (const key of this.required) {
      if (!Object.hasOwn(value, key) || value[key] === undefined) problems.push(`${key}: ${key} is required`);
    }
    for (const key of Object.keys(value)) {
      const declared = Object.hasOwn(this.properties, key) ? this.properties[key] : undefined;
      if (!declared) {
        if (this.closed) delete value[key];
        continue;
      }
      const expected = declared.type;
      // `null` for an optional parameter whose type takes no null is "not given", as @IsOptional
      // reads it for a DTO: models in strict mode send it so, and MCP 2026-07-28 (SEP-2243) omits
      // such a parameter's header. Dropped before the check, so the tool never sees it.
      if (value[key] === null && !this.required.includes(key) && typeof expected === 'string' && expected !== 'null') {
        delete value[key];
        continue;
      }
      if (typeof expected === 'string' && !matchesType(value[key], expected)) {
        problems.push(`${key}: ${key} must be ${expected === 'integer' ? 'an' : 'a'} ${expected}`);
      }
    }
    return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, value };
  }
}

/** class-validator's errors as `path: message` lines, skipping what the shape check reported. */
function describeErrors(errors: readonly ValidationError[], parent: string, problems: Problems, removed: ReadonlySet<string>): void {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (removed.has(path)) continue;
    if (error.constraints) problems.add(path, Object.values(error.constraints).join(', '));
    if (error.children?.length) describeErrors(error.children, path, problems, removed);
  }
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}
