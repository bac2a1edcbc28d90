import { Logger, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type OnModuleDestroy } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createInbox, type Inbox } from '../inbox/handler';
import type { InboxOptions } from '../inbox/options';
import { AgentRunner } from '../runner/agent-runner';
import { doorModule, DoorModule, type Door } from './mount';

/** Options of {@link ToolnexusInboxModule.forRoot}: the inbox's, less what the module finds itself. */
export interface ToolnexusInboxModuleOptions extends Omit<InboxOptions, 'runner' | 'coordinator' | 'basePath'> {
  /** Where the inbox is served, without a leading slash. Default `inbox`. */
  path?: string;
}

const INBOX: Door<AgentRunner> = { name: 'ToolnexusInboxModule', path: 'inbox', provider: AgentRunner, serves: 'AgentRunner' };

/**
 * Mounts the approvals inbox (docs/operating.md, "Inbox") in a Nest app, over the
 * `AgentRunner` of `ToolnexusModule`: answering a run's suspension resumes the run here.
 * It is Nest middleware on `path` and everything under it, so guards and pipes do not apply:
 * the inbox authorizes every request itself (`authorize` is required). It reads its forms
 * whether or not Nest's default body parsers ran (`NestFactory.create(AppModule)` as it is,
 * Express or Fastify), and logs internal errors through Nest's `Logger` (context
 * `ToolnexusInbox`) with the correlation id the 500 body carries, unless `logger` is given.
 *
 * @example
 * ```ts
 * @Module({ imports: [ToolnexusModule.forRoot({ model, store }), ToolnexusInboxModule.forRoot({ authorize: bearerToken(process.env.INBOX_TOKEN) })] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusInboxModule extends DoorModule<ToolnexusInboxModuleOptions> implements OnModuleDestroy {
  private inbox?: Inbox;

  static forRoot(options: ToolnexusInboxModuleOptions): DynamicModule {
    return doorModule(ToolnexusInboxModule, INBOX, options, typeof options === 'object' && options !== null, 'options');
  }

  configure(consumer: MiddlewareConsumer): void {
    const { path, served: runner, handlerOptions: inboxOptions } = this.mount(INBOX);
    // Internal errors reach the app's log through Nest's Logger unless the host gives its own.
    const logger = inboxOptions.logger ?? new Logger('ToolnexusInbox');
    const inbox = createInbox({ ...inboxOptions, logger, runner, basePath: `/${path}` });
    this.inbox = inbox;
    const middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => inbox(request, response, next);
    consumer.apply(middleware).forRoutes({ path, method: RequestMethod.ALL }, { path: `${path}/*path`, method: RequestMethod.ALL });
  }

  /** Ends the inbox's event streams, so the HTTP server can close. */
  onModuleDestroy(): void {
    this.inbox?.close();
  }
}
