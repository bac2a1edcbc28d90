import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { defaultMetadataStorage } from '../metadata/transformer-storage';
import { validate, type ValidationError, type ValidatorOptions } from 'class-validator';
import type { ClassType } from '../decorators/types';
import { messageOf } from '../errors/message';
import { schemaForClass } from '../schema/generate';
import type { JsonSchema } from '../schema/json-schema';

/** The outcome of turning a model's raw arguments into what `run` receives. */
export type ParsedArguments = { ok: true; value: object } | { ok: false; problem: string };

/**
 * Bounds on what a model may send, checked before class-transformer and class-validator
 * walk the arguments: their cost grows with the input, and their error text goes back to
 * the model.
 */
export interface ArgumentLimits {
  /** Largest argument text in bytes (UTF-8); an object is measured as its JSON would be, roughly. */
  readonly maxArgumentBytes: number;
  /** Longest array, at any depth. */
  readonly maxArrayItems: number;
  /** How many failures an error result lists before "… and N more". */
  readonly maxErrorCount: number;
}

export const DEFAULT_ARGUMENT_LIMITS: ArgumentLimits = { maxArgumentBytes: 1024 * 1024, maxArrayItems: 10_000, maxErrorCount: 20 };

/** Parses, cleans and validates one tool's arguments; built once per DTO class or schema. */
export interface ArgumentsPlan {
  readonly schema: JsonSchema;
  parse(raw: unknown, limits?: ArgumentLimits): Promise<ParsedArguments>;
}

/** Keys that could reach a prototype: never copied out of untrusted input. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 64;
/** How much of a malformed argument text an error quotes back. */
const MAX_SHOWN_TEXT = 200;
const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

class TooDeepError extends Error {}
class TooLargeError extends Error {}

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

/**
 * `plan` under a Toolkit's limits: the size and array bounds are checked while the
 * arguments are copied, before the plan (and class-validator) sees them.
 */
export function boundedPlan(plan: ArgumentsPlan, limits: ArgumentLimits): ArgumentsPlan {
  return {
    schema: plan.schema,
    parse(raw: unknown): Promise<ParsedArguments> {
      if (typeof raw === 'object' && raw !== null && handedOut.delete(raw)) return Promise.resolve({ ok: true, value: raw });
      if (plan instanceof DtoArgumentsPlan) return plan.parse(raw, limits);
      const plain = toPlainObject(raw, limits);
      if (!plain.ok) return Promise.resolve(plain);
      cleaned.add(plain.value);
      return plan.parse(plain.value, limits);
    },
  };
}

/**
 * Parsed values handed out to a caller that runs them next (the Toolkit's `parseArguments`,
 * for the coordinator): the next parse of one takes it as it is, once, so a call is parsed
 * and validated once however many layers it passes (docs/design.md, "the path of a call").
 */
const handedOut = new WeakSet<object>();

/** Marks `value`, a successful parse's, to be taken as it is by the next parse (once). */
export function handOut(value: object): object {
  handedOut.add(value);
  return value;
}

/** The failures of one call: the first `max` kept as text, the rest only counted. */
class Problems {
  readonly shown: string[] = [];
  total = 0;
  constructor(private readonly max: number) {}

  add(line: string): void {
    this.total++;
    if (this.shown.length < this.max) this.shown.push(line);
  }

  text(): string {
    const more = this.total - this.shown.length;
    return more > 0 ? `${this.shown.join('; ')}; … and ${more.toLocaleString('en-US')} more` : this.shown.join('; ');
  }
}

class DtoArgumentsPlan implements ArgumentsPlan {
  readonly schema: JsonSchema;
  /** Whether the schema has anything {@link shapeProblems} checks: a nested DTO, a `maxItems` or an `enum`. */
  private readonly shaped: boolean;
  /** A DTO with no properties: class-validator refuses its instances ("an unknown value"), so it is not asked. */
  private readonly empty: boolean;
  /** class-transformer has nothing recorded for the DTO: flat arguments become an instance without it ({@link flatInstance}). */
  private readonly untransformed: boolean;

  constructor(private readonly dto: ClassType) {
    this.schema = schemaForClass(dto);
    const properties = Object.values(this.schema.properties ?? {});
    this.shaped = properties.some(needsShape);
    this.empty = properties.length === 0;
    this.untransformed = untransformed(dto);
  }

  async parse(raw: unknown, limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS): Promise<ParsedArguments> {
    const plain = toPlainObject(raw, limits, this.shaped ? this.schema : undefined);
    if (!plain.ok) return plain;
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
    const errors = await validate(instance, VALIDATOR_OPTIONS);
    if (errors.length > 0) {
      problems ??= new Problems(limits.maxErrorCount);
      describeErrors(errors, '', problems, removed);
    }
    if (problems !== undefined && problems.total > 0) return { ok: false, problem: problems.text() };
    return { ok: true, value: instance };
  }
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

