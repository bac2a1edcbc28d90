import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { defaultMetadataStorage } from '../metadata/transformer-storage';
import { sensitivePropertiesOf } from '../decorators/sensitive.decorator';
import type { AnyClass } from '../decorators/types';

/** What a sensitive value is shown as. */
export const REDACTED = '[redacted]';

/** How deep redaction follows a value; anything deeper is redacted whole, so a hostile value cannot exhaust the stack. */
const MAX_DEPTH = 64;

/**
 * Which properties of a DTO to mask, and which lead to nested DTOs with redacts of their own.
 * Plans of self-referencing DTOs refer to themselves; walking a value is bounded by its depth.
 */
export interface RedactionPlan {
  readonly redacted: ReadonlySet<string>;
  readonly nested: ReadonlyMap<string, RedactionPlan>;
}

/**
 * The plan of a DTO class, built from its `@Sensitive` marks and, for `@ValidateNested()`
 * properties, the `@Type` classes' plans. `cache` holds the plans already built (the
 * Toolkit's, so each class is read once per toolkit). `undefined` when nothing in the class
 * or under it is sensitive: such arguments are shown as they are.
 */
export function redactionPlanFor(dto: AnyClass, cache: Map<AnyClass, RedactionPlan | undefined>): RedactionPlan | undefined {
  if (cache.has(dto)) return cache.get(dto);
  const redacted = new Set(sensitivePropertiesOf(dto.prototype as object));
  const nested = new Map<string, RedactionPlan>();
  const plan: RedactionPlan = { redacted, nested };
  // Placed before its children are read, so a DTO that contains itself finds its own plan.
  cache.set(dto, plan);
  const nestedKeys = new Set<string>();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false)) {
    if (m.type === ValidationTypes.NESTED_VALIDATION) nestedKeys.add(m.propertyName);
  }
  for (const key of nestedKeys) {
    if (redacted.has(key)) continue;
    const child = defaultMetadataStorage.findTypeMetadata(dto, key)?.typeFunction?.() as AnyClass | undefined;
    if (typeof child !== 'function') continue;
    const childPlan = redactionPlanFor(child, cache);
    if (childPlan) nested.set(key, childPlan);
  }
  const result = redacted.size === 0 && nested.size === 0 ? undefined : plan;
  cache.set(dto, result);
  return result;
}

/**
 * A JSON copy of `value` with what `plan` marks replaced by {@link REDACTED}. It fails
 * closed: a value that cannot be copied as JSON, or a non-object where the plan expects
 * fields to mask, is redacted whole.
 */
export function redactWith(plan: RedactionPlan | undefined, value: unknown): unknown {
  let copy: unknown;
  try {
    const text = JSON.stringify(value);
    copy = text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return REDACTED;
  }
  return plan ? mask(plan, copy, 0) : copy;
}

function mask(plan: RedactionPlan, value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => mask(plan, item, depth + 1));
  if (typeof value !== 'object' || value === null) return value === undefined || value === null ? value : REDACTED;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (plan.redacted.has(key)) record[key] = REDACTED;
    else {
      const child = plan.nested.get(key);
      if (child) record[key] = mask(child, record[key], depth + 1);
    }
  }
  return record;
}

/** Redacted values shorter than this are left in free text: redacting "no" or "1" everywhere would garble it, not protect it. */
const MIN_SEARCHED_LENGTH = 3;

/** Calls' arguments as they may be shown, and the redaction of their sensitive values anywhere else. */
export interface ShownCalls {
  /** Each call's arguments as `redact` gave them (`@Sensitive` fields read `"[redacted]"`), in the calls' order. */
  args: unknown[];
  /** A copy of a JSON value with every value the arguments had redacted replaced in its strings (and numbers). */
  redact: <T>(value: T) => T;
}

/**
 * The one value redaction every shown copy goes through (the inbox, the CLI, webhooks, spans):
 * each call's arguments pass through `redact` (a Toolkit's, by its field plans), and each value
 * so redacted is learnt, so that a result, prompt or text quoting it is redacted too: a tool
 * may well copy an argument into what it returns. docs/deploying.md, "What is redacted where".
 */
export function showCalls(redact: (tool: string, args: unknown) => unknown, calls: readonly { tool: string; args: unknown }[]): ShownCalls {
  const values = new Set<string>();
  const args = calls.map(({ tool, args: original }) => {
    const redacted = redact(tool, original);
    collectRedacted(original, redacted, values, 0);
    return redacted;
  });
  const searched = [...values].filter((value) => value.length >= MIN_SEARCHED_LENGTH).sort((a, b) => b.length - a.length);
  const redactText = (text: string): string =>
    searched.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(REDACTED) : out), text);
  return { args, redact: <T>(value: T): T => (searched.length === 0 ? value : (deepMap(value, redactText, 0) as T)) };
}

/** Adds to `out` every string (or number) in `original` that `redacted` replaced, also as it reads inside JSON text. */
function collectRedacted(original: unknown, redacted: unknown, out: Set<string>, depth: number): void {
  if (original === redacted || depth > MAX_DEPTH) return;
  if (typeof original === 'string' || typeof original === 'number') {
    if (redacted === original) return;
    const text = String(original);
    out.add(text);
    // A result holding JSON text (a tool echoing its arguments) shows the value escaped.
    if (typeof original === 'string') out.add(JSON.stringify(original).slice(1, -1));
    return;
  }
  if (typeof original !== 'object' || original === null) return;
  if (typeof redacted !== 'object' || redacted === null) {
    deepMap(original, (text) => (collectRedacted(text, REDACTED, out, depth), text), depth);
    return;
  }
  for (const [key, value] of Object.entries(original)) collectRedacted(value, (redacted as Record<string, unknown>)[key], out, depth + 1);
}

/** A copy of a JSON value with every string (and number) passed through `map`; numbers that `map` changes become strings. */
function deepMap(value: unknown, map: (text: string) => string, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === 'string') return map(value);
  if (typeof value === 'number') {
    const text = String(value);
    const mapped = map(text);
    return mapped === text ? value : mapped;
  }
  if (Array.isArray(value)) return value.map((item) => deepMap(item, map, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = deepMap(item, map, depth + 1);
    return out;
  }
  return value;
}
