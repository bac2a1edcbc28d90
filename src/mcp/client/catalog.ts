import type { Client } from '@modelcontextprotocol/client';
import type { SkillDefinition } from '../../skills/types';
import type { Connection, Connections } from './connection';
import { McpConnectionError } from './errors';
import { said } from './failures';
import type { SourceSettings } from './options';
import { listRemoteSkills, remoteSkillDefinitions, type TakenSkill } from './skills';
import type { McpServerPrompt, McpServerResource } from './types';

const MAX_PROMPT_MESSAGES = 1000;
const RESOURCE_FIELDS = ['uri', 'name', 'title', 'description', 'mimeType'] as const;
const PROMPT_FIELDS = ['name', 'title', 'description', 'arguments'] as const;

/** One page of a listing, whatever it lists. */
type Page = { items: object[]; next: string | undefined };

/**
 * The servers' own resources and prompts: listed (every page, within the bounds) and read,
 * bounded by `maxOutputChars` and redacted of each server's secrets.
 */
export class RemoteCatalog {
  constructor(
    private readonly settings: SourceSettings,
    private readonly connections: Connections,
  ) {}

  /** The resources of every connected server (or of one). */
  resources(server?: string): Promise<McpServerResource[]> {
    return this.listed<McpServerResource>(server, 'resources', RESOURCE_FIELDS, async (client, params, options) => {
      const page = await client.listResources(params, options);
      return { items: page.resources, next: page.nextCursor };
    });
  }

  /** Reads a resource of `server`: its text and base64 contents. */
  async readResource(server: string, uri: string): Promise<Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>> {
    const connection = this.connections.connected(server);
    const answer = await this.asked(connection, 'resources/read', () =>
      connection.client.readResource({ uri }, { timeout: this.connections.timeoutOf(connection) }),
    );
    const contents = answer.contents.map(
      (item) => pick(item, ['uri', 'mimeType', 'text', 'blob']) as { uri: string; mimeType?: string; text?: string; blob?: string },
    );
    this.bounded(connection, `resource ${uri}`, contents);
    return connection.redactor.deep(contents);
  }

  /** The prompts of every connected server (or of one). */
  prompts(server?: string): Promise<McpServerPrompt[]> {
    return this.listed<McpServerPrompt>(server, 'prompts', PROMPT_FIELDS, async (client, params, options) => {
      const page = await client.listPrompts(params, options);
      return { items: page.prompts, next: page.nextCursor };
    });
  }

  /** A prompt of `server` with its arguments: its messages, at most {@link MAX_PROMPT_MESSAGES}. */
  async getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
  ): Promise<{ description?: string; messages: Array<{ role: 'user' | 'assistant'; content: Record<string, unknown> }> }> {
    const connection = this.connections.connected(server);
    const answer = await this.asked(connection, 'prompts/get', () =>
      connection.client.getPrompt({ name, arguments: args }, { timeout: this.connections.timeoutOf(connection) }),
    );
    if (answer.messages.length > MAX_PROMPT_MESSAGES)
      throw new McpConnectionError(
        `server ${server}: prompt ${name} has ${answer.messages.length} messages; at most ${MAX_PROMPT_MESSAGES} are read`,
      );
    const messages = answer.messages.map((message) => ({ role: message.role, content: { ...message.content } }));
    this.bounded(connection, `prompt ${name}`, messages);
    return connection.redactor.deep({ ...(answer.description !== undefined ? { description: answer.description } : {}), messages });
  }

  /** The skills of every connected server that serves the Skills extension (or of one), as `loadSkills` definitions. */
  async skills(server?: string): Promise<SkillDefinition[]> {
    const taken: TakenSkill[] = [];
    for (const connection of this.connections.of(server)) {
      const timeout = this.connections.timeoutOf(connection);
      taken.push(...(await listRemoteSkills(connection, this.settings, timeout, (page) => this.pages(connection, 'skills/list', page))));
    }
    return remoteSkillDefinitions(taken, this.connections, this.settings.maxOutputChars);
  }

  /** A prompt's messages as text, a blank line between them (other content named, not included). */
  async instructions(server: string, name: string, args: Record<string, string>): Promise<string> {
    const { messages } = await this.getPrompt(server, name, args);
    return messages
      .map((message) => {
        const content = message.content as { type?: unknown; text?: unknown; resource?: { text?: unknown } };
        if (content.type === 'text' && typeof content.text === 'string') return content.text;
        if (content.type === 'resource' && typeof content.resource?.text === 'string') return content.resource.text;
        return `[${String(content.type)} content]`;
      })
      .join('\n\n');
  }

  /** The items of a listing of every server that declares the capability, each with its server's name and the fields kept. */
  private async listed<T>(
    server: string | undefined,
    kind: 'resources' | 'prompts',
    fields: readonly string[],
    list: (client: Client, params: { cursor?: string }, options: { timeout: number }) => Promise<Page>,
  ): Promise<T[]> {
    const found: T[] = [];
    for (const connection of this.connections.of(server)) {
      if (!connection.client.getServerCapabilities()?.[kind]) continue;
      await this.pages(connection, `${kind}/list`, async (cursor) => {
        const page = await list(connection.client, cursor === undefined ? {} : { cursor }, {
          timeout: this.connections.timeoutOf(connection),
        });
        for (const item of page.items) found.push(connection.redactor.deep({ server: connection.name, ...pick(item, fields) }) as T);
        return page.next;
      });
    }
    return found;
  }

  /** Reads pages of a list until it ends, within `maxListPages`; a cursor given twice fails. */
  private async pages(
    connection: Connection,
    what: string,
    page: (cursor: string | undefined) => Promise<string | undefined>,
  ): Promise<void> {
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let count = 1; ; count++) {
      const next = await this.asked(connection, what, () => page(cursor));
      if (next === undefined) return;
      if (seen.has(next) || count >= this.settings.maxListPages)
        throw new McpConnectionError(
          `server ${connection.name}: ${what} gave ${count} pages and still a next cursor (maxListPages ${this.settings.maxListPages})`,
        );
      seen.add(next);
      cursor = next;
    }
  }

  /** A request to a server, its failure said with the server's secrets redacted. */
  private async asked<T>(connection: Connection, what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof McpConnectionError) throw error;
      throw new McpConnectionError(`server ${connection.name}: ${what} failed: ${connection.redactor.text(said(error))}`);
    }
  }

  /** Refuses what a server sent past `maxOutputChars` of JSON, rather than handing it on. */
  private bounded(connection: Connection, what: string, value: unknown): void {
    const size = JSON.stringify(value)?.length ?? 0;
    if (size > this.settings.maxOutputChars)
      throw new McpConnectionError(
        `server ${connection.name}: ${what} is ${size} characters; at most ${this.settings.maxOutputChars} are read`,
      );
  }
}

/** The listed fields of `item` that are there, nothing else a server sent. */
function pick<K extends string>(item: object, keys: readonly K[]): Partial<Record<K, unknown>> {
  const out: Partial<Record<K, unknown>> = {};
  for (const key of keys) {
    const value = (item as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
