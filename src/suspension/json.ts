import { StoreError } from '../errors';
import { messageOf } from '../errors/message';
import type { ToolResult } from '../results/wire';

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

/**
 * The outcome as every store can keep it. Metadata JSON cannot carry (a BigInt, a cycle)
 * is dropped rather than fail the settle: a failed settle would leave the call claimed and
 * replay it again after its lease.
 */
export function storable(outcome: ToolResult): ToolResult {
  // The common result, `{ output, isError }` of a string and a boolean, is JSON as it is.
  if (outcome.metadata === undefined && typeof outcome.output === 'string' && typeof outcome.isError === 'boolean')
    return { output: outcome.output, isError: outcome.isError };
  try {
    return JSON.parse(JSON.stringify(outcome)) as ToolResult;
  } catch (error) {
    return {
      output: outcome.output,
      isError: outcome.isError,
      metadata: { metadataDropped: `the result metadata cannot be stored as JSON: ${messageOf(error)}` },
    };
  }
}
