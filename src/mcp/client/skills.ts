import { SkillsClient, type Skill } from '@modelcontextprotocol/client/ext/skills';
import { parseSkillFile } from '../../skills/front-matter';
import type { SkillDefinition } from '../../skills/types';
import type { Connection, Connections } from './connection';
import { McpConnectionError } from './errors';
import type { SourceSettings } from './options';
import { mcpToolNames } from './tools';

/** The extension's per-skill limits (SEP-2640): a host must take skills up to them, and takes none past them here. */
const LIMITS = { files: 512, bytes: 16 * 1024 * 1024 };

/** The longest description kept, in characters (the Agent Skills specification's bound). */
const MAX_DESCRIPTION = 1024;

/** A server's skill entry the source took, before it is named. */
export interface TakenSkill {
  server: string;
  entry: Skill;
}

/**
 * Lists a connected server's skills through the Skills extension (`skills/list`, every page
 * within `maxListPages`), keeping at most `maxSkillsPerServer` entries whose files are listed
 * with digests and within the extension's limits; `"dynamic"` skills (no digests, nothing to
 * verify) and invalid entries are left out. Nothing but the entries is fetched: a skill's
 * files are read when the model loads them (the extension's lazy retrieval).
 */
export async function listRemoteSkills(
  connection: Connection,
  settings: SourceSettings,
  timeout: number,
  pages: (page: (cursor: string | undefined) => Promise<string | undefined>) => Promise<void>,
): Promise<TakenSkill[]> {
  const client = new SkillsClient(connection.client, { skipInvalid: true });
  if (!client.supported) return [];
  const taken: TakenSkill[] = [];
  await pages(async (cursor) => {
    const page = await client.list(cursor === undefined ? {} : { cursor }, { timeout });
    for (const entry of page.skills) {
      if (taken.length >= settings.maxSkillsPerServer) return undefined;
      if (!Array.isArray(entry.resources) || entry.resources.length > LIMITS.files) continue;
      if (entry.resources.reduce((sum, file) => sum + file.size, 0) > LIMITS.bytes) continue;
      taken.push({ server: connection.name, entry });
    }
    return taken.length >= settings.maxSkillsPerServer ? undefined : page.nextCursor;
  });
  return taken;
}

/**
 * The skills taken from every server as definitions for `loadSkills` (docs/mcp.md, "Skills
 * over MCP"): each named `server_name` over all of them together (the extension's per-origin
 * namespace; a collision gets a hash suffix, never dropped), its base the skill's `skill://`
 * root, its files those of its entry, its `SKILL.md` read only when the skill is loaded, and
 * every file it reads verified against the entry's size and digest (and the `SKILL.md`'s front
 * matter against the entry's) before the model sees it, redacted of the server's secrets.
 */
export function remoteSkillDefinitions(taken: readonly TakenSkill[], connections: Connections, maxFileBytes: number): SkillDefinition[] {
  const names = mcpToolNames(taken.map(({ server, entry }) => ({ server, tool: entry.frontmatter.name })));
  const definitions: SkillDefinition[] = [];
  taken.forEach(({ server, entry }, index) => {
    const name = names[index];
    if (name === undefined) return;
    const root = entry.uri.slice(0, -'SKILL.md'.length);
    const files = (entry.resources as Array<{ uri: string; size: number }>)
      .filter((file) => file.uri !== entry.uri && file.uri.startsWith(root))
      .map((file) => decodeURIComponent(file.uri.slice(root.length)));
    const read = async (ref?: string): Promise<string> => {
      const connection = connections.connected(server);
      const listed = (entry.resources as Array<{ uri: string; size: number }>).find(
        (file) => file.uri === (ref === undefined ? entry.uri : root + ref.split('/').map(encodeURIComponent).join('/')),
      );
      // Bounded before it is asked for: the entry says how large the file is, and the read is checked against it.
      if (listed && listed.size > maxFileBytes)
        throw new McpConnectionError(`server ${server}: ${listed.uri} is ${listed.size} bytes; at most ${maxFileBytes} are read`);
      let file;
      try {
        file = await new SkillsClient(connection.client).read(entry, ref, { timeout: connections.timeoutOf(connection) });
      } catch (error) {
        throw new McpConnectionError(
          `server ${server}: ${connection.redactor.text(error instanceof Error ? error.message : String(error))}`,
        );
      }
      if (file.text === undefined) throw new McpConnectionError(`server ${server}: ${file.uri} is not text`);
      return connection.redactor.text(ref === undefined ? parseSkillFile(file.text).body : file.text);
    };
    definitions.push({
      name,
      // The Agent Skills bound on a description: it goes into the system prompt of every run.
      description: connectionsRedacted(connections, server, entry.frontmatter.description).slice(0, MAX_DESCRIPTION),
      content: '',
      readContent: () => read(),
      resources: files,
      base: root,
      readResource: (file) => read(file),
      source: `the MCP server "${server}"`,
    });
  });
  return definitions;
}

function connectionsRedacted(connections: Connections, server: string, text: string): string {
  return connections.get(server)?.redactor.text(text) ?? text;
}
