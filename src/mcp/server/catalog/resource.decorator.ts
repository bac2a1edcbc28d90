import 'reflect-metadata';
import { RESOURCE_OPTIONS } from '../../../metadata/keys';
import type { AnyClass } from '../../../decorators/types';
import type { ResourceOptions } from './types';

/**
 * Marks a class as an MCP resource at a fixed URI, served by `serveMcp` from an
 * {@link McpCatalog}. It only records `options`; the catalog reads them at registration. The
 * class has `read(ctx)` returning the content (text, bytes, or `{ text | blob, mimeType }`).
 *
 * @example
 * ```ts
 * @Resource({ uri: 'app://policies/refunds', mimeType: 'text/markdown', description: 'The refund policy' })
 * class RefundPolicy { read() { return readFileSync('refunds.md', 'utf8') } }
 * ```
 */
export function Resource(options: ResourceOptions): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(RESOURCE_OPTIONS, { ...options }, target);
  };
}

/** The options of the class's own `@Resource`. */
export function resourceOptionsOf(target: AnyClass): ResourceOptions | undefined {
  return Reflect.getOwnMetadata(RESOURCE_OPTIONS, target) as ResourceOptions | undefined;
}
