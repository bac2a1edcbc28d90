import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { DESCRIBED_POSITIONS, DESCRIBED_PROPERTIES, PROPERTY_DESCRIPTION } from '../metadata/keys';

/**
 * Sets the `description` of a DTO property in the tool's JSON Schema.
 * Combine it with a class-validator decorator, which is what validates the value.
 */
export function Describe(text: string): PropertyDecorator {
  return (target, propertyKey) => {
    Reflect.defineMetadata(PROPERTY_DESCRIPTION, text, target, propertyKey);
    const own = (Reflect.getOwnMetadata(DESCRIBED_PROPERTIES, target) as string[] | undefined) ?? [];
    Reflect.defineMetadata(DESCRIBED_PROPERTIES, [...own, String(propertyKey)], target);
    // Decorators run property by property in declaration order, so the validated properties
    // already recorded for this very class are the ones declared before this one: where a
    // property with no class-validator decorator stands in the schema.
    const cls = (target as { constructor: unknown }).constructor;
    const before = new Set<string>();
    if (typeof cls === 'function') {
      for (const m of getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false)) {
        if (m.target === cls && m.propertyName !== String(propertyKey)) before.add(m.propertyName);
      }
    }
    const positions = new Map(describedPositionsOf(target));
    positions.set(String(propertyKey), before.size);
    Reflect.defineMetadata(DESCRIBED_POSITIONS, positions, target);
  };
}

/** Where each of this very prototype's `@Describe`d properties stands among its validated ones. */
export function describedPositionsOf(prototype: object): ReadonlyMap<string, number> {
  return (Reflect.getOwnMetadata(DESCRIBED_POSITIONS, prototype) as ReadonlyMap<string, number> | undefined) ?? new Map<string, number>();
}

/** The `@Describe` text of a property, inherited from parent DTOs. */
export function descriptionOf(prototype: object, propertyKey: string): string | undefined {
  return Reflect.getMetadata(PROPERTY_DESCRIPTION, prototype, propertyKey) as string | undefined;
}

/** Every property with a `@Describe`, parents first. */
export function describedPropertiesOf(prototype: object): string[] {
  const keys: string[] = [];
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    const own = Reflect.getOwnMetadata(DESCRIBED_PROPERTIES, p) as string[] | undefined;
    if (own) keys.unshift(...own);
  }
  return [...new Set(keys)];
}
