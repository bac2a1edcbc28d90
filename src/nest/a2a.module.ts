import { Logger, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer } from '@nestjs/common';
import type { A2AServeOptions } from '../a2a/server/options';
import { AgentRunner } from '../runner/agent-runner';
import { asMiddleware, doorModule, DoorModule, type Door } from './mount';

/** Options of {@link ToolnexusA2AModule.forRoot}: the agent's (`a2aHandler`'s), and where it is served. */
export interface ToolnexusA2AModuleOptions extends A2AServeOptions {
  /** Where the JSON-RPC endpoint is served (POST), its agent card under it (GET `<path>/.well-known/agent-card.json`), without a leading slash. Default `a2a`. */
  path?: string;
  /**
   * Whether the card is also served at the host's root, GET `/.well-known/agent-card.json`: where
   * the A2A spec puts it, and where the SDK's client looks for an agent given as `<host>/a2a`.
   * Default true; false when the app serves another card there.
   */
  rootCard?: boolean;
}

const A2A: Door<AgentRunner> = { name: 'ToolnexusA2AModule', path: 'a2a', provider: AgentRunner, serves: 'AgentRunner' };

/**
 * Serves the `AgentRunner` of `ToolnexusModule` as an A2A agent (docs/a2a.md) in a Nest app:
 * POST `path` is its JSON-RPC endpoint, GET `path/.well-known/agent-card.json` its card (and
 * GET `/.well-known/agent-card.json`, unless `rootCard: false`). It is
 * Nest middleware, so guards do not apply: `authenticate` signs every request in. Needs
 * `@a2a-js/sdk`, loaded when the module is configured (so `toolnexus-ts/nest` alone never loads it).
 *
 * @example
 * ```ts
 * import { ToolnexusA2AModule, ToolnexusModule } from 'toolnexus-ts/nest';
 *
 * @Module({ imports: [ToolnexusModule.forRoot({ model, store }), ToolnexusA2AModule.forRoot({ url: 'https://agents.example.com/a2a', authenticate: (req) => userOf(req) })] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusA2AModule extends DoorModule<ToolnexusA2AModuleOptions> {
  static forRoot(options: ToolnexusA2AModuleOptions): DynamicModule {
    const valid = typeof options?.authenticate === 'function';
    return doorModule(ToolnexusA2AModule, A2A, options, valid, 'authenticate: (request) => Principal | undefined');
  }

  configure(consumer: MiddlewareConsumer): void {
    const mount = this.mount(A2A);
    const { path, served: runner } = mount;
    const { rootCard = true, ...serveOptions } = mount.handlerOptions;
    // Loaded here, not at the top: the Nest entry must not need the A2A SDK unless this module is used.
    // The entry, not the handler's file: without the SDK, its MissingPeerError names the install command.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded when used
    const { a2aHandler } = require('../a2a') as typeof import('../a2a');
    // A failed run is logged with the app's own logs; the client is told only that its task failed.
    const handler = a2aHandler(runner, { ...serveOptions, logger: serveOptions.logger ?? new Logger('ToolnexusA2A') });
    const middleware = asMiddleware(handler);
    const card = '.well-known/agent-card.json';
    consumer
      .apply(middleware)
      .forRoutes(
        { path, method: RequestMethod.POST },
        { path: `${path}/${card}`, method: RequestMethod.GET },
        ...(rootCard ? [{ path: card, method: RequestMethod.GET }] : []),
      );
  }
}
