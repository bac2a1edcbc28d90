import { Inject, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import type { ClassType } from '../decorators/types';
import { AgentRunner } from '../runner/agent-runner';
import type { ChatModel, ModelResponse } from '../models/types';
import { ResumeCoordinator } from '../suspension/coordinator';
import { Toolkit } from '../toolkit/toolkit';
import { ToolnexusModuleError } from './errors';
import type {
  ToolnexusModuleAsyncOptions,
  ToolnexusModuleOptions,
  ToolnexusModuleRootOptions,
  ToolnexusOptionsFactory,
  ToolnexusRunnerOptions,
} from './options';
import { ToolDiscovery } from './tool-discovery';
import { CatalogDiscovery } from './catalog-discovery';
import { McpCatalog } from '../mcp/server/catalog/catalog';

/** Injection token of the resolved {@link ToolnexusModuleOptions}. */
export const TOOLNEXUS_OPTIONS = Symbol.for('toolnexus:nest-options');

/**
 * Brings toolnexus into a Nest application: every provider whose class carries `@Tool`
 * is discovered and registered in an injectable {@link Toolkit}, served by an injectable
 * {@link ResumeCoordinator} (over `options.store`) and {@link AgentRunner} (over `options.model`).
 *
 * Tools are ordinary providers, so they get constructor injection and Nest's scopes:
 * - default (singleton): the instance Nest built is registered as it is;
 * - transient: the Toolkit gets its own instance, built once at boot;
 * - request-scoped (or depending on a request-scoped provider): resolved per call, in
 *   the DI sub-tree of `ctx.request` when the call's context carries one (see
 *   {@link NestToolContext}), else in a fresh context of its own.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [ToolnexusModule.forRoot({ model: new OpenAIChatModel({ baseUrl, apiKey, model: 'gpt-4o-mini' }), store })],
 *   providers: [BankService, TransferTool],
 * })
 * class AppModule {}
 * ```
 */
@Module({})
export class ToolnexusModule implements OnApplicationShutdown {
  /** Configures the module with options known up front. */
  static forRoot(options: ToolnexusModuleRootOptions = {}): DynamicModule {
    const { isGlobal = true, ...moduleOptions } = checkedOptions(options) as ToolnexusModuleRootOptions;
    return ToolnexusModule.build(isGlobal, [], [{ provide: TOOLNEXUS_OPTIONS, useValue: moduleOptions }]);
  }

  /** Configures the module from other providers (a config service, a database pool, ...). */
  static forRootAsync(options: ToolnexusModuleAsyncOptions): DynamicModule {
    if (typeof options !== 'object' || options === null)
      throw new ToolnexusModuleError(
        'ToolnexusModule.forRootAsync needs options: { useFactory, inject?, imports? } or { useClass } or { useExisting }',
      );
    return ToolnexusModule.build(options.isGlobal ?? true, options.imports ?? [], optionsProviders(options));
  }

  private static build(
    isGlobal: boolean,
    imports: NonNullable<ToolnexusModuleAsyncOptions['imports']>,
    optionProviders: Provider[],
  ): DynamicModule {
    const toolkit: Provider = {
      provide: Toolkit,
      inject: [TOOLNEXUS_OPTIONS, ModuleRef],
      useFactory: (options: ToolnexusModuleOptions, moduleRef: ModuleRef) =>
        new Toolkit({
          defaultTimeoutMs: options.defaultTimeoutMs,
          hooks: options.hooks,
          telemetry: options.telemetry,
          // `toolkit.register(SomeTool)` at run time takes the provider Nest already built.
          resolver: (cls: ClassType) => moduleRef.get(cls, { strict: false }),
        }),
    };
    const coordinator: Provider = {
      provide: ResumeCoordinator,
      inject: [TOOLNEXUS_OPTIONS, Toolkit],
      useFactory: (options: ToolnexusModuleOptions, tools: Toolkit) =>
        new ResumeCoordinator({
          toolkit: tools,
          store: options.store,
          waitFor: options.waitFor,
          leaseMs: options.leaseMs,
          telemetry: options.telemetry,
          // One clock for the claims and the runner's driver lease (a test's fake one steps both).
          ...(options.clock === undefined ? {} : { clock: options.clock }),
          ...(options.policy === undefined ? {} : { policy: options.policy }),
          ...(options.separationOfDuties === undefined ? {} : { separationOfDuties: options.separationOfDuties }),
        }),
    };
    const runner: Provider = {
      provide: AgentRunner,
      inject: [TOOLNEXUS_OPTIONS, Toolkit, ResumeCoordinator],
      useFactory: (options: ToolnexusModuleOptions, tools: Toolkit, resume: ResumeCoordinator) =>
        new AgentRunner({ ...runnerOptionsOf(options), model: options.model ?? new MissingModel(), toolkit: tools, coordinator: resume }),
    };
    // The MCP catalog (resources, templates, prompts) discovered like tools; it needs no MCP SDK until served.
    const catalog: Provider = { provide: McpCatalog, useFactory: () => new McpCatalog() };
    return {
      module: ToolnexusModule,
      global: isGlobal,
      imports: [DiscoveryModule, ...imports],
      providers: [...optionProviders, toolkit, coordinator, runner, ToolDiscovery, catalog, CatalogDiscovery],
      exports: [TOOLNEXUS_OPTIONS, Toolkit, ResumeCoordinator, AgentRunner, McpCatalog],
    };
  }

  constructor(
    @Inject(TOOLNEXUS_OPTIONS) private readonly options: ToolnexusModuleOptions,
    private readonly coordinator: ResumeCoordinator,
  ) {}

  /** Releases the store's connections or file handles with the application. */
  async onApplicationShutdown(): Promise<void> {
    if (this.options.closeStoreOnShutdown !== false) await this.coordinator.store.close();
  }
}

/**
 * The module's own options, which configure the `Toolkit` and the `ResumeCoordinator` and are
 * not the runner's. Every key is listed once, checked by the type: a new module option that is
 * not a runner option must be added here, or the compiler says so.
 */
const MODULE_OWN_OPTIONS: Readonly<Record<Exclude<keyof ToolnexusModuleOptions, keyof ToolnexusRunnerOptions>, true>> = {
  defaultTimeoutMs: true,
  hooks: true,
  store: true,
  closeStoreOnShutdown: true,
  leaseMs: true,
  policy: true,
  separationOfDuties: true,
};

/**
 * The runner's options out of the module's: everything but the module's own, so every
 * `AgentRunner` option given to `forRoot` or returned by a `forRootAsync` factory reaches the
 * runner as it was given. Internal (the test of the module's options calls it).
 */
export function runnerOptionsOf(options: ToolnexusModuleOptions): ToolnexusRunnerOptions {
  const runner: Record<string, unknown> = { ...options };
  for (const key of Object.keys(MODULE_OWN_OPTIONS)) delete runner[key];
  return runner;
}

function optionsProviders(options: ToolnexusModuleAsyncOptions): Provider[] {
  const ways = [options.useFactory, options.useClass, options.useExisting].filter((way) => way !== undefined).length;
  if (ways !== 1) {
    throw new ToolnexusModuleError(`ToolnexusModule.forRootAsync needs exactly one of useFactory, useClass or useExisting (got ${ways})`);
  }
  const { useFactory } = options;
  if (useFactory) {
    return [
      {
        provide: TOOLNEXUS_OPTIONS,
        useFactory: async (...deps: never[]) => checkedOptions(await useFactory(...deps)),
        inject: options.inject ?? [],
      },
    ];
  }
  const factoryClass = (options.useClass ?? options.useExisting) as ClassType<ToolnexusOptionsFactory>;
  const fromFactory: Provider = {
    provide: TOOLNEXUS_OPTIONS,
    inject: [factoryClass],
    useFactory: async (factory: ToolnexusOptionsFactory) => checkedOptions(await factory.createToolnexusOptions()),
  };
  return options.useClass ? [fromFactory, { provide: factoryClass, useClass: factoryClass }] : [fromFactory];
}

/** A factory that forgot its `return` must fail the boot here, not as a TypeError later. */
function checkedOptions(options: unknown): ToolnexusModuleOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ToolnexusModuleError(
      `ToolnexusModule options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`,
    );
  }
  return options;
}

/**
 * Stands in for the model when the options give none, so an app that only hosts tools
 * boots; the first `AgentRunner` call says what is missing instead of failing obscurely.
 */
class MissingModel implements ChatModel {
  readonly provider = 'none';
  complete(): Promise<ModelResponse> {
    return Promise.reject(
      new ToolnexusModuleError(
        'AgentRunner has no chat model: pass `model` to ToolnexusModule.forRoot or return it from the forRootAsync factory',
      ),
    );
  }
}
