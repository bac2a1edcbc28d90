import 'reflect-metadata';
import { RESOURCE_TEMPLATE_OPTIONS } from '../../../metadata/keys';
import type { AnyClass } from '../../../decorators/types';
import type { ResourceTemplateOptions } from './types';

/**
 * Marks a class as an MCP resource template: resources whose URIs follow `uriTemplate`. It
 * only records `options`. The class has `read(params, uri, ctx)`, `params` validated into the
 * `params` DTO when one is given, and may have `complete(parameter, value)` for suggestions.
 *
 * @example
 * ```ts
 * @ResourceTemplate({ uriTemplate: 'app://orders/{id}', mimeType: 'application/json', params: OrderRef })
 * class OrderResource { read(params: OrderRef) { return JSON.stringify(orders.get(params.id)) } }
 * ```
 */
export function ResourceTemplate(options: ResourceTemplateOptions): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(RESOURCE_TEMPLATE_OPTIONS, { ...options }, target);
  };
}

/** The options of the class's own `@ResourceTemplate`. */
export function resourceTemplateOptionsOf(target: AnyClass): ResourceTemplateOptions | undefined {
  return Reflect.getOwnMetadata(RESOURCE_TEMPLATE_OPTIONS, target) as ResourceTemplateOptions | undefined;
}
