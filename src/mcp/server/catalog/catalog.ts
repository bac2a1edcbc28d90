import { ToolRegistrationError } from '../../../errors';
import { messageOf } from '../../../errors/message';
import type { AnyClass, ClassType } from '../../../decorators/types';
import { schemaForClass } from '../../../schema/generate';
import { planForClass } from '../../../toolkit/arguments';
import type { ToolResolver } from '../../../toolkit/toolkit';
import { McpCatalogError } from '../errors';
import { isToolResult } from '../../../results/helpers';
import { inputRoundOf, type McpInputRound } from '../input-round';
import { promptOptionsOf } from './prompt.decorator';
import { resourceOptionsOf } from './resource.decorator';
import { resourceTemplateOptionsOf } from './resource-template.decorator';
import type {
  CatalogContext,
  PromptBody,
  PromptContent,
  PromptMessage,
  PromptOptions,
  ResourceBody,
  ResourceContents,
  ResourceOptions,
  ResourceTemplateOptions,
} from './types';
import { parseUriTemplate, type UriTemplate } from './uri-template';

/** Options of an {@link McpCatalog}. */
export interface McpCatalogOptions {
  /** Builds a registered class's instance (a DI container); default `new cls()`, as the Toolkit's. */
  resolver?: ToolResolver;
  /** Largest content one read or one prompt may send, in bytes (default 4 MiB); past it the request fails, saying so. */
  maxContentBytes?: number;
  /** Most messages one prompt may return (default 1000). */
  maxPromptMessages?: number;
}

/** A resource as `resources/list` shows it. */
export interface ResourceListing {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A resource template as `resources/templates/list` shows it. */
export interface ResourceTemplateListing {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A prompt as `prompts/list` shows it, its arguments from its DTO. */
export interface PromptListing {
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required: boolean }>;
}

/** What changed in a catalog: a list (after a registration), or one resource's content. */
export type CatalogChange = { list: 'resources' | 'prompts' } | { updated: string };

/** The suggestions `completion/complete` answers. */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

type Reader = { read(...args: unknown[]): unknown; complete?: (...args: unknown[]) => unknown };
type Getter = { get(...args: unknown[]): unknown; complete?: (...args: unknown[]) => unknown };

interface ResourceEntry {
  readonly kind: 'resource';
  readonly listing: ResourceListing;
  readonly instance: Reader;
}
interface TemplateEntry {
  readonly kind: 'template';
  readonly listing: ResourceTemplateListing;
  readonly template: UriTemplate;
  readonly params?: ClassType;
  readonly instance: Reader;
}
interface PromptEntry {
  readonly kind: 'prompt';
  readonly listing: PromptListing;
  readonly args?: ClassType;
  readonly instance: Getter;
}

const MAX_COMPLETIONS = 100;
const DEFAULTS = { maxContentBytes: 4 * 1024 * 1024, maxPromptMessages: 1000 };

/**
 * The resources, resource templates and prompts an MCP server offers beside its tools (the
 * Toolkit keeps the tools). Register `@Resource`, `@ResourceTemplate` and `@Prompt` classes
 * (or instances of them) and hand the catalog to `serveMcp({ catalog })`; registering after
 * clients connected tells them the list changed, and {@link McpCatalog.updated} tells the
 * clients subscribed to a resource that its content changed. See docs/mcp.md.
 *
 * @example
 * ```ts
 * const catalog = new McpCatalog().register(RefundPolicy, OrderResource, CodeReviewPrompt)
 * await serveMcp(toolkit, { transport: 'http', catalog })
 * ```
 */
export class McpCatalog {
  private readonly resolver: ToolResolver;
  private readonly limits: typeof DEFAULTS;
  private readonly resourceEntries = new Map<string, ResourceEntry>();
  private readonly templateEntries = new Map<string, TemplateEntry>();
  private readonly promptEntries = new Map<string, PromptEntry>();
  private readonly listeners = new Set<(change: CatalogChange) => void>();

  constructor(options: McpCatalogOptions = {}) {
    this.resolver = options.resolver ?? ((cls) => new cls());
    this.limits = {
      maxContentBytes: options.maxContentBytes ?? DEFAULTS.maxContentBytes,
      maxPromptMessages: options.maxPromptMessages ?? DEFAULTS.maxPromptMessages,
    };
  }

