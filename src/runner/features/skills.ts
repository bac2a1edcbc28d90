import type { Skills } from '../../skills/skills';
import type { Toolkit } from '../../toolkit/toolkit';

/**
 * The system prompt of a runner given `skills`: its own prompt, a blank line, the skills'
 * catalog (upstream SPEC §0.10: `systemPrompt + "\n\n" + skillsPrompt()`). The `skill` tool is
 * registered on the toolkit unless a tool of that name is there already (registered by hand,
 * or by another runner over the same toolkit).
 */
export function promptWithSkills(toolkit: Toolkit, systemPrompt: string | undefined, skills: Skills | undefined): string | undefined {
  if (skills === undefined) return systemPrompt;
  if (!toolkit.has('skill')) toolkit.register(skills.tool);
  return [systemPrompt ?? '', skills.skillsPrompt()].filter((part) => part !== '').join('\n\n');
}
