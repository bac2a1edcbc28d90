import { parseArgs } from 'node:util';
import { messageOf } from '../errors/message';
import type { CliCommand, CliIo } from './command';
import { COMMANDS } from './commands';
import { EXIT } from './exit-codes';
import { CliProblem, openTarget, type CliTarget } from './target';

const PROGRAM = 'toolnexus-ts';

/**
 * Runs one command line (without `node` and the script) and returns its exit code; never
 * throws. docs/operating.md, "CLI".
 */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly CliCommand[] = COMMANDS): Promise<number> {
  const command = commands.filter((c) => c.path.every((word, i) => argv[i] === word)).sort((a, b) => b.path.length - a.path.length)[0];
  if (!command) {
    const asked = argv[0] === undefined || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help';
    (asked ? io.out : io.err)(overview(commands, asked ? undefined : argv.slice(0, 2).join(' ')));
    return asked ? EXIT.ok : EXIT.usage;
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.slice(command.path.length),
      options: command.options,
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (error) {
    io.err(`${messageOf(error)}\nusage: ${usageOf(command)}`);
    return EXIT.usage;
  }
  if (parsed.values.help) {
    io.out(`usage: ${usageOf(command)}\n\n${command.summary}\n\n${COMMON_HELP}`);
    return EXIT.ok;
  }
  if (parsed.positionals.length !== command.positionals) {
    io.err(
      `${command.path.join(' ')} takes ${command.positionals === 0 ? 'no arguments' : `${command.positionals} argument(s)`}\nusage: ${usageOf(command)}`,
    );
    return EXIT.usage;
  }
  let session: CliTarget | undefined;
  try {
    return await command.run({
      values: parsed.values,
      positionals: parsed.positionals,
      io,
      open: async () => (session ??= await openTarget(parsed.values, io)),
    });
  } catch (error) {
    if (error instanceof CliProblem) {
      io.err(error.message);
      return error.code;
    }
    io.err(`error: ${messageOf(error)}`);
    return EXIT.failed;
  } finally {
    await session?.close().catch(() => undefined);
  }
}

function usageOf(command: CliCommand): string {
  return `${PROGRAM} ${command.path.join(' ')} ${command.usage} --store SPEC [--tools MODULE] [--as NAME] [--json]`.replace(/\s+/g, ' ');
}

const COMMON_HELP = `Options every command takes:
  --store SPEC        sqlite:./file.db or postgres://user@host/db (default: $TOOLNEXUS_STORE)
  --schema S          PostgreSQL schema (default public, as PostgresStore's); --table-prefix P
                      (default toolnexus_); a schema without the store's tables is refused
  --create            create the tables where --schema says instead (a new, empty store)
  --tools MODULE      a CommonJS module exporting createRunner(store), createCoordinator(store) or a
                      Toolkit as \`toolkit\` (with createRunner, an answer continues its run here):
                      needed to approve (the call replays here) and to show arguments with
                      only their @Sensitive fields redacted (without it they are redacted whole)
  --as NAME           who answers, recorded as cli:NAME (default: the OS user)
  --json              machine-readable output
  $TOOLNEXUS_BINDING_KEY  the bindingKey your coordinator uses, if any

Exit codes: 0 done, 1 failed, 2 usage, 3 not found, 4 already settled, 5 refused.`;

function overview(commands: readonly CliCommand[], unknown?: string): string {
  const lines = commands.map((c) => `  ${`${c.path.join(' ')} ${c.usage}`.padEnd(58)} ${c.summary}`);
  const head = unknown === undefined ? '' : `unknown command: ${unknown}\n\n`;
  return `${head}usage: ${PROGRAM} <command> [options]\n\n${lines.join('\n')}\n\n${COMMON_HELP}`;
}