  /**
   * Registers classes (built by the resolver) or instances of `@Resource`, `@ResourceTemplate`
   * and `@Prompt` classes. A URI, template or prompt name already taken is refused.
   *
   * @throws {@link ToolRegistrationError} naming what is wrong; nothing of that call is registered.
   */
  register(...items: Array<AnyClass | object>): this {
    const planned = items.map((item) => this.plan(item));
    const taken = {
      resource: new Set(this.resourceEntries.keys()),
      template: new Set(this.templateEntries.keys()),
      prompt: new Set(this.promptEntries.keys()),
    };
    for (const entry of planned) {
      const key = keyOf(entry);
      if (taken[entry.kind].has(key)) throw new ToolRegistrationError(`a ${entry.kind} ${key} is already registered`);
      taken[entry.kind].add(key);
    }
    const changed = new Set<'resources' | 'prompts'>();
    for (const entry of planned) {
      if (entry.kind === 'resource') this.resourceEntries.set(keyOf(entry), entry);
      else if (entry.kind === 'template') this.templateEntries.set(keyOf(entry), entry);
      else this.promptEntries.set(keyOf(entry), entry);
      changed.add(entry.kind === 'prompt' ? 'prompts' : 'resources');
    }
    for (const list of changed) this.emit({ list });
    return this;
  }

  /** Removes a resource (by URI), resource template (by its template) or prompt (by name); clients are told the list changed. */
  remove(kind: 'resource' | 'template' | 'prompt', key: string): boolean {
    const map = kind === 'resource' ? this.resourceEntries : kind === 'template' ? this.templateEntries : this.promptEntries;
    const removed = map.delete(key);
    if (removed) this.emit({ list: kind === 'prompt' ? 'prompts' : 'resources' });
    return removed;
  }

  /** Tells the clients subscribed to `uri` that its content changed (`notifications/resources/updated`). */
  updated(uri: string): void {
    this.emit({ updated: uri });
  }

  /** Listens to changes (serveMcp does, per session); returns the function that stops listening. */
  onChange(listener: (change: CatalogChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  resources(): ResourceListing[] {
    return [...this.resourceEntries.values()].map((entry) => ({ ...entry.listing }));
  }

  templates(): ResourceTemplateListing[] {
    return [...this.templateEntries.values()].map((entry) => ({ ...entry.listing }));
  }

  prompts(): PromptListing[] {
    return [...this.promptEntries.values()].map((entry) => ({
      ...entry.listing,
      ...(entry.listing.arguments ? { arguments: entry.listing.arguments.map((argument) => ({ ...argument })) } : {}),
    }));
  }

  get isEmpty(): boolean {
    return this.resourceEntries.size === 0 && this.templateEntries.size === 0 && this.promptEntries.size === 0;
  }

  /**
   * The content at `uri`: a registered resource's, else the first template (in registration
   * order) that matches it, its parameters validated into its DTO.
   *
   * @throws {@link McpCatalogError} `not-found` for a URI nothing serves, `invalid` for parameters that do not validate.
   */
  async read(uri: string, ctx: CatalogContext = {}): Promise<ResourceContents[]> {
    const resource = this.resourceEntries.get(uri);
    if (resource) return this.contents(uri, resource.listing.mimeType, await resource.instance.read(ctx));
    for (const entry of this.templateEntries.values()) {
      const raw = entry.template.match(uri);
      if (!raw) continue;
      const params = await this.validated(entry.params, raw, `resource ${uri}`);
      return this.contents(uri, entry.listing.mimeType, await entry.instance.read(params, uri, ctx));
    }
    throw new McpCatalogError(`no resource at ${uri.slice(0, 200)}`, 'not-found');
  }

  /**
   * The prompt `name` with `args` validated into its DTO.
   *
   * @throws {@link McpCatalogError} `not-found` for an unknown prompt, `invalid` for arguments that do
   * not validate, or for a prompt that asks an input round (only a 2026-07-28 client can be asked).
   */
  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    ctx: CatalogContext = {},
  ): Promise<{ description?: string; messages: PromptMessage[] }> {
    const answer = await this.promptOrRound(name, args, ctx);
    if ('inputRound' in answer)
      throw new McpCatalogError(`prompt ${name} needs input that only an MCP 2026-07-28 client can give (an input round)`, 'invalid');
    return answer;
  }

  /**
   * The prompt `name` as {@link getPrompt} gives it, or the input round its `get` asked
   * (`inputRound`, docs/mcp.md, "Input rounds"): serveMcp sends that as `input_required` to a
   * 2026-07-28 client, and gets the prompt again with the answers on `ctx.mcp.inputResponses`.
   *
   * @throws {@link McpCatalogError} as {@link getPrompt}.
   */
  async promptOrRound(
    name: string,
    args: Record<string, string> = {},
    ctx: CatalogContext = {},
  ): Promise<{ description?: string; messages: PromptMessage[] } | { inputRound: McpInputRound }> {
    const entry = this.promptEntries.get(name);
    if (!entry) throw new McpCatalogError(`no prompt named ${name.slice(0, 200)}`, 'not-found');
    const value = await this.validated(entry.args, args, `prompt ${name}`);
    const body = (await entry.instance.get(value, ctx)) as PromptBody;
    const round = isToolResult(body) ? inputRoundOf(body) : undefined;
    if (round) return { inputRound: round };
    if (isToolResult(body)) throw new McpCatalogError(`prompt ${name} returned a tool result that is not an input round`, 'invalid');
    const shaped = typeof body === 'string' ? { messages: [userText(body)] } : Array.isArray(body) ? { messages: body } : body;
    if (!shaped || !Array.isArray(shaped.messages)) throw new McpCatalogError(`prompt ${name} returned no messages`, 'invalid');
    if (shaped.messages.length > this.limits.maxPromptMessages)
      throw new McpCatalogError(
        `prompt ${name} returned ${shaped.messages.length} messages; at most ${this.limits.maxPromptMessages} are sent`,
        'invalid',
      );
    const size = Buffer.byteLength(JSON.stringify(shaped.messages) ?? '', 'utf8');
    if (size > this.limits.maxContentBytes)
      throw new McpCatalogError(`prompt ${name} is ${size} bytes; at most ${this.limits.maxContentBytes} are sent`, 'invalid');
    const description = shaped.description ?? entry.listing.description;
    return { ...(description !== undefined ? { description } : {}), messages: shaped.messages };
  }

  /**
   * Suggestions for an argument of a prompt or a parameter of a resource template, from its
   * class's `complete` method; none when it has none. At most 100 are sent (`hasMore` says so).
   */
  async complete(
    ref: { type: 'prompt'; name: string } | { type: 'template'; uriTemplate: string },
    argument: { name: string; value: string },
    context: { arguments?: Record<string, string> } = {},
  ): Promise<Completion> {
    const entry = ref.type === 'prompt' ? this.promptEntries.get(ref.name) : this.templateEntries.get(ref.uriTemplate);
    if (!entry) throw new McpCatalogError(`no ${ref.type === 'prompt' ? 'prompt' : 'resource template'} to complete for`, 'not-found');
    if (typeof entry.instance.complete !== 'function') return { values: [], hasMore: false };
    const values = await entry.instance.complete(argument.name, argument.value, { arguments: { ...context.arguments } });
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'string'))
      throw new McpCatalogError('complete() must return an array of strings', 'invalid');
    return { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS };
  }

