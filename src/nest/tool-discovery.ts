import { Injectable, type OnModuleInit } from '@nestjs/common';
import { SELF_DECLARED_DEPS_METADATA } from '@nestjs/common/constants';
import { ContextIdFactory, DiscoveryService, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { toolOptionsOf } from '../decorators/tool.decorator';
import type { ClassType, ToolOptions } from '../decorators/types';
import { ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import type { ToolContext } from '../toolkit/context';
import { defineTool, type FunctionTool } from '../toolkit/define-tool';
import { isStandardSchema } from '../toolkit/standard-plan';
import { defaultToolName, Toolkit } from '../toolkit/toolkit';
import { ToolnexusModuleError } from './errors';
import type { NestToolContext } from './options';

interface Runnable {
  run(args: object, ctx?: ToolContext): unknown;
}

/** How one discovered provider becomes a tool. */
type Discovered =
  | { kind: 'instance'; instance: object; cls: ClassType; where: string }
  | { kind: 'per-call'; cls: ClassType; options: ToolOptions; where: string };

/**
 * Finds every provider whose class carries `@Tool` and registers it in the module's
 * {@link Toolkit}. Runs in `onModuleInit`: by then Nest has built every singleton, and
 * because `ToolnexusModule` is global by default Nest 11 runs its hook before any other
 * module's, so the Toolkit is complete when application code first sees it.
 */
@Injectable()
export class ToolDiscovery implements OnModuleInit {
  /** Request-scoped tool instances by request, so one request's calls share one instance. */
  private readonly byRequest = new WeakMap<object, Map<ClassType, Promise<Runnable>>>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly moduleRef: ModuleRef,
    private readonly toolkit: Toolkit,
  ) {}

  async onModuleInit(): Promise<void> {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const found = await this.inspect(wrapper);
      if (!found) continue;
      const identity = found.kind === 'instance' ? found.instance : found.cls;
      // The same instance is listed again when a provider is aliased (`useExisting`).
      if (seen.has(identity)) continue;
      seen.add(identity);
      this.register(found);
    }
  }

  private async inspect(wrapper: InstanceWrapper): Promise<Discovered | undefined> {
    const where = `${describeToken(wrapper)} in ${wrapper.host?.name ?? 'an unknown module'}`;
    const metatype = wrapper.metatype;
    const isClassProvider = typeof metatype === 'function' && !wrapper.inject;
    const toolClass = isClassProvider && toolOptionsOf(metatype as ClassType) ? (metatype as ClassType) : undefined;

    if (!wrapper.isDependencyTreeStatic()) {
      // Request-scoped (or depending on something that is): there is no instance to
      // register, so the tool is resolved per call, in the call's request context.
      if (!toolClass) return undefined;
      const options = toolOptionsOf(toolClass) as ToolOptions;
      return { kind: 'per-call', cls: toolClass, options, where };
    }
    if (wrapper.isTransient) {
      if (!toolClass) return undefined;
      // A transient provider has one instance per consumer; the Toolkit is one more consumer.
      const instance = await this.moduleRef.resolve<object>(toolClass, undefined, { strict: false });
      return { kind: 'instance', instance, cls: toolClass, where };
    }
    const instance: unknown = wrapper.instance;
    if (typeof instance !== 'object' || instance === null) return undefined;
    const cls = instance.constructor as ClassType | undefined;
    if (!cls || !toolOptionsOf(cls)) return undefined;
    return { kind: 'instance', instance, cls, where };
  }

  private register(found: Discovered): void {
    checkDecoratorMetadata(found.cls, found.where);
    try {
      this.toolkit.register(found.kind === 'instance' ? found.instance : this.perCallTool(found.cls, found.options));
    } catch (error) {
      if (error instanceof ToolnexusError)
        throw new ToolnexusModuleError(`cannot register @Tool provider ${found.where}: ${messageOf(error)}`);
      throw error;
    }
  }

  /**
   * A stand-in with the tool's own name, description and arguments whose `run` asks Nest
   * for the instance of the call's request context, then runs it. Calls that carry the
   * same `ctx.request` share one instance, as Nest's request scope promises.
   */
  private perCallTool(cls: ClassType, options: ToolOptions): FunctionTool {
    if (typeof (cls.prototype as Partial<Runnable>).run !== 'function') {
      throw new ToolnexusModuleError(`@Tool provider ${cls.name} has no run method`);
    }
    const run = async (args: object, ctx?: ToolContext): Promise<unknown> => {
      const instance = await this.instanceFor(cls, ctx);
      return ctx === undefined ? instance.run(args) : instance.run(args, ctx);
    };
    const common = { name: options.name ?? defaultToolName(cls.name), description: options.description, timeoutMs: options.timeoutMs };
    const args = options.args;
    if (isStandardSchema(args)) return defineTool({ ...common, args: args, sensitive: options.sensitive, run });
    return args ? defineTool({ ...common, args, run }) : defineTool({ ...common, inputSchema: options.inputSchema, run });
  }

  private async instanceFor(cls: ClassType, ctx: NestToolContext | undefined): Promise<Runnable> {
    const request = ctx?.request;
    if (typeof request !== 'object' || request === null) {
      return this.moduleRef.resolve<Runnable>(cls, ContextIdFactory.create(), { strict: false });
    }
    // Nest would hand back the same instance for this request anyway; remembering it skips
    // the container walk on the request's later calls, and goes away with the request.
    let perClass = this.byRequest.get(request);
    if (!perClass) this.byRequest.set(request, (perClass = new Map<ClassType, Promise<Runnable>>()));
    let instance = perClass.get(cls);
    if (!instance) {
      const contextId = ContextIdFactory.getByRequest(request);
      this.moduleRef.registerRequestByContextId(request, contextId);
      instance = this.moduleRef.resolve<Runnable>(cls, contextId, { strict: false });
      perClass.set(cls, instance);
      // A failed resolution is not remembered: the next call of the request tries again.
      instance.catch(() => perClass?.delete(cls));
    }
    return instance;
  }
}

