import type { ModuleRef } from '@nestjs/core';
import type { DynamicModule, Type } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
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

/** A door module's `forRoot` result: the module with its options provided under `token`. */
export function doorModule(module: Type<unknown>, token: symbol, options: unknown): DynamicModule {
  return { module, providers: [{ provide: token, useValue: options }] };
}

/**
 * What a door module's `configure` starts from: the path it serves (checked), the provider of
 * `ToolnexusModule` it serves, and its own options less `path`, for the handler it mounts.
 */
export function mountOf<T, O extends { path?: string }>(
  door: string,
  options: O,
  fallback: string,
  moduleRef: ModuleRef,
  provider: Type<T>,
  serves: string,
): { path: string; served: T; handlerOptions: Omit<O, 'path'> } {
  const path = servedPath(door, options.path, fallback);
  const served = providedByToolnexus(door, moduleRef, provider, serves);
  const { path: _path, ...handlerOptions } = options;
  return { path, served, handlerOptions };
}

/** A promise-returning handler as Nest middleware, which takes no promise. */
export function asMiddleware(
  handler: (request: IncomingMessage, response: ServerResponse) => unknown,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => void handler(request, response);
}
