import { messageOf } from '../errors/message';
import type { JsonSchema } from '../results/json-schema';

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

/** Keys that could reach a prototype: never copied out of untrusted input. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 64;
/** How much of a malformed argument text an error quotes back. */
const MAX_SHOWN_TEXT = 200;

class TooDeepError extends Error {}
class TooLargeError extends Error {}

/**
 * Accepts an object, or a string holding a JSON object (what models send). `undefined`
 * and the empty string mean "no arguments". The copy drops prototype-reaching keys and
 * stops at the first bound `limits` sets.
 */
export function toPlainObject(
  raw: unknown,
  limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS,
  schema?: JsonSchema,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let value = raw;
  if (value === undefined || value === '') return { ok: true, value: {} };
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
export class Oversized {
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

/** A nested DTO's schema: an object with its properties. */
export function isNestedObject(schema: JsonSchema): boolean {
  return schema.type === 'object' && schema.properties !== undefined;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
