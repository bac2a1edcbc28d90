import { InvalidArgumentError } from '../errors';
import type { FunctionTool } from '../toolkit/define-tool';
import { discoverSkills, filterSkills } from './discover';
import { yamlParser } from './front-matter';
import { skillTool } from './skill-tool';
import type { SkillBounds, SkillInfo, SkillInventory, SkillsOptions } from './types';

/** The instructions `skillsPrompt()` begins with, byte for byte upstream's (SPEC §3). */
export const SKILLS_PROMPT_PREAMBLE =
  'Skills provide specialized instructions and workflows for specific tasks.\n' +
  'Use the skill tool to load a skill when a task matches its description.';

/** What `skillsPrompt()` says when no skill has a description (upstream's words). */
export const NO_SKILLS_PROMPT = 'No skills are currently available.';

/** The skills an agent may load, the `skill` tool that loads them, and their catalog for the system prompt. */
export interface Skills {
  /** The skills the tool serves (after `filter`), in discovery order. */
  readonly skills: readonly SkillInfo[];
  /** The `skill` tool: register it on a Toolkit, or give this object to `AgentRunner`'s `skills`. */
  readonly tool: FunctionTool;
  /**
   * The catalog for the system prompt: {@link SKILLS_PROMPT_PREAMBLE}, then
   * `## Available Skills` and a `- **name**: description` line per described skill (by name);
   * {@link NO_SKILLS_PROMPT} when none is described.
   */
  skillsPrompt(): string;
}

/**
 * Finds the skills under `dirs` (every `SKILL.md`, its YAML front matter's `name` and
 * `description`) and among the given definitions, and builds the `skill` tool over them
 * (docs/skills.md). Needs the `yaml` package when a folder is searched.
 *
 * @example
 * ```ts
 * const skills = loadSkills({ dirs: './skills' })
 * const runner = new AgentRunner({ model, toolkit, skills })
 * ```
 */
export function loadSkills(input: string | readonly string[] | SkillsOptions): Skills {
  const options = optionsOf(input);
  const bounds = boundsOf(options);
  const warn = options.onWarning ?? ((message: string) => console.warn(`[toolnexus-ts] ${message}`));
  const sampleLimit = sampleLimitOf(options.sampleLimit);
  if (options.dirs !== undefined) yamlParser();
  const inventory = discoverSkills(options, bounds, warn);
  const skills = filterSkills(inventory.skills, options.filter, warn);
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  return { skills, tool: skillTool(byName, sampleLimit, bounds), skillsPrompt: () => promptOf(skills) };
}

/**
 * Discovers and checks skills from the same sources as {@link loadSkills}, with no tool: the
 * skills found (unfiltered, to write a `filter` from) and each candidate skipped with its reason.
 */
export function listSkills(input: string | readonly string[] | SkillsOptions): SkillInventory {
  const options = optionsOf(input);
  if (options.dirs !== undefined) yamlParser();
  return discoverSkills(options, boundsOf(options), options.onWarning ?? (() => undefined));
}

function promptOf(skills: readonly SkillInfo[]): string {
  const described = skills
    .filter((skill) => skill.description !== undefined)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (described.length === 0) return NO_SKILLS_PROMPT;
  return [
    SKILLS_PROMPT_PREAMBLE,
    '',
    '## Available Skills',
    ...described.map((skill) => `- **${skill.name}**: ${skill.description ?? ''}`),
  ].join('\n');
}

function optionsOf(input: string | readonly string[] | SkillsOptions): SkillsOptions {
  return typeof input === 'string' || Array.isArray(input) ? { dirs: input as string | readonly string[] } : (input as SkillsOptions);
}

function boundsOf(options: SkillsOptions): SkillBounds {
  return {
    maxSkillBytes: positive('maxSkillBytes', options.maxSkillBytes, 1024 * 1024),
    maxSkills: positive('maxSkills', options.maxSkills, 1000),
    maxEntries: positive('maxEntries', options.maxEntries, 100_000),
    maxResourceBytes: positive('maxResourceBytes', options.maxResourceBytes, 256 * 1024),
  };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError(`${name} must be a positive whole number, got ${String(value)}`);
  return value;
}

function sampleLimitOf(value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < -1)
    throw new InvalidArgumentError(`sampleLimit must be -1, 0 or a positive whole number, got ${String(value)}`);
  return value;
}
