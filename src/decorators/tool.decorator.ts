import 'reflect-metadata';
import { TOOL_OPTIONS } from '../metadata/keys';
import type { AnyClass, ToolOptions } from './types';

/**
 * Marks a class as a tool. It only records `options`; the Toolkit reads them at
 * registration. A subclass declares its own `@Tool`.
 *
 * @example
 * ```ts
 * @Tool({ description: 'Current weather for a city', args: WeatherArgs })
 * class GetWeatherTool { run(args: WeatherArgs) { return `sunny in ${args.city}` } }
 * ```
 */
export function Tool(options: ToolOptions): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(TOOL_OPTIONS, { ...options }, target);
  };
}

/** The options of the class's own `@Tool`, ignoring any inherited from a parent class. */
export function toolOptionsOf(target: AnyClass): ToolOptions | undefined {
  return Reflect.getOwnMetadata(TOOL_OPTIONS, target) as ToolOptions | undefined;
}
