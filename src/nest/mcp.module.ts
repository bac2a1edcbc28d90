import { Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type OnModuleDestroy } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { McpEndpoint, McpEndpointOptions } from '../mcp/server/http-endpoint';
import type { HttpGuard } from '../mcp/server/http-guard';
import { McpCatalog } from '../mcp/server/catalog/catalog';
import { ResumeCoordinator } from '../suspension/coordinator';
import { asMiddleware, doorModule, DoorModule, type Door } from './mount';

/**
 * Options of {@link ToolnexusMcpModule.forRoot}: `serveMcp`'s over HTTP, less what Nest's own
 * server decides; the 2026-07-28 ones (`requestStateKeys`, `requestStateTtlMs`, `inboxUrl`,
 * `tasks`) included, since the endpoint serves both eras.
 */
export interface ToolnexusMcpModuleOptions extends McpEndpointOptions {
  /** Where the Streamable HTTP endpoint is served (POST, GET, DELETE), without a leading slash. Default `mcp`. */
  path?: string;
  /**
   * `Host` values accepted, against DNS rebinding, as `serveMcp`'s. Default: `localhost`,
   * `127.0.0.1`, `[::1]` and the address the request came in on, each with the port it came in
   * on. List the names clients use to reach the app behind a proxy or on a LAN address.
   */
  allowedHosts?: string[];
  /** `Origin` values accepted when a browser sends one; default the origins of `allowedHosts`. */
  allowedOrigins?: string[];
}

const MCP: Door<ResumeCoordinator> = { name: 'ToolnexusMcpModule', path: 'mcp', provider: ResumeCoordinator, serves: 'coordinator' };

/**
 * Serves the tools of `ToolnexusModule` to MCP clients (docs/mcp.md) in a Nest app: its
 * `ResumeCoordinator` (so its store, answer policy and the module's discovered catalog) behind
 * `serveMcp`'s Streamable HTTP endpoint, on Nest's own HTTP server at `path`: 2025-11-25
 * sessions and stateless 2026-07-28 requests (MRTR round trips, tasks) alike. It is Nest
 * middleware, so guards do not apply: `authorize` signs every request in, and the call is made on
 * behalf of that principal. Needs `@modelcontextprotocol/server` (both eras), loaded when the
 * module is configured (so `toolnexus-ts/nest` alone never loads it).
 *
 * @example
 * ```ts
 * import { ToolnexusMcpModule, ToolnexusModule } from 'toolnexus-ts/nest';
 *
 * @Module({ imports: [ToolnexusModule.forRoot({ store }), ToolnexusMcpModule.forRoot({ authorize: (req) => userOf(req) })] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusMcpModule extends DoorModule<ToolnexusMcpModuleOptions> implements OnModuleDestroy {
  private endpoint?: McpEndpoint;

  static forRoot(options: ToolnexusMcpModuleOptions = {}): DynamicModule {
    return doorModule(ToolnexusMcpModule, MCP, options, typeof options === 'object' && options !== null, 'options');
  }

  configure(consumer: MiddlewareConsumer): void {
    const mount = this.mount(MCP);
    const { path, served: coordinator } = mount;
    const { allowedHosts, allowedOrigins, ...endpointOptions } = mount.handlerOptions;
    // Loaded here, not at the top: the Nest entry must not need the MCP SDK unless this module is used.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional part, loaded when used
    const { mcpEndpoint } = require('../mcp/server/http-endpoint') as typeof import('../mcp/server/http-endpoint');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    const { defaultAllowedHosts, HttpGuard: Guard } = require('../mcp/server/http-guard') as typeof import('../mcp/server/http-guard');
    const fixed = allowedHosts === undefined ? undefined : new Guard(allowedHosts, allowedOrigins);
    // Nest picks the port at `listen`: the default hosts are those of the address and port each request came in on.
    const byPort = new Map<string, HttpGuard>();
    const guardOf = (req: IncomingMessage): HttpGuard => {
      if (fixed) return fixed;
      const key = `${req.socket.localAddress ?? ''} ${req.socket.localPort ?? 0}`;
      let guard = byPort.get(key);
      if (!guard) {
        guard = new Guard(defaultAllowedHosts(req.socket.localAddress ?? '127.0.0.1', req.socket.localPort ?? 0), allowedOrigins);
        byPort.set(key, guard);
      }
      return guard;
    };
    const catalog = endpointOptions.catalog ?? this.moduleRef.get(McpCatalog, { strict: false });
    const endpoint = mcpEndpoint(coordinator, { ...endpointOptions, catalog }, guardOf);
    this.endpoint = endpoint;
    consumer.apply(asMiddleware((request, response) => endpoint.handle(request, response))).forRoutes({ path, method: RequestMethod.ALL });
  }

  /** Closes the MCP sessions, so the HTTP server can close. */
  async onModuleDestroy(): Promise<void> {
    await this.endpoint?.close();
  }
}
