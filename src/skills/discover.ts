import { readdirSync, realpathSync, statSync } from 'node:fs';
import { readRegularFile } from './read-file';
import type { Dirent } from 'node:fs';
import * as path from 'node:path';
import { sanitizeName } from '../results/helpers';
import { parseSkillFile } from './front-matter';
import type { SkillBounds, SkillDefinition, SkillInfo, SkillInventory, SkillSkip, SkillsOptions } from './types';

/** Folders discovery and sampling never enter (upstream toolnexus SPEC §3, after opencode). */
const SKIPPED_FOLDERS = new Set(['node_modules', '.git']);

/** A candidate before the first-wins merge: a parsed skill or the reason it is none. */
type Candidate = { info: SkillInfo } | { skip: SkillSkip };

/**
 * Discovers the skills of `options` in order (each root's `SKILL.md` files, then the given
 * definitions), keeps the first of each name and reports every other candidate with its reason.
 */
export function discoverSkills(options: SkillsOptions, bounds: SkillBounds, warn: (message: string) => void): SkillInventory {
  const roots = options.dirs === undefined ? [] : typeof options.dirs === 'string' ? [options.dirs] : options.dirs;
  const candidates: Candidate[] = [];
  for (const root of roots) candidates.push(...candidatesUnder(root, bounds, warn));
  for (const definition of options.skills ?? []) candidates.push(candidateOf(definition));
  const skills = new Map<string, SkillInfo>();
  const skipped: SkillSkip[] = [];
  for (const candidate of candidates) {
    if ('skip' in candidate) {
      skipped.push(candidate.skip);
    } else if (skills.has(candidate.info.name)) {
      warn(`duplicate skill name "${candidate.info.name}" (${candidate.info.location}): the first one is kept`);
      skipped.push({ location: candidate.info.location, reason: 'duplicate-name' });
    } else if (skills.size >= bounds.maxSkills) {
      skipped.push({ location: candidate.info.location, reason: 'too-many' });
    } else {
      skills.set(candidate.info.name, candidate.info);
    }
  }
  return { skills: [...skills.values()], skipped };
}

/**
 * Applies a per-agent filter with the semantics of upstream's MCP `tools` filter: none or empty
 * keeps all; any `true` makes it an allowlist; only `false`s drop those names. Unknown names
 * are ignored, each told once.
 */
export function filterSkills(
  skills: readonly SkillInfo[],
  filter: Readonly<Record<string, boolean>> | undefined,
  warn: (message: string) => void,
): SkillInfo[] {
  if (filter === undefined) return [...skills];
  const names = Object.keys(filter);
  if (names.length === 0) return [...skills];
  const known = new Set(skills.map((skill) => skill.name));
  for (const name of names) if (!known.has(name)) warn(`the skill filter names "${name}", which matched no skill`);
  const allowlist = names.some((name) => filter[name] === true);
  return skills.filter((skill) => (allowlist ? filter[skill.name] === true : filter[skill.name] !== false));
}

function candidatesUnder(root: string, bounds: SkillBounds, warn: (message: string) => void): Candidate[] {
  const absoluteRoot = path.resolve(root);
  if (!isDirectory(absoluteRoot)) {
    warn(`skills folder not found: ${absoluteRoot}`);
    return [];
  }
  return walk(absoluteRoot, bounds, warn, (entry) => entry === 'SKILL.md').map((file) => candidateFromFile(file, bounds));
}

function candidateFromFile(file: string, bounds: SkillBounds): Candidate {
  // Without blocking, and only a regular file: a SKILL.md swapped for a named pipe after the walk never holds the process.
  const read = readRegularFile(file, bounds.maxSkillBytes);
  if ('problem' in read && read.problem === 'too-large') return { skip: { location: file, reason: 'too-large' } };
  if (!('bytes' in read)) return { skip: { location: file, reason: 'unreadable' } };
  const text = read.bytes.toString('utf8');
  const parsed = parseSkillFile(text);
  if (parsed.malformed) return { skip: { location: file, reason: 'malformed-frontmatter' } };
  const name = parsed.data.name;
  if (!name) return { skip: { location: file, reason: 'missing-name' } };
  return {
    info: { name: sanitizeName(name), description: parsed.data.description, location: file, content: parsed.body, origin: 'folder' },
  };
}

function candidateOf(definition: SkillDefinition): Candidate {
  if (!definition.name) return { skip: { location: definition.base ?? 'skill://', reason: 'missing-name' } };
  const name = sanitizeName(definition.name);
  const base = definition.base ? definition.base : `skill://${name}/`;
  return {
    info: {
      name,
      description: definition.description,
      location: base,
      content: definition.content ?? '',
      origin: 'definition',
      resources: definition.resources ?? [],
      base,
      readResource: definition.readResource,
      ...(definition.readContent ? { readContent: definition.readContent } : {}),
      ...(definition.source !== undefined ? { source: definition.source } : {}),
    },
  };
}

/**
 * Files under `root` (symlinked folders and files followed, each real folder entered once so a
 * cycle ends) whose name `wanted` accepts, in name order, at most `limit` of them; the walk
 * itself stops after `bounds.maxEntries` entries, told once.
 */
export function walk(
  root: string,
  bounds: SkillBounds,
  warn: (message: string) => void,
  wanted: (name: string) => boolean,
  limit = Infinity,
): string[] {
  const found: string[] = [];
  const entered = new Set<string>([realPathOf(root) ?? root]);
  const folders = [root];
  let seen = 0;
  while (folders.length > 0 && found.length < limit) {
    const folder = folders.shift() as string;
    for (const entry of sortedEntries(folder)) {
      if (++seen > bounds.maxEntries) {
        warn(`stopped looking under ${root} after ${bounds.maxEntries} entries (maxEntries)`);
        return found;
      }
      const full = path.join(folder, entry.name);
      const kind = kindOf(entry, full);
      if (kind === 'folder' && !SKIPPED_FOLDERS.has(entry.name)) {
        const real = realPathOf(full);
        if (real !== undefined && !entered.has(real)) {
          entered.add(real);
          folders.push(full);
        }
      } else if (kind === 'file' && wanted(entry.name)) {
        found.push(full);
        if (found.length >= limit) break;
      }
    }
  }
  return found;
}

function sortedEntries(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

function kindOf(entry: Dirent, full: string): 'folder' | 'file' | 'other' {
  if (entry.isSymbolicLink()) {
    try {
      const target = statSync(full);
      return target.isDirectory() ? 'folder' : target.isFile() ? 'file' : 'other';
    } catch {
      return 'other';
    }
  }
  return entry.isDirectory() ? 'folder' : entry.isFile() ? 'file' : 'other';
}

function realPathOf(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
