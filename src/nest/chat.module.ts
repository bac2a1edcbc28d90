import { Logger, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer } from '@nestjs/common';
import { chatHandler, type ChatHandlerOptions } from '../chat/handler';
import { chatThreadHandler } from '../chat/thread';
import { AgentRunner } from '../runner/agent-runner';
import { asMiddleware, doorModule, DoorModule, type Door } from './mount';

/** Options of {@link ToolnexusChatModule.forRoot}: the chat route's, and where it is served. */
export interface ToolnexusChatModuleOptions extends ChatHandlerOptions {
  /**
   * Where the chat route is served (POST; GET `?id=` for the stored thread; GET
   * `<path>/<chat id>/stream` for a page reconnecting), without a leading slash. Default `api/chat`.
   */
  path?: string;
}

const CHAT: Door<AgentRunner> = { name: 'ToolnexusChatModule', path: 'api/chat', provider: AgentRunner, serves: 'AgentRunner' };

/**
 * Serves the chat back end (docs/chat.md) in a Nest app, over the `AgentRunner` of
 * `ToolnexusModule`: POST `path` takes the body `useChat` sends and answers with the UI
 * message stream; GET `path?id=<chat id>` gives the stored thread back (`chatThread`: a
 * returning customer's `useChat` messages, an open approval included); GET
 * `path/<chat id>/stream` reattaches a page to its chat's run (`useChat({ resume: true })`,
 * docs/chat.md, "Reconnecting"). It is Nest middleware, so guards do not apply: `principal` authenticates
 * every request (from the request your own middleware decorated, a cookie, a token).
 *
 * @example
 * ```ts
 * import { ToolnexusChatModule, ToolnexusModule } from 'toolnexus-ts/nest';
 *
 * @Module({ imports: [ToolnexusModule.forRoot({ model, store }), ToolnexusChatModule.forRoot({ principal: (req) => userOf(req) })] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusChatModule extends DoorModule<ToolnexusChatModuleOptions> {
  static forRoot(options: ToolnexusChatModuleOptions): DynamicModule {
    const valid = typeof options?.principal === 'function';
    return doorModule(ToolnexusChatModule, CHAT, options, valid, 'principal: (request) => Principal | undefined');
  }

  configure(consumer: MiddlewareConsumer): void {
    const { path, served: runner, handlerOptions: chatOptions } = this.mount(CHAT);
    // A failed run (a model outage) is logged with the app's own logs; the page gets only its error part.
    const handler = chatHandler(runner, { ...chatOptions, logger: chatOptions.logger ?? new Logger('ToolnexusChat') });
    const middleware = asMiddleware(handler);
    consumer.apply(middleware).forRoutes({ path, method: RequestMethod.POST });
    // The reconnect is the chat handler's own GET, under the same principal as its POST.
    consumer.apply(middleware).forRoutes({ path: `${path}/:id/stream`, method: RequestMethod.GET });
    consumer.apply(asMiddleware(chatThreadHandler(runner, chatOptions))).forRoutes({ path, method: RequestMethod.GET });
  }
}
