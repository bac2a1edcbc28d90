import { loadPeer } from '../errors/peer';

/** A SKILL.md split into its front matter (scalar values as trimmed strings) and its body. */
export interface ParsedSkillFile {
  data: Record<string, string>;
  body: string;
  /** True when the `---` fences are there but the YAML between them does not parse. */
  malformed: boolean;
}

type ParseYaml = (text: string) => unknown;

/*
 * The front matter is YAML, parsed with the `yaml` package (an optional peer, loaded by this
 * entry only) so folded and literal block scalars, quoting and multi-line values resolve as
 * the upstream ports resolve them (docs/skills.md). Scalars are trimmed: block-scalar
 * chomping differs between YAML libraries, and the trim keeps the ports byte-identical.
 */
const FENCED = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

export function parseSkillFile(text: string): ParsedSkillFile {
  const match = FENCED.exec(text);
  if (!match) return { data: {}, body: text, malformed: false };
  const [, header = '', body = ''] = match;
  const parse = yamlParser();
  let parsed: unknown;
  try {
    parsed = parse(header);
  } catch {
    // Any failure of the parser (a syntax error, an unknown alias) is a malformed header: the
    // skill is skipped and reported, and discovery goes on.
    return { data: {}, body, malformed: true };
  }
  const data: Record<string, string> = {};
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') data[key] = String(value).trim();
    }
  }
  return { data, body, malformed: false };
}

/** Loads the YAML parser, or names the command that installs it (at `loadSkills`, not at import). */
export function yamlParser(): ParseYaml {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
  return loadPeer<{ parse: ParseYaml }>(() => require('yaml'), 'toolnexus-ts/skills', 'yaml', 'npm install yaml').parse;
}
