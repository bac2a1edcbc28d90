import { Inject, type DynamicModule, type MiddlewareConsumer, type NestModule, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
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
function providedByToolnexus<T>(door: string, moduleRef: ModuleRef, provider: Type<T>, serves: string): T {
  try {
    return moduleRef.get(provider, { strict: false });
  } catch {
    throw new ToolnexusModuleError(`${door} needs ToolnexusModule in the same application (it serves its ${serves})`);
  }
}

/** The token a door module's options are provided under: each door module provides its own, and exports none. */
const DOOR_OPTIONS = Symbol('toolnexus-door-options');

/** What a door module serves: the name its boot failures give, its default path, and the `ToolnexusModule` provider it mounts. */
export interface Door<T> {
  name: string;
  path: string;
  provider: Type<T>;
  /** What a boot failure calls `provider`: `AgentRunner`, `coordinator`. */
  serves: string;
}

/**
 * A door module's `forRoot` result: the module with its options provided, or a boot failure
 * saying what the options lack (`needs`) when they are not `valid`.
 */
export function doorModule(
  module: Type<DoorModule<object>>,
  door: Door<unknown>,
  options: unknown,
  valid: boolean,
  needs: string,
): DynamicModule {
  if (!valid) throw new ToolnexusModuleError(`${door.name}.forRoot needs ${needs}`);
  return { module, providers: [{ provide: DOOR_OPTIONS, useValue: options }] };
}

/**
 * The base of the door modules (inbox, chat, MCP, A2A): the options its `forRoot` provided, and
 * {@link DoorModule.mount}, where its `configure` starts.
 */
export abstract class DoorModule<O extends { path?: string }> implements NestModule {
  constructor(
    @Inject(DOOR_OPTIONS) protected readonly options: O,
    protected readonly moduleRef: ModuleRef,
  ) {}

  /** Mounts the door's handler on its path: Nest calls it once the application's modules are built. */
  abstract configure(consumer: MiddlewareConsumer): void;

  /**
   * The path `door` serves (checked), the provider of `ToolnexusModule` it serves, and its own
   * options less `path`, for the handler it mounts.
   */
  protected mount<T>(door: Door<T>): { path: string; served: T; handlerOptions: Omit<O, 'path'> } {
    const path = servedPath(door.name, this.options.path, door.path);
    const served = providedByToolnexus(door.name, this.moduleRef, door.provider, door.serves);
    const { path: _path, ...handlerOptions } = this.options;
    return { path, served, handlerOptions };
  }
}

/** A promise-returning handler as Nest middleware, which takes no promise. */
export function asMiddleware(
  handler: (request: IncomingMessage, response: ServerResponse) => unknown,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => void handler(request, response);
}
