/** Where a skill came from: a `SKILL.md` in a folder, or a {@link SkillDefinition} given as data. */
export type SkillOrigin = 'folder' | 'definition';

/** A discovered skill. */
export interface SkillInfo {
  /** From the front matter's `name` (or the definition's), sanitized to `[a-zA-Z0-9_-]`. */
  readonly name: string;
  readonly description?: string;
  /** The absolute path of its `SKILL.md`, or a definition's logical base (`skill://NAME/`). */
  readonly location: string;
  /** Its instructions: the text after the front matter. */
  readonly content: string;
  readonly origin: SkillOrigin;
  /** A definition's logical file names (`<skill_files>`). */
  readonly resources?: readonly string[];
  /** A definition's logical base. */
  readonly base?: string;
  /** A definition's reader of its files, when the tool may read them. */
  readonly readResource?: (name: string) => string | Promise<string>;
  /** A definition's reader of its instructions, when they are fetched as the skill is loaded. */
  readonly readContent?: () => Promise<string>;
  /** Where a definition's content comes from when it is not the host's own, told to the model with it. */
  readonly source?: string;
}

/**
 * A skill given as data rather than found on disk (upstream SPEC §3, S1): its base is logical
 * (`skill://NAME/` by default) and no host path ever appears in the tool's output.
 */
export interface SkillDefinition {
  name: string;
  description?: string;
  content: string;
  /** Logical file names listed in the tool's `<skill_files>`. */
  resources?: string[];
  /** The logical base; default `skill://NAME/`. */
  base?: string;
  /** Reads one of `resources` when the model asks the `skill` tool for it; without it they are names only. */
  readResource?: (name: string) => string | Promise<string>;
  /**
   * Reads the instructions when the skill is loaded, rather than ahead of need (a remote
   * skill's `SKILL.md`, as `McpToolSource.skills()` gives it); `content` is then unused.
   */
  readContent?: () => Promise<string>;
  /**
   * Who serves this skill when it is not the host's own (`MCP server "docs"`): the `skill`
   * tool says so beside its instructions, so the model never takes them for a local skill's.
   */
  source?: string;
}

/** Why a candidate did not become a skill. */
export type SkillSkipReason = 'missing-name' | 'malformed-frontmatter' | 'duplicate-name' | 'unreadable' | 'too-large' | 'too-many';

/** A candidate that did not become a skill, and why. */
export interface SkillSkip {
  readonly location: string;
  readonly reason: SkillSkipReason;
}

/** What {@link listSkills} found: the skills (unfiltered) and the candidates skipped. */
export interface SkillInventory {
  readonly skills: readonly SkillInfo[];
  readonly skipped: readonly SkillSkip[];
}

/** Options of {@link loadSkills} and {@link listSkills}. */
export interface SkillsOptions {
  /** Folders searched for `**\/SKILL.md` (symlinks followed, `node_modules` and `.git` skipped). */
  dirs?: string | readonly string[];
  /** Skills given as data; a folder's skill of the same name comes first and wins. */
  skills?: readonly SkillDefinition[];
  /**
   * Which skills this agent sees, by name: any `true` makes it an allowlist, only `false`s drop
   * those names, none or empty keeps all (upstream's MCP tools filter).
   */
  filter?: Readonly<Record<string, boolean>>;
  /** Files listed in the tool's `<skill_files>`: 0 (default) means 10, -1 leaves the block out. */
  sampleLimit?: number;
  /** The largest `SKILL.md` read, in bytes; a larger one is skipped (`too-large`). Default 1 MiB. */
  maxSkillBytes?: number;
  /** The most skills kept; later ones are skipped (`too-many`). Default 1 000. */
  maxSkills?: number;
  /** The most folder entries one root's walk looks at. Default 100 000. */
  maxEntries?: number;
  /** The largest file the `skill` tool returns when asked for one, in bytes. Default 256 KiB. */
  maxResourceBytes?: number;
  /** Told of duplicates, unknown filter names, missing folders and walks cut short. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/** The bounds of discovery and reading, resolved from {@link SkillsOptions}. */
export interface SkillBounds {
  readonly maxSkillBytes: number;
  readonly maxSkills: number;
  readonly maxEntries: number;
  readonly maxResourceBytes: number;
}
