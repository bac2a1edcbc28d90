import 'reflect-metadata';
import { DESCRIBED_PROPERTIES, PROPERTY_DESCRIPTION } from '../metadata/keys';

/**
 * Sets the `description` of a DTO property in the tool's JSON Schema.
 * Combine it with a class-validator decorator, which is what validates the value.
 */
export function Describe(text: string): PropertyDecorator {
  return (target, propertyKey) => {
    Reflect.defineMetadata(PROPERTY_DESCRIPTION, text, target, propertyKey);
    const own = (Reflect.getOwnMetadata(DESCRIBED_PROPERTIES, target) as string[] | undefined) ?? [];
    Reflect.defineMetadata(DESCRIBED_PROPERTIES, [...own, String(propertyKey)], target);
  };
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
