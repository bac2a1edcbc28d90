import type { ModuleRef } from '@nestjs/core';
import type { Type } from '@nestjs/common';
import { ToolnexusModuleError } from './errors';

/**
 * The path a door module serves, without slashes around it, or a boot failure saying why it is
 * refused: Nest matches routes as patterns, so only a plain URL path is taken.
 */
export function servedPath(door: string, given: string | undefined, fallback: string): string {
  const path = (given ?? fallback).replace(/^\/+|\/+$/g, '');
  if (path === '' || !/^[A-Za-z0-9._~/-]+$/.test(path))
    throw new ToolnexusModuleError(`${door}: path must be a plain URL path such as "${fallback}", got ${JSON.stringify(given)}`);
  return path;
}

/** The `ToolnexusModule` provider a door module serves (its runner or coordinator), or a boot failure naming what is missing. */
export function providedByToolnexus<T>(door: string, moduleRef: ModuleRef, provider: Type<T>, serves: string): T {
  try {
    return moduleRef.get(provider, { strict: false });
  } catch {
    throw new ToolnexusModuleError(`${door} needs ToolnexusModule in the same application (it serves its ${serves})`);
  }
}
