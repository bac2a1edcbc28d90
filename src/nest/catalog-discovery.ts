import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { AnyClass } from '../decorators/types';
import { ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import { McpCatalog } from '../mcp/server/catalog/catalog';
import { promptOptionsOf } from '../mcp/server/catalog/prompt.decorator';
import { resourceOptionsOf } from '../mcp/server/catalog/resource.decorator';
import { resourceTemplateOptionsOf } from '../mcp/server/catalog/resource-template.decorator';
import { ToolnexusModuleError } from './errors';

/**
 * Finds every singleton provider whose class carries `@Resource`, `@ResourceTemplate` or
 * `@Prompt` and registers it in the module's {@link McpCatalog}, as tools are discovered
 * into the Toolkit: they are ordinary providers, with constructor injection. Hand the catalog
 * to `serveMcp(coordinator, { catalog })`. (Catalog classes are read per request of a client,
 * not per tool call, so request scope does not apply to them.)
 */
@Injectable()
export class CatalogDiscovery implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly catalog: McpCatalog,
  ) {}

  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null || seen.has(instance)) continue;
      const cls = instance.constructor as AnyClass | undefined;
      if (!cls || !(resourceOptionsOf(cls) || resourceTemplateOptionsOf(cls) || promptOptionsOf(cls))) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient)
        throw new ToolnexusModuleError(`catalog provider ${cls.name} must be a singleton (a resource or prompt is not per request)`);
      seen.add(instance);
      try {
        this.catalog.register(instance);
      } catch (error) {
        if (error instanceof ToolnexusError)
          throw new ToolnexusModuleError(`cannot register catalog provider ${cls.name}: ${messageOf(error)}`);
        throw error;
      }
    }
  }
}
