import type { ParseArgsConfig } from 'node:util';
import type { ExitCode } from './exit-codes';
import type { CliTarget } from './target';

/** What a command writes to and reads from: the process's, or a test's. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Where relative paths (`--tools`, `sqlite:` files) are resolved from. */
  cwd: string;
  /**
   * Resolves once what `out` wrote has drained (a slow pipe), so a command that writes many
   * lines (`decisions export`) holds no more of them in memory than the stream's buffer.
   */
  drained?: () => Promise<void>;
}

/** The options every command takes: where the store is, the tools, who answers, `--json` ({@link storeCommand} adds them). */
export const STORE_OPTIONS = {
  store: { type: 'string' },
  tools: { type: 'string' },
  as: { type: 'string' },
  json: { type: 'boolean' },
  schema: { type: 'string' },
  'table-prefix': { type: 'string' },
  create: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** The parsed command line a command runs with. */
export interface CommandInput {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  io: CliIo;
  /** Opens the store (and the tools, with `--tools`) the options name; the runner closes it. */
  open: () => Promise<CliTarget>;
}

/**
 * One CLI command: adding one is a file exporting this, listed in commands/index.ts.
 * `run` returns the exit code; what it throws is reported by the runner (src/cli/run.ts).
 */
export interface CliCommand {
  /** The words that name it: `['pending', 'list']`, or `['serve']`. */
  path: readonly string[];
  /** One line for the command list. */
  summary: string;
  /** The usage line after the path, e.g. `ID [--reason R]`. */
  usage: string;
  /** Its options, for node:util parseArgs ({@link STORE_OPTIONS} among them, to open a store). */
  options: NonNullable<ParseArgsConfig['options']>;
  /** How many positional arguments it takes. */
  positionals: number;
  run: (input: CommandInput) => Promise<ExitCode>;
}

/** What a command states of itself; {@link storeCommand} adds what every command shares. */
export type CommandSpec = Omit<CliCommand, 'options' | 'positionals'> & Partial<Pick<CliCommand, 'options' | 'positionals'>>;

/** A command over the store the options name: {@link STORE_OPTIONS} beside its own options, and no positional unless it says so. */
export function storeCommand(spec: CommandSpec): CliCommand {
  return { ...spec, options: { ...STORE_OPTIONS, ...spec.options }, positionals: spec.positionals ?? 0 };
}
