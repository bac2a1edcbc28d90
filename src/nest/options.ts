import type { AgentRunnerOptions } from '../runner/core/options';
import type { ModuleMetadata, Type, InjectionToken, OptionalFactoryDependency } from '@nestjs/common';
import type { ChatModel } from '../models/types';
import type { SuspensionStore } from '../suspension/store';
import type { RunStore } from '../runner/core/store';
import type { RecoveryOptions } from '../runner/recovery';
import type { WaitFor } from '../suspension/coordinator';
import type { AnswerPolicy } from '../suspension/policy';
import type { ToolContext } from '../toolkit/context';
import type { ToolkitHooks } from '../toolkit/hooks';
import type { TelemetryOption } from '../telemetry/options';

/**
 * Every option of the injected `AgentRunner`, as `AgentRunnerOptions` declares it, less what the
 * module builds itself (`toolkit`, `coordinator`); `model` is optional here. Derived from the
 * runner's options, not listed again, so an option the runner gains is an option of the module
 * (guardrails, budgets, prices, durability, limits, sessions, skills, transcript hooks...).
 */
export type ToolnexusRunnerOptions = Omit<AgentRunnerOptions, 'toolkit' | 'coordinator' | 'model'> & {
  /**
   * The chat model the injected `AgentRunner` drives (`OpenAIChatModel`, `AnthropicModel`,
   * `FunctionModel`, or your own `ChatModel`). Without one, `Toolkit` and
   * `ResumeCoordinator` work as usual and every `AgentRunner` call rejects with a
   * `ToolnexusModuleError` that says the model is missing.
   */
  model?: ChatModel;
};

/**
 * What `ToolnexusModule` builds its providers from: every runner option
 * ({@link ToolnexusRunnerOptions}), and the module's own for the `Toolkit` and the
 * `ResumeCoordinator` it builds. `store` keeps suspended calls, run checkpoints and sessions.
 */
export interface ToolnexusModuleOptions extends ToolnexusRunnerOptions, ToolnexusRecoveryOption {
  /** Deadline for tool calls whose context and tool set none. */
  defaultTimeoutMs?: number;
  /** Toolkit hooks: guards, result rewriting, metrics. */
  hooks?: ToolkitHooks;
  /**
   * Where the `ResumeCoordinator` keeps suspended calls. Default: in memory (lost on
   * restart). Give a `SqliteStore` or `PostgresStore` for durable approvals.
   */
  store?: SuspensionStore & RunStore;
  /** Closes `store` when the application shuts down (`app.close()`). Default: true. */
  closeStoreOnShutdown?: boolean;
  /**
   * In-process posture, for the coordinator and the runner: answer each suspension inline
   * instead of recording it. Leave unset in an HTTP service, where the answer arrives in a
   * later request.
   */
  waitFor?: WaitFor;
  /** How long a resolving process holds a claim; see `ResumeCoordinator`. */
  leaseMs?: number;
  /**
   * Who may answer what, judged for every door built on this module's coordinator (the inbox,
   * the chat, MCP, A2A): see `ResumeCoordinator`'s `policy` and docs/who-may-answer.md.
   */
  policy?: AnswerPolicy;
  /** Separation of duties (default on with a policy): see `ResumeCoordinator`'s `separationOfDuties`. */
  separationOfDuties?: boolean;
  /**
   * OpenTelemetry for the `Toolkit`, `ResumeCoordinator` and `AgentRunner` the module builds
   * (providers, content capture, secrets): see docs/observability.md. `false` turns it off.
   * Default: the global providers, as each of them uses without the option.
   */
  telemetry?: TelemetryOption;
}

/**
 * The module's recovery loop (`AgentRunner.startRecovery`, docs/agents.md, "Restart recovers"),
 * a field of its own beside the runner's options: started when the application boots, stopped
 * when it shuts down. On by default; `false` turns it off (another process of the fleet runs it).
 */
export interface ToolnexusRecoveryOption {
  recovery?: RecoveryOptions | false;
}

/** Options of `ToolnexusModule.forRoot`. */
export interface ToolnexusModuleRootOptions extends ToolnexusModuleOptions {
  /**
   * Registers the module globally, so `Toolkit`, `ResumeCoordinator` and `AgentRunner`
   * inject anywhere and tools are discovered before any other module initialises.
   * Default: true.
   */
  isGlobal?: boolean;
}

/** A class that produces the options, for `forRootAsync({ useClass | useExisting })`. */
export interface ToolnexusOptionsFactory {
  createToolnexusOptions(): ToolnexusModuleOptions | Promise<ToolnexusModuleOptions>;
}

/** Options of `ToolnexusModule.forRootAsync`: exactly one of `useFactory`, `useClass`, `useExisting`. */
export interface ToolnexusModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** See {@link ToolnexusModuleRootOptions.isGlobal}. Default: true. */
  isGlobal?: boolean;
  useFactory?: (...deps: never[]) => ToolnexusModuleOptions | Promise<ToolnexusModuleOptions>;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useClass?: Type<ToolnexusOptionsFactory>;
  useExisting?: Type<ToolnexusOptionsFactory>;
}

/**
 * The context a host passes to tool calls in a Nest app. `request` is the HTTP request
 * (or any object that identifies a Nest request context): request-scoped `@Tool`
 * providers are resolved in its DI sub-tree, so they share instances with the
 * controller that handled it and `@Inject(REQUEST)` receives it.
 */
export type NestToolContext<TState extends object = object> = ToolContext<{ request?: object } & TState>;
