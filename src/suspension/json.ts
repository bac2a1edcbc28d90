import { StoreError } from '../errors';
import { messageOf } from '../errors/message';

/**
 * Serialises a value a store keeps. Stores keep JSON, so a value JSON cannot carry
 * (a BigInt, a cycle) is refused here, before anything is written.
 */
export function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreError(`cannot store ${what}: ${messageOf(error)}`, { cause: error });
  }
  if (text === undefined) throw new StoreError(`cannot store ${what}: it has no JSON form`);
  return text;
}

/** The JSON round-trip of `value`: what reading it back from any store yields. */
export function jsonCopy<T>(value: T, what: string): T {
  return JSON.parse(toJson(value, what)) as T;
}