  private emit(change: CatalogChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A session that cannot be told (closed mid-notification) does not stop the others.
      }
    }
  }

  private plan(item: AnyClass | object): ResourceEntry | TemplateEntry | PromptEntry {
    const cls = (typeof item === 'function' ? item : item.constructor) as AnyClass;
    const resource = resourceOptionsOf(cls);
    const template = resourceTemplateOptionsOf(cls);
    const prompt = promptOptionsOf(cls);
    const declared = [resource, template, prompt].filter((options) => options !== undefined).length;
    if (declared !== 1)
      throw new ToolRegistrationError(
        `${cls.name || 'an anonymous class'} needs exactly one of @Resource, @ResourceTemplate or @Prompt (it has ${declared})`,
      );
    const instance = this.instanceOf(item, cls);
    if (resource) return this.resourceEntry(cls, resource, instance);
    if (template) return this.templateEntry(cls, template, instance);
    return this.promptEntry(cls, prompt as PromptOptions, instance);
  }

  private instanceOf(item: AnyClass | object, cls: AnyClass): Record<string, unknown> {
    if (typeof item !== 'function') return item as Record<string, unknown>;
    try {
      return this.resolver(cls as ClassType) as Record<string, unknown>;
    } catch (error) {
      throw new ToolRegistrationError(`cannot build ${cls.name}: ${messageOf(error)}`, { cause: error });
    }
  }

  private resourceEntry(cls: AnyClass, options: ResourceOptions, instance: Record<string, unknown>): ResourceEntry {
    if (typeof options.uri !== 'string' || options.uri === '') throw new ToolRegistrationError(`@Resource on ${cls.name} needs a uri`);
    return {
      kind: 'resource',
      listing: listingOf(cls, options, { uri: options.uri }),
      instance: withMethod(cls, instance, 'read') as Reader,
    };
  }

  private templateEntry(cls: AnyClass, options: ResourceTemplateOptions, instance: Record<string, unknown>): TemplateEntry {
    let template: UriTemplate;
    try {
      template = parseUriTemplate(options.uriTemplate);
    } catch (error) {
      throw new ToolRegistrationError(`@ResourceTemplate on ${cls.name}: ${messageOf(error)}`);
    }
    if (options.params) {
      const properties = Object.keys(schemaForClass(options.params).properties ?? {});
      const missing = template.variables.filter((variable) => !properties.includes(variable));
      if (missing.length > 0)
        throw new ToolRegistrationError(
          `@ResourceTemplate on ${cls.name}: its params DTO ${options.params.name} has no property for {${missing.join('}, {')}}`,
        );
    }
    return {
      kind: 'template',
      listing: listingOf(cls, options, { uriTemplate: options.uriTemplate }),
      template,
      ...(options.params ? { params: options.params } : {}),
      instance: withMethod(cls, instance, 'read') as Reader,
    };
  }

  private promptEntry(cls: AnyClass, options: PromptOptions, instance: Record<string, unknown>): PromptEntry {
    const name =
      options.name ??
      cls.name
        .replace(/Prompt$/, '')
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .toLowerCase();
    const listing: PromptListing = { name };
    if (options.title !== undefined) listing.title = options.title;
    if (options.description !== undefined) listing.description = options.description;
    if (options.args) {
      const schema = schemaForClass(options.args);
      const required = new Set(schema.required ?? []);
      listing.arguments = Object.entries(schema.properties ?? {}).map(([argument, property]) => {
        const description = (property as { description?: unknown }).description;
        return { name: argument, ...(typeof description === 'string' ? { description } : {}), required: required.has(argument) };
      });
    }
    return {
      kind: 'prompt',
      listing,
      ...(options.args ? { args: options.args } : {}),
      instance: withMethod(cls, instance, 'get') as Getter,
    };
  }

  private async validated(dto: ClassType | undefined, raw: Record<string, string>, what: string): Promise<object> {
    if (!dto) return { ...raw };
    const parsed = await planForClass(dto).parse(raw);
    if (!parsed.ok) throw new McpCatalogError(`invalid arguments for ${what}: ${parsed.problem}`, 'invalid');
    return parsed.value;
  }

  private contents(uri: string, mimeType: string | undefined, body: unknown): ResourceContents[] {
    const items = Array.isArray(body) ? (body as unknown[]) : [body];
    const contents = items.map((item) => contentOf(uri, mimeType, item as ResourceBody | ResourceContents));
    const size = contents.reduce((total, item) => total + ('text' in item ? Buffer.byteLength(item.text, 'utf8') : item.blob.length), 0);
    if (size > this.limits.maxContentBytes)
      throw new McpCatalogError(`resource ${uri} is ${size} bytes; at most ${this.limits.maxContentBytes} are sent`, 'invalid');
    return contents;
  }
}

