/**
 * `toolnexus-ts/skills`: Anthropic's `SKILL.md` convention, as upstream toolnexus serves it
 * (SPEC §3): discovery, the `skill` tool and the system prompt's catalog (docs/skills.md).
 * Needs the optional peer `yaml` to read front matter.
 */
export { loadSkills, listSkills, SKILLS_PROMPT_PREAMBLE, NO_SKILLS_PROMPT } from './skills';
export type { Skills } from './skills';
export { SKILL_TOOL_DESCRIPTION } from './skill-tool';
export type { SkillInfo, SkillDefinition, SkillInventory, SkillSkip, SkillSkipReason, SkillOrigin, SkillsOptions } from './types';
