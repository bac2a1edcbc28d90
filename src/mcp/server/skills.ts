import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { walk } from '../../skills/discover';
import { parseSkillFile, yamlParser } from '../../skills/front-matter';
import { readRegularFile } from '../../skills/read-file';
import type { Skills } from '../../skills/skills';
import type { SkillInfo } from '../../skills/types';
import type { ResourceListing } from './catalog/catalog';
import { McpCatalogError } from './errors';

/** The extension's identifier, declared in `capabilities.extensions` (SEP-2640). */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** The extension's per-skill limits: what every conforming host must accept, and what a server should not exceed. */
const LIMITS = { files: 512, bytes: 16 * 1024 * 1024 };
/** Entries per `skills/list` page. */
const PAGE_SIZE = 100;
/** The Agent Skills naming rule the final URI segment must satisfy. */
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** One file of a skill entry (SEP-2640 `SkillResource`): its URI, the SHA-256 of its raw bytes, their length. */
export interface McpSkillResource {
  uri: string;
  digest: string;
  size: number;
}

/** A skill entry as `skills/list` and `skills/get` carry it. */
export interface McpSkillEntry {
  uri: string;
  frontmatter: { name: string; description: string; [key: string]: unknown };
  resources: McpSkillResource[];
}

/** A resource's contents as `resources/read` answers: text for text, base64 for the rest. */
type Contents = { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string };

interface Published {
  entries: McpSkillEntry[];
  byUri: Map<string, McpSkillEntry>;
  /** Every published file by its URI: where it is on disk and the digest it was published with. */
  files: Map<string, { file: string; digest: string; size: number }>;
}

/**
 * The skills of a `loadSkills` folder as the Skills extension publishes them (docs/mcp.md,
 * "Skills over MCP"): each skill at `skill://NAME/SKILL.md`, its `SKILL.md` the very file whose
 * body the `skill` tool gives, every file of its folder listed with its digest. Published once,
 * at the first request, and kept: a read serves a file only while its bytes still match the
 * digest published for it, so what a host verifies is what it gets.
 */
export class SkillShelf {
  private published: Promise<Published> | undefined;

  constructor(
    private readonly skills: Skills,
    private readonly warn: (message: string) => void = (message) => console.warn(`[toolnexus-ts] ${message}`),
  ) {}

  /** One page of entries; `cursor` is the one the previous page gave. */
  async list(cursor: string | undefined): Promise<{ skills: McpSkillEntry[]; nextCursor?: string }> {
    const { entries } = await this.load();
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(start) || start < 0 || start > entries.length || (cursor !== undefined && String(start) !== cursor))
      throw new McpCatalogError(`skills/list: the cursor "${String(cursor).slice(0, 40)}" is not one this server gave`, 'invalid');
    const end = start + PAGE_SIZE;
    return { skills: entries.slice(start, end), ...(end < entries.length ? { nextCursor: String(end) } : {}) };
  }

  /** The entry of the skill whose `SKILL.md` is at `uri`; an unknown one is invalid params, as the extension says. */
  async get(uri: unknown): Promise<McpSkillEntry> {
    if (typeof uri !== 'string') throw new McpCatalogError('skills/get needs params.uri, the URI of a SKILL.md', 'invalid');
    const entry = (await this.load()).byUri.get(uri);
    if (!entry) throw new McpCatalogError(`No skill is served at ${uri.slice(0, 200)}`, 'invalid');
    return entry;
  }

  /** Whether `uri` is in the skills' namespace (so a read of it is theirs to answer, or refuse). */
  owns(uri: string): boolean {
    return uri.startsWith('skill://');
  }

  /** A published file's contents, its bytes checked against the digest published for them. */
  async read(uri: string): Promise<Contents[]> {
    const published = (await this.load()).files.get(uri);
    if (!published) throw new McpCatalogError(`no skill file at ${uri.slice(0, 200)}`, 'not-found');
    const read = readRegularFile(published.file, LIMITS.bytes);
    if (!('bytes' in read) || digestOf(read.bytes) !== published.digest)
      throw new McpCatalogError(`the skill file ${uri} changed since it was published; the server must load its skills again`, 'not-found');
    const mimeType = mimeTypeOf(uri);
    const text = textOf(read.bytes);
    return [text === undefined ? { uri, mimeType, blob: read.bytes.toString('base64') } : { uri, mimeType, text }];
  }

  /** Each skill's `SKILL.md` as `resources/list` shows it (the extension's resource metadata). */
  async resources(): Promise<ResourceListing[]> {
    return (await this.load()).entries.map((entry) => ({
      uri: entry.uri,
      name: entry.frontmatter.name,
      description: entry.frontmatter.description,
      mimeType: 'text/markdown',
    }));
  }

  private load(): Promise<Published> {
    this.published ??= Promise.resolve().then(() => publish(this.skills.skills, this.warn));
    return this.published;
  }
}

