import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError, type ValidatorOptions } from 'class-validator';
import type { ClassType } from '../decorators/types';
import { messageOf } from '../errors/message';
import { schemaForClass } from '../schema/generate';
import type { JsonSchema } from '../schema/json-schema';

/** The outcome of turning a model's raw arguments into what `run` receives. */
export type ParsedArguments = { ok: true; value: object } | { ok: false; problem: string };

/** Parses, cleans and validates one tool's arguments; built once per DTO class or schema. */
export interface ArgumentsPlan {
  readonly schema: JsonSchema;
  parse(raw: unknown): Promise<ParsedArguments>;
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

class DtoArgumentsPlan implements ArgumentsPlan {
  readonly schema: JsonSchema;
  constructor(private readonly dto: ClassType) {
    this.schema = schemaForClass(dto);
  }

  async parse(raw: unknown): Promise<ParsedArguments> {
    const plain = toPlainObject(raw);
    if (!plain.ok) return plain;
    const shape = shapeProblems(this.schema, plain.value, '');
    if (shape.length > 0) return { ok: false, problem: shape.join('; ') };
    const instance = plainToInstance<object, Record<string, unknown>>(this.dto, plain.value);
    const errors = await validate(instance, VALIDATOR_OPTIONS);
    if (errors.length > 0) return { ok: false, problem: describeErrors(errors).join('; ') };
    return { ok: true, value: instance };
  }
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

/**
 * Accepts an object, or a string holding a JSON object (what models send). `undefined`
 * and the empty string mean "no arguments". The copy drops prototype-reaching keys.
 */
function toPlainObject(raw: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let value = raw;
  if (value === undefined || value === '') return { ok: true, value: {} };
  if (typeof value === 'string') {
    const text = value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // The parser's words and the start of the text tell the model what to fix.
      const shown = text.length > MAX_SHOWN_TEXT ? `${text.slice(0, MAX_SHOWN_TEXT)}...` : text;
      return { ok: false, problem: `arguments are not valid JSON (${messageOf(error)}): ${shown}` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: `arguments must be a JSON object, got ${kindOf(value)}` };
  }
  try {
    return { ok: true, value: cleanCopy(value, 0) as Record<string, unknown> };
  } catch (error) {
    if (error instanceof TooDeepError) return { ok: false, problem: `arguments are nested deeper than ${MAX_DEPTH} levels` };
    throw error;
  }
}

function cleanCopy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) throw new TooDeepError();
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cleanCopy(value[i], depth + 1);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // a Date or class instance from code
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) continue;
    out[key] = cleanCopy((value as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}

/**
 * class-validator's `@ValidateNested()` accepts an array where one object is declared (it
 * validates each element), so an empty array would pass as a nested DTO. The schema knows
 * better: check object-versus-array along it before class-transformer builds instances.
 */
function shapeProblems(schema: JsonSchema, value: Record<string, unknown>, parent: string): string[] {
  const problems: string[] = [];
  const properties = schema.properties;
  if (!properties) return problems;
  for (const [key, childSchema] of Object.entries(properties)) {
    const child = value[key];
    if (child === undefined || child === null) continue;
    const path = parent ? `${parent}.${key}` : key;
    problems.push(...shapeOf(childSchema, child, path, key));
  }
  return problems;
}

function shapeOf(schema: JsonSchema, value: unknown, path: string, label: string): string[] {
  if (schema.type === 'object' && schema.properties) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: ${label} must be an object`];
    return shapeProblems(schema, value as Record<string, unknown>, path);
  }
  if (schema.type === 'array' && schema.items?.type === 'object' && schema.items.properties) {
    if (!Array.isArray(value)) return [`${path}: ${label} must be an array`];
    const items = schema.items;
    return value.flatMap((item, i) => (item === undefined || item === null ? [] : shapeOf(items, item, `${path}.${i}`, String(i))));
  }
  return [];
}

function describeErrors(errors: ValidationError[], parent = ''): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) lines.push(`${path}: ${Object.values(error.constraints).join(', ')}`);
    if (error.children?.length) lines.push(...describeErrors(error.children, path));
  }
  return lines;
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