  async parse(raw: unknown): Promise<ParsedArguments> {
    const plain = toPlainObject(raw);
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
      if (typeof expected === 'string' && !matchesType(value[key], expected)) {
        problems.push(`${key}: ${key} must be ${expected === 'integer' ? 'an' : 'a'} ${expected}`);
      }
    }
    return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, value };
  }
}

/** Objects this module copied and checked already: a second pass takes them as they are. */
const cleaned = new WeakSet<object>();

/**
 * Accepts an object, or a string holding a JSON object (what models send). `undefined`
 * and the empty string mean "no arguments". The copy drops prototype-reaching keys and
 * stops at the first bound `limits` sets.
 */
function toPlainObject(
  raw: unknown,
  limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS,
  schema?: JsonSchema,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let value = raw;
  if (value === undefined || value === '') return { ok: true, value: {} };
  if (typeof value === 'object' && value !== null && cleaned.has(value)) return { ok: true, value: value as Record<string, unknown> };
  const budget = { bytes: limits.maxArgumentBytes };
  if (typeof value === 'string') {
    const text = value;
    // A UTF-16 unit is at least one byte, at most three: count bytes only when it can matter.
    const bytes = text.length * 3 <= limits.maxArgumentBytes ? text.length : Buffer.byteLength(text);
    if (bytes > limits.maxArgumentBytes) return { ok: false, problem: tooLarge(limits) };
    try {
      value = JSON.parse(text);
    } catch (error) {
      // The parser's words and the start of the text tell the model what to fix.
      const shown = text.length > MAX_SHOWN_TEXT ? `${text.slice(0, MAX_SHOWN_TEXT)}...` : text;
      return { ok: false, problem: `arguments are not valid JSON (${messageOf(error)}): ${shown}` };
    }
    budget.bytes = Infinity; // measured exactly above
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: `arguments must be a JSON object, got ${kindOf(value)}` };
  }
  try {
    return { ok: true, value: cleanCopy(value, 0, limits.maxArrayItems, budget, schema) as Record<string, unknown> };
  } catch (error) {
    if (error instanceof TooDeepError) return { ok: false, problem: `arguments are nested deeper than ${MAX_DEPTH} levels` };
    if (error instanceof TooLargeError) return { ok: false, problem: error.message || tooLarge(limits) };
    throw error;
  }
}

function tooLarge(limits: ArgumentLimits): string {
  return `arguments are larger than ${limits.maxArgumentBytes.toLocaleString('en-US')} bytes`;
}

/**
 * Stands in the copy for an array longer than the `maxItems` its schema declares: such an
 * array is refused whatever its items hold, so they are neither copied nor validated.
 */
class Oversized {
  constructor(readonly length: number) {}
}

/**
 * A copy of `value` without prototype-reaching keys, within the limits. `schema`, where
 * given, is the DTO's schema at this point, followed the way {@link shapeProblems} follows
 * it, so that every {@link Oversized} it leaves is found and reported there.
 */
function cleanCopy(value: unknown, depth: number, maxItems: number, budget: { bytes: number }, schema: JsonSchema | undefined): unknown {
  if (typeof value === 'string') budget.bytes -= value.length + 2;
  else budget.bytes -= 8;
  if (budget.bytes < 0) throw new TooLargeError();
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) throw new TooDeepError();
  if (Array.isArray(value)) {
    if (schema?.type === 'array' && typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      return new Oversized(value.length);
    if (value.length > maxItems) {
      throw new TooLargeError(
        `an array has ${value.length.toLocaleString('en-US')} items, more than the ${maxItems.toLocaleString('en-US')} allowed`,
      );
    }
    const items = schema?.type === 'array' && schema.items !== undefined && isNestedObject(schema.items) ? schema.items : undefined;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cleanCopy(value[i], depth + 1, maxItems, budget, items);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // a Date or class instance from code
  const properties = schema !== undefined && isNestedObject(schema) ? schema.properties : undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) continue;
    budget.bytes -= key.length + 3;
    const child = properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : undefined;
    out[key] = cleanCopy((value as Record<string, unknown>)[key], depth + 1, maxItems, budget, child);
  }
  return out;
}

/**
 * What class-validator cannot see or would see too late, checked along the schema before
 * class-transformer builds instances: `@ValidateNested()` accepts an array where one object
 * is declared (it validates each element) and lets a missing nested object through; and an
 * array longer than its `maxItems` is refused without walking its items. Each failure is
 * reported once and its value removed, so class-validator does not walk it.
 */