function publish(skills: readonly SkillInfo[], warn: (message: string) => void): Published {
  const published: Published = { entries: [], byUri: new Map(), files: new Map() };
  for (const skill of skills) {
    const problem = skill.origin === 'folder' ? publishFolder(skill, published) : 'it is given as data, not a folder';
    if (problem) warn(`skill "${skill.name}" is not served over MCP: ${problem}`);
  }
  return published;
}

/** Publishes a folder's skill into `published`, or says why it cannot be. */
function publishFolder(skill: SkillInfo, published: Published): string | undefined {
  const read = readRegularFile(skill.location, LIMITS.bytes);
  if (!('bytes' in read)) return 'its SKILL.md cannot be read';
  const text = read.bytes.toString('utf8');
  // The same file the skill tool gives: its body still the one loadSkills read.
  if (parseSkillFile(text).body !== skill.content) return 'its SKILL.md changed since loadSkills read it';
  const frontmatter = frontmatterOf(text);
  if (!frontmatter) return 'its front matter is not a YAML mapping';
  const { name, description } = frontmatter;
  if (typeof name !== 'string' || name !== skill.name || name.length > 64 || !SKILL_NAME.test(name))
    return 'its name does not follow the Agent Skills naming rules (lowercase letters, digits and single hyphens, at most 64)';
  if (typeof description !== 'string' || description.trim() === '') return 'it has no description';
  const folder = path.dirname(skill.location);
  const base = `skill://${name}`;
  const files: Array<{ uri: string; file: string; digest: string; size: number }> = [];
  let total = 0;
  const bounds = { maxSkillBytes: LIMITS.bytes, maxSkills: 1, maxEntries: 100_000, maxResourceBytes: LIMITS.bytes };
  for (const file of walk(
    folder,
    bounds,
    () => undefined,
    () => true,
    LIMITS.files + 1,
  )) {
    const real = insideFolder(folder, file);
    if (real === undefined) continue;
    const bytes = real === realOf(skill.location) ? read.bytes : readBytes(real);
    if (bytes === undefined) continue;
    total += bytes.length;
    if (files.length >= LIMITS.files || total > LIMITS.bytes) return `it is over the extension's limits (${LIMITS.files} files, 16 MiB)`;
    const relative = path.relative(folder, file).split(path.sep).map(encodeURIComponent).join('/');
    files.push({ uri: `${base}/${relative}`, file: real, digest: digestOf(bytes), size: bytes.length });
  }
  const uri = `${base}/SKILL.md`;
  const entry: McpSkillEntry = {
    uri,
    frontmatter: frontmatter as McpSkillEntry['frontmatter'],
    resources: files.map(({ uri: fileUri, digest, size }) => ({ uri: fileUri, digest, size })),
  };
  if (!entry.resources.some((resource) => resource.uri === uri)) return 'its SKILL.md is not a regular file inside its folder';
  published.entries.push(entry);
  published.byUri.set(uri, entry);
  for (const { uri: fileUri, ...rest } of files) published.files.set(fileUri, rest);
  return undefined;
}

/** The front matter as JSON, every field as the author wrote it (the entry's `frontmatter` is verbatim, not trimmed). */
function frontmatterOf(text: string): Record<string, unknown> | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text.replace(/^\uFEFF/, ''));
  if (!match) return undefined;
  try {
    const parsed = JSON.parse(JSON.stringify(yamlParser()(match[1] ?? ''))) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The real path of `file` when it stays inside `folder`'s real path: the skill tool's own rule for what a skill may read. */
function insideFolder(folder: string, file: string): string | undefined {
  const realFolder = realOf(folder);
  const real = realOf(file);
  return realFolder !== undefined && real !== undefined && real.startsWith(realFolder + path.sep) ? real : undefined;
}

function realOf(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function readBytes(file: string): Buffer | undefined {
  const read = readRegularFile(file, LIMITS.bytes);
  return 'bytes' in read ? read.bytes : undefined;
}

/** `sha256:` and 64 lowercase hex digits, over the raw bytes. */
export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The bytes as text when they are UTF-8 with no NUL; undefined for what goes as a base64 blob. */
function textOf(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

function mimeTypeOf(uri: string): string {
  const extension = uri.slice(uri.lastIndexOf('.') + 1).toLowerCase();
  return MIME_TYPES[extension] ?? 'application/octet-stream';
}

const MIME_TYPES: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  js: 'text/javascript',
  ts: 'text/typescript',
  html: 'text/html',
  csv: 'text/csv',
  png: 'image/png',
  pdf: 'application/pdf',
};
