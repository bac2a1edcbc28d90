import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { AnyClass } from '../decorators/types';
import { defaultMetadataStorage } from '../metadata/transformer-storage';

/**
 * Whether a DTO, or a DTO nested in it (`@ValidateNested()` with `@Type`), has a constraint
 * declared async (`@ValidatorConstraint({ async: true })`, `registerDecorator({ async: true })`):
 * class-validator's `validateSync` skips those (and `@ValidatePromise()`), so such a DTO is validated
 * asynchronously only.
 */
export function hasAsyncConstraints(dto: AnyClass, seen: Set<AnyClass> = new Set()): boolean {
  if (seen.has(dto)) return false;
  seen.add(dto);
  const storage = getMetadataStorage();
  for (const m of storage.getTargetValidationMetadatas(dto, '', true, false)) {
    // `@ValidatePromise()` awaits the value, which only `validate` does.
    if (m.type === ValidationTypes.PROMISE_VALIDATION) return true;
    if (m.type === ValidationTypes.CUSTOM_VALIDATION && storage.getTargetValidatorConstraints(m.constraintCls).some((c) => c.async)) {
      return true;
    }
    if (m.type === ValidationTypes.NESTED_VALIDATION) {
      const nested = defaultMetadataStorage.findTypeMetadata(dto, m.propertyName)?.typeFunction?.() as AnyClass | undefined;
      if (typeof nested === 'function' && hasAsyncConstraints(nested, seen)) return true;
    }
  }
  return false;
}
