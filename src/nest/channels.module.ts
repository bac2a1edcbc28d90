import {
  Inject,
  Logger,
  Module,
  RequestMethod,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Channels, createChannels, type ChannelsOptions, type Platform } from '../channels/channels';
import { messageOf } from '../errors/message';
import { AgentRunner } from '../runner/agent-runner';
import { ToolnexusModuleError } from './errors';
import { asMiddleware, servedPath } from './mount';

/** Options of {@link ToolnexusChannelsModule.forRoot}: the channels' (`createChannels`'), less the host, and where and how often. */
export interface ToolnexusChannelsModuleOptions extends Omit<ChannelsOptions, 'host'> {
  /** Where the platforms' webhooks are served: `<path>/slack`, `<path>/teams`, `<path>/gchat` (POST), without a leading slash. Default `channels`. */
  path?: string;
  /**
   * How often the outbox ticks (`Channels.start`), in milliseconds on the channels' clock:
   * started when the application boots, stopped when it shuts down. Default 5000; `false`
   * where another process of the fleet runs it (this one still serves clicks and posts the
   * requests it suspends).
   */
  tickMs?: number | false;
}

const CHANNELS_OPTIONS = Symbol('toolnexus-channels-options');

/**
 * Delivers open approval requests to Slack, Microsoft Teams and Google Chat (docs/channels.md)
 * in a Nest app, over the `AgentRunner` of `ToolnexusModule`: a click answers as the principal
 * `principalOf` maps its verified user to, and the run continues in this process. Each
 * configured platform's webhook is served at `<path>/<platform>` (POST), as Nest middleware
 * (guards do not apply: the platform's signature or token is the check). The `Channels` it
 * builds is a provider (`app.get(Channels)`, `toolnexus-ts/channels`). The Chat SDK (`chat`,
 * `@chat-adapter/*`) is loaded when the module is built, so `toolnexus-ts/nest` alone never
 * loads it. A platform signs the bytes it sent: create the app with
 * `NestFactory.create(AppModule, { rawBody: true })` (or `bodyParser: false`), since Nest's body
 * parsers read the body before any middleware.
 *
 * @example
 * ```ts
 * @Module({ imports: [ToolnexusModule.forRoot({ model, store }), ToolnexusChannelsModule.forRoot({ platforms: { slack }, principalOf, route })] })
 * export class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusChannelsModule implements NestModule, OnApplicationBootstrap, OnModuleDestroy {
  static forRoot(options: ToolnexusChannelsModuleOptions): DynamicModule {
    const platforms = Object.keys(options?.platforms ?? {}).length;
    if ((platforms > 0 && typeof options.principalOf !== 'function') || typeof options?.route !== 'function')
      throw new ToolnexusModuleError('ToolnexusChannelsModule.forRoot needs route(call), and principalOf(user) for chat platforms');
    const { tickMs } = options;
    if (tickMs !== undefined && tickMs !== false && (!Number.isSafeInteger(tickMs) || tickMs < 1))
      throw new ToolnexusModuleError('ToolnexusChannelsModule.forRoot: tickMs must be a whole number of milliseconds, or false');
    const path = servedPath('ToolnexusChannelsModule', options.path, 'channels');
    return {
      module: ToolnexusChannelsModule,
      providers: [
        { provide: CHANNELS_OPTIONS, useValue: { ...options, path } },
        {
          provide: Channels,
          inject: [{ token: AgentRunner, optional: true }],
          useFactory: (runner: AgentRunner | undefined) => channelsOver(runner, options),
        },
      ],
      exports: [Channels],
    };
  }

  constructor(
    @Inject(CHANNELS_OPTIONS) private readonly options: ToolnexusChannelsModuleOptions & { path: string },
    @Inject(Channels) private readonly channels: Channels,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    for (const platform of Object.keys(this.options.platforms ?? {}) as Platform[]) {
      const handler = this.channels.nodeHandler(platform);
      const route = (request: IncomingMessage, response: ServerResponse): void => {
        // Nest's body parsers ran before this middleware: without the bytes they read, the
        // platform's signature cannot be checked, and the app must keep them (rawBody).
        const raw = (request as IncomingMessage & { rawBody?: unknown }).rawBody;
        if (request.readableEnded && !Buffer.isBuffer(raw)) {
          response
            .writeHead(500)
            .end('the body was parsed before this route: create the Nest app with NestFactory.create(AppModule, { rawBody: true })');
          return;
        }
        handler(request, response);
      };
      consumer.apply(asMiddleware(route)).forRoutes({ path: `${this.options.path}/${platform}`, method: RequestMethod.POST });
    }
  }

  /** Starts the outbox's tick (unless `tickMs: false`). */
  onApplicationBootstrap(): void {
    if (this.options.tickMs !== false) this.channels.start(this.options.tickMs ?? 5000);
  }

  /** Stops the tick (waiting for one in progress) before `ToolnexusModule` closes the store. */
  async onModuleDestroy(): Promise<void> {
    await this.channels.close();
  }
}

/** Builds the channels over the runner of `ToolnexusModule`; failures no delivery event carries reach Nest's `Logger`. */
async function channelsOver(runner: AgentRunner | undefined, options: ToolnexusChannelsModuleOptions): Promise<Channels> {
  if (!runner)
    throw new ToolnexusModuleError('ToolnexusChannelsModule needs ToolnexusModule in the same application (it serves its AgentRunner)');
  const { path: _path, tickMs: _tickMs, ...channelOptions } = options;
  const logger = new Logger('ToolnexusChannels');
  return createChannels({
    ...channelOptions,
    host: runner,
    onError: channelOptions.onError ?? ((error: unknown) => logger.error(messageOf(error))),
    onDelivery:
      channelOptions.onDelivery ??
      ((event) => {
        if (event.type === 'failed')
          logger.warn(`card for ${event.callId} to ${event.target} not delivered: ${event.error ?? ''}; again at ${event.retryAt ?? ''}`);
      }),
  });
}
