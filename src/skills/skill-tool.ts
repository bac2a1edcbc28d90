import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { messageOf } from '../errors/message';
import { failure, success } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { defineTool, type FunctionTool } from '../toolkit/define-tool';
import { walk } from './discover';
import { readRegularFile } from './read-file';
import type { SkillBounds, SkillInfo } from './types';

/** The `skill` tool's description, verbatim from upstream (SPEC §3, "skill.txt", after opencode). */
export const SKILL_TOOL_DESCRIPTION = `Load a specialized skill when the task at hand matches one of the skills listed in the system prompt.

Use this tool to inject the skill's instructions and resources into current conversation. The output may contain detailed workflow guidance as well as references to scripts, files, etc in the same directory as the skill.

The skill name must match one of the skills listed in your system prompt.`;

/** How many files `<skill_files>` lists when `sampleLimit` is 0 (upstream's default). */
const DEFAULT_SAMPLE = 10;

/** The `skill` tool over `skills`: loads a skill's instructions, or reads one of its files. */
export function skillTool(skills: ReadonlyMap<string, SkillInfo>, sampleLimit: number, bounds: SkillBounds): FunctionTool {
  return defineTool({
    name: 'skill',
    description: SKILL_TOOL_DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The name of the skill to load' },
        resource: {
          type: 'string',
          description:
            "A file of the skill to read, relative to its base directory (e.g. scripts/run.sh); leave out to load the skill's instructions",
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { readOnlyHint: true },
    run: async (args): Promise<ToolResult> => {
      const name = typeof args.name === 'string' ? args.name : '';
      const skill = skills.get(name);
      if (!skill) {
        const available = [...skills.keys()].sort().join(', ') || 'none';
        return failure(`Skill "${name}" not found. Available skills: ${available}`);
      }
      if (typeof args.resource === 'string') return readResource(skill, args.resource, bounds);
      let loaded = skill;
      if (skill.readContent) {
        try {
          loaded = { ...skill, content: await skill.readContent() };
        } catch (error) {
          return failure(`Skill "${skill.name}" could not be loaded: ${messageOf(error)}`);
        }
      }
      return success(skillBlock(loaded, sampleLimit, bounds), { name: skill.name, dir: baseFolderOf(skill) });
    },
  });
}

/**
 * The progressive-disclosure block, byte for byte upstream's (SPEC §0.6 and §3): a folder's
 * skill has a `file://` base and sampled files; a definition's has its logical base and its
 * listed files, and no `<skill_files>` block when it lists none.
 */
export function skillBlock(skill: SkillInfo, sampleLimit: number, bounds: SkillBounds): string {
  const limit = sampleLimit === 0 ? DEFAULT_SAMPLE : sampleLimit;
  let listFiles = limit !== -1;
  let base: string;
  let files: readonly string[];
  if (skill.origin === 'definition') {
    base = skill.base ?? `skill://${skill.name}/`;
    const resources = skill.resources ?? [];
    if (resources.length === 0) listFiles = false;
    files = limit > 0 ? resources.slice(0, limit) : resources;
  } else {
    const folder = path.dirname(skill.location);
    base = pathToFileURL(folder).href;
    files =
      limit === -1
        ? []
        : walk(
            folder,
            bounds,
            () => undefined,
            (entry) => entry !== 'SKILL.md',
            limit,
          );
  }
  const lines = [
    `<skill_content name="${skill.name}">`,
    `# Skill: ${skill.name}`,
    '',
    skill.content.trim(),
    '',
    `Base directory for this skill: ${base}`,
    'Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.',
  ];
  // A skill someone else serves is said to be theirs where it enters the model's context (SEP-2640).
  if (skill.source !== undefined) lines.push(`This skill is served by ${skill.source}, not by this host: treat it as that server's text.`);
  if (listFiles)
    lines.push(
      'Note: file list is sampled.',
      '',
      '<skill_files>',
      files.map((file) => `<file>${file}</file>`).join('\n'),
      '</skill_files>',
    );
  lines.push('</skill_content>');
  return lines.join('\n');
}

function baseFolderOf(skill: SkillInfo): string {
  return skill.origin === 'definition' ? (skill.base ?? `skill://${skill.name}/`) : path.dirname(skill.location);
}

/**
 * One file of a skill, as text. A folder's skill reads only inside its own folder: the path
 * is relative, and its real path (symlinks resolved) must stay under the folder's real path,
 * so neither `..` nor a link leads out. Bounded by `maxResourceBytes`; binary files refused.
 */
async function readResource(skill: SkillInfo, resource: string, bounds: SkillBounds): Promise<ToolResult> {
  if (skill.origin === 'definition') {
    if (!skill.readResource || !(skill.resources ?? []).includes(resource)) {
      return failure(`Skill "${skill.name}" has no readable file "${resource}"`);
    }
    try {
      const text = await skill.readResource(resource);
      return Buffer.byteLength(text) > bounds.maxResourceBytes ? tooLarge(skill, resource, bounds) : success(text);
    } catch (error) {
      return failure(`Skill "${skill.name}" could not read "${resource}": ${messageOf(error)}`);
    }
  }
  const folder = path.dirname(skill.location);
  const file = insideFolder(folder, resource);
  if (file === undefined) return failure(`Skill "${skill.name}" has no file "${resource}" inside its folder`);
  return readBounded(file, bounds.maxResourceBytes) ?? tooLarge(skill, resource, bounds);
}

/** The real path of `resource` when it is a regular file inside `folder`'s real path. */
function insideFolder(folder: string, resource: string): string | undefined {
  if (resource === '' || path.isAbsolute(resource) || resource.includes('\0')) return undefined;
  try {
    const realFolder = realpathSync(folder);
    const real = realpathSync(path.resolve(folder, resource));
    return real.startsWith(realFolder + path.sep) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The file's text, a failure when it is not a readable regular text file, or undefined when it is too large. */
function readBounded(file: string, maxBytes: number): ToolResult | undefined {
  const read = readRegularFile(file, maxBytes);
  const name = path.basename(file);
  if ('failed' in read) return failure(`"${name}" could not be read: ${messageOf(read.failed)}`);
  if ('problem' in read)
    return read.problem === 'too-large' ? undefined : failure(`"${name}" is not a regular file; the skill tool reads regular files only`);
  if (read.bytes.includes(0)) return failure(`"${name}" is a binary file; the skill tool reads text only`);
  return success(read.bytes.toString('utf8'));
}

function tooLarge(skill: SkillInfo, resource: string, bounds: SkillBounds): ToolResult {
  return failure(`Skill "${skill.name}": "${resource}" is larger than maxResourceBytes (${bounds.maxResourceBytes} bytes)`);
}
