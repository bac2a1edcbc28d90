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