function keyOf(entry: ResourceEntry | TemplateEntry | PromptEntry): string {
  return entry.kind === 'resource' ? entry.listing.uri : entry.kind === 'template' ? entry.listing.uriTemplate : entry.listing.name;
}

function listingOf<T extends object>(
  cls: AnyClass,
  options: { name?: string; title?: string; description?: string; mimeType?: string },
  key: T,
): T & { name: string; title?: string; description?: string; mimeType?: string } {
  return {
    ...key,
    name: options.name ?? cls.name,
    ...(options.title !== undefined ? { title: options.title } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.mimeType !== undefined ? { mimeType: options.mimeType } : {}),
  };
}

function withMethod(cls: AnyClass, instance: Record<string, unknown>, method: 'read' | 'get'): Record<string, unknown> {
  if (typeof instance[method] !== 'function') throw new ToolRegistrationError(`${cls.name} has no ${method}() method`);
  return instance;
}

function userText(text: string): PromptMessage {
  return { role: 'user', content: { type: 'text', text } satisfies PromptContent };
}

function contentOf(uri: string, mimeType: string | undefined, item: ResourceBody | ResourceContents): ResourceContents {
  const type = mimeType !== undefined ? { mimeType } : {};
  if (typeof item === 'string') return { uri, ...type, text: item };
  if (item instanceof Uint8Array) return { uri, ...type, blob: Buffer.from(item).toString('base64') };
  if (typeof item === 'object' && item !== null) {
    const own = { uri: 'uri' in item && typeof item.uri === 'string' ? item.uri : uri, ...type };
    if (typeof item.mimeType === 'string') own.mimeType = item.mimeType;
    if ('text' in item && typeof item.text === 'string') return { ...own, text: item.text };
    if ('blob' in item && (typeof item.blob === 'string' || item.blob instanceof Uint8Array))
      return { ...own, blob: typeof item.blob === 'string' ? item.blob : Buffer.from(item.blob).toString('base64') };
  }
  throw new McpCatalogError(`resource ${uri} read() returned neither text nor bytes`, 'invalid');
}