function shapeProblems(schema: JsonSchema, value: Record<string, unknown>, parent: string, problems: Problems, removed: Set<string>): void {
  const properties = schema.properties;
  if (!properties) return;
  const required = schema.required ?? [];
  for (const key of Object.keys(properties)) {
    const childSchema = properties[key] as JsonSchema;
    const child = Object.hasOwn(value, key) ? value[key] : undefined;
    const path = parent ? `${parent}.${key}` : key;
    let problem: string | undefined;
    if (child === undefined || child === null) {
      if (isNested(childSchema) && required.includes(key)) problem = `${path}: ${key} should not be null or undefined`;
    } else {
      problem = shapeOf(childSchema, child, path, key, problems, removed);
    }
    if (problem !== undefined) {
      problems.add(problem);
      removed.add(path);
      delete value[key];
    }
  }
}

/**
 * Whether {@link shapeProblems} has something to check in this property: a nested DTO, a
 * `maxItems`, or an `enum` (class-validator's `@IsEnum` of a numeric enum also accepts the
 * enum's names, which the schema does not list; `@ArrayUnique()` compares items by identity,
 * so two equal objects pass it; `@Type(() => Date)` makes a date of `true` or `5` for
 * `@IsDate()`, where the schema says a date-time string: the shape check holds validation to the schema).
 */
function needsShape(schema: JsonSchema): boolean {
  return (
    isNested(schema) ||
    typeof schema.maxItems === 'number' ||
    schema.uniqueItems === true ||
    schema.format === 'date-time' ||
    schema.enum !== undefined ||
    schema.items?.enum !== undefined
  );
}

/** A `@ValidateNested()` property: an inlined DTO, or an array of them. */
function isNested(schema: JsonSchema): boolean {
  return isNestedObject(schema) || (schema.type === 'array' && schema.items !== undefined && isNestedObject(schema.items));
}

function isNestedObject(schema: JsonSchema): boolean {
  return schema.type === 'object' && schema.properties !== undefined;
}

/** The problem of the value itself, if any; problems inside it are added to `problems`. */
function shapeOf(
  schema: JsonSchema,
  value: unknown,
  path: string,
  label: string,
  problems: Problems,
  removed: Set<string>,
): string | undefined {
  if (
    value instanceof Oversized ||
    (schema.type === 'array' && Array.isArray(value) && typeof schema.maxItems === 'number' && value.length > schema.maxItems)
  ) {
    return `${path}: ${label} must contain no more than ${String(schema.maxItems)} elements`;
  }
  if (schema.enum !== undefined && !schema.enum.some((allowed) => allowed === value)) return notOneOf(schema.enum, path, label);
  if (schema.type === 'array' && Array.isArray(value) && schema.items?.enum !== undefined) {
    const allowed = schema.items.enum;
    for (let i = 0; i < value.length; i++) {
      if (!allowed.some((a) => a === value[i])) return notOneOf(allowed, path, label, i);
    }
  }
  if (schema.format === 'date-time' && typeof value !== 'string') return `${path}: ${label} must be a date-time string`;
  if (schema.uniqueItems === true && Array.isArray(value) && !uniqueByValue(value))
    return `${path}: All ${label}'s elements must be unique`;
  if (schema.type === 'object' && schema.properties) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${path}: ${label} must be an object`;
    shapeProblems(schema, value as Record<string, unknown>, path, problems, removed);
    return undefined;
  }
  if (schema.type === 'array' && schema.items?.type === 'object' && schema.items.properties) {
    if (!Array.isArray(value)) return `${path}: ${label} must be an array`;
    const items = schema.items;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || item === null) continue;
      const itemPath = `${path}.${i}`;
      const problem = shapeOf(items, item, itemPath, String(i), problems, removed);
      if (problem !== undefined) {
        problems.add(problem);
        removed.add(itemPath);
        value[i] = undefined;
      }
    }
  }
  return undefined;
}

/** JSON Schema's `uniqueItems`: no two items equal as JSON values (object keys in any order). */
function uniqueByValue(items: readonly unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const key = canonical(item);
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** class-validator's words for a value outside an `@IsEnum` / `@IsIn` list. */
function notOneOf(allowed: readonly unknown[], path: string, label: string, index?: number): string {
  const each = index === undefined ? '' : 'each value in ';
  return `${path}: ${each}${label} must be one of the following values: ${allowed.map(String).join(', ')}`;
}

/** class-validator's errors as `path: message` lines, skipping what the shape check reported. */
function describeErrors(errors: readonly ValidationError[], parent: string, problems: Problems, removed: ReadonlySet<string>): void {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (removed.has(path)) continue;
    if (error.constraints) problems.add(`${path}: ${Object.values(error.constraints).join(', ')}`);
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

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