/**
 * A tool class whose constructor takes parameters Nest cannot name is built with `undefined`
 * for each of them: the app boots and the tool fails at its first call with a raw
 * `TypeError`. Refused here, at module init, in the two ways it happens:
 *
 * - the constructor is inherited from a base class that has no decorator: TypeScript emits
 *   `design:paramtypes` only on a decorated class that declares a constructor, Nest looks the
 *   metadata up through the prototype chain, and finds none (`cls.length` is 0 for an
 *   inherited constructor, so the parameter count is the declaring class's);
 * - the app was compiled without `emitDecoratorMetadata`, or by a tool that drops it (a plain
 *   esbuild or swc set-up).
 *
 * Either passes when every parameter names its token with `@Inject(...)`.
 */
function checkDecoratorMetadata(cls: ClassType, where: string): void {
  const declaring = constructorDeclaringClass(cls);
  const parameters = declaring.length;
  // Read as Nest's injector reads them: inherited lookups, so a decorated base class counts.
  if (parameters === 0 || Reflect.getMetadata('design:paramtypes', cls) !== undefined) return;
  const declared: unknown = Reflect.getMetadata(SELF_DECLARED_DEPS_METADATA, cls);
  if (Array.isArray(declared) && declared.length >= parameters) return;
  if (declaring !== cls) {
    throw new ToolnexusModuleError(
      `@Tool provider ${where}: ${cls.name} inherits its constructor from ${declaring.name}, which takes ${parameters} parameter(s) ` +
        `but has no design:paramtypes metadata, so Nest would build ${cls.name} with undefined for each: ` +
        `put @Injectable() on ${declaring.name} (with "emitDecoratorMetadata": true in tsconfig.json), ` +
        `declare a constructor in ${cls.name} that takes the dependencies and passes them to super(...), or name each with @Inject(Token)`,
    );
  }
  throw new ToolnexusModuleError(
    `@Tool provider ${where}: its constructor takes ${parameters} parameter(s) but ${cls.name} has no design:paramtypes metadata, ` +
      'so Nest would inject undefined for each: compile with "emitDecoratorMetadata": true (and "experimentalDecorators": true) ' +
      'in tsconfig.json (esbuild/swc/Vite set-ups need their decorator-metadata option too), or name each dependency with @Inject(Token)',
  );
}

/**
 * The class whose constructor `new cls()` runs: `cls` itself when it declares one, else the
 * nearest base class that does (Nest then passes `cls` what it finds for that constructor).
 */
function constructorDeclaringClass(cls: ClassType): ClassType {
  let current = cls;
  for (;;) {
    if (declaresConstructor(current)) return current;
    const base: unknown = Object.getPrototypeOf(current);
    if (typeof base !== 'function' || base === Function.prototype) return current;
    current = base as ClassType;
  }
}

/**
 * Whether `cls` has a constructor of its own. A decorated class that declares one always has
 * its own `design:paramtypes` when metadata is emitted (`[]` for no parameters), and an
 * inherited constructor has `length` 0. Without metadata a declared constructor with no
 * parameters (`constructor() { super(new Ledger()) }`) looks like an inherited one by both, so
 * the class's source decides: refusing a tool that works would leave no way to boot it, while
 * missing a mention of `constructor(` in its body only falls back to the first-call failure.
 */
function declaresConstructor(cls: ClassType): boolean {
  if (cls.length > 0 || Reflect.getOwnMetadata('design:paramtypes', cls) !== undefined) return true;
  const source = Function.prototype.toString.call(cls);
  return source.startsWith('class') && /\bconstructor\s*\(/.test(source);
}

function describeToken(wrapper: InstanceWrapper): string {
  const token: unknown = wrapper.token;
  if (typeof token === 'function') return token.name;
  return String(token);
}
