import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import type { Principal } from '../suspension/audit';
import { AgentRunner } from '../runner/agent-runner';
import { ResumeCoordinator } from '../suspension/coordinator';
import type { SuspensionStore } from '../suspension/store';
import type { RunStore } from '../runner/core/store';
import { Toolkit } from '../toolkit/toolkit';
import type { CliIo } from './command';
import { checkPostgresTables } from '../stores/postgres/tables';
import { openStore, parseStoreSpec, shownSpec, TABLES_EXIT } from './store-spec';

/** What a `pending` command works with: the store, a coordinator over it, and who is acting. */
export interface CliTarget {
  store: SuspensionStore & RunStore;
  coordinator: ResumeCoordinator;
  /** True when `--tools` registered the tools: approving (which replays the call) needs them. */
  hasTools: boolean;
  /** The runner a `--tools` module's `createRunner(store)` made: answers continue their runs with it (`pending approve`, `serve`). */
  runner?: AgentRunner;
  /** Who answers: `cli:<--as or the OS user>`. */
  principal: Principal;
  /** How the store is shown in messages (no password). */
  storeShown: string;
  close(): Promise<void>;
}

/** What a `--tools` module exports: a coordinator factory, or the toolkit. */
interface ToolsModule {
  createRunner?: (store: SuspensionStore & RunStore) => AgentRunner | Promise<AgentRunner>;
  createCoordinator?: (store: SuspensionStore & RunStore) => ResumeCoordinator | Promise<ResumeCoordinator>;
  toolkit?: Toolkit;
  default?: unknown;
}

/** Thrown for a CLI problem the user can fix; the runner prints it and exits with `code`. */
export class CliProblem extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** Opens the store and the tools the options name. */
export async function openTarget(values: Record<string, string | boolean | undefined>, io: CliIo): Promise<CliTarget> {
  const spec = typeof values.store === 'string' ? values.store : io.env.TOOLNEXUS_STORE;
  if (spec === undefined || spec === '')
    throw new CliProblem('no store: pass --store sqlite:./file.db or --store postgres://… (or set TOOLNEXUS_STORE)', 2);
  let parsed;
  try {
    parsed = parseStoreSpec(spec, io.cwd);
  } catch (error) {
    throw new CliProblem(messageOf(error), 2);
  }
  if (parsed.kind === 'sqlite' && !existsSync(parsed.filename)) throw new CliProblem(`no SQLite file at ${parsed.filename}`, 1);
  const postgres = {
    ...(typeof values.schema === 'string' ? { schema: values.schema } : {}),
    ...(typeof values['table-prefix'] === 'string' ? { tablePrefix: values['table-prefix'] } : {}),
  };
  if (parsed.kind === 'postgres') {
    const problem = await checkPostgresTables(parsed.connectionString, shownSpec(spec), { ...postgres, create: values.create === true });
    if (problem) throw new CliProblem(problem.message, TABLES_EXIT[problem.kind]);
  }
  const store = openStore(parsed, postgres);
  try {
    const principal = principalOf(values.as, io);
    const bindingKey = io.env.TOOLNEXUS_BINDING_KEY || undefined;
    const toolsPath = typeof values.tools === 'string' ? values.tools : undefined;
    const tools = toolsPath
      ? await coordinatorFromModule(toolsPath, io.cwd, store, bindingKey)
      : { coordinator: new ResumeCoordinator({ toolkit: new Toolkit(), store, ...(bindingKey ? { bindingKey } : {}) }) };
    const session: CliTarget = {
      store,
      ...tools,
      hasTools: toolsPath !== undefined,
      principal,
      storeShown: shownSpec(spec),
      close: () => store.close(),
    };
    return session;
  } catch (error) {
    await store.close();
    throw error;
  }
}

function principalOf(as: string | boolean | undefined, io: CliIo): Principal {
  let name = typeof as === 'string' ? as.trim() : '';
  if (name === '') {
    try {
      name = userInfo().username;
    } catch {
      name = io.env.USER ?? io.env.USERNAME ?? 'unknown';
    }
  }
  if (name.length > 190) throw new CliProblem('--as is longer than 190 characters', 2);
  return { id: `cli:${name}`, name };
}

async function coordinatorFromModule(
  path: string,
  cwd: string,
  store: SuspensionStore & RunStore,
  bindingKey: string | undefined,
): Promise<{ coordinator: ResumeCoordinator; runner?: AgentRunner }> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  let loaded: ToolsModule;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the operator's module, named on the command line
    loaded = require(file) as ToolsModule;
  } catch (error) {
    throw new CliProblem(`cannot load --tools ${path}: ${messageOf(error)}`, 1);
  }
  if (typeof loaded.createRunner === 'function') {
    const runner = await loaded.createRunner(store);
    if (!(runner instanceof AgentRunner) || runner.coordinator.store !== store)
      throw new CliProblem(`--tools ${path}: createRunner(store) must return an AgentRunner over the store it is given`, 1);
    return { coordinator: runner.coordinator, runner };
  }
  const factory = loaded.createCoordinator ?? (typeof loaded.default === 'function' ? loaded.default : undefined);
  if (typeof factory === 'function') {
    const coordinator = (await (factory as (store: SuspensionStore & RunStore) => unknown)(store)) as ResumeCoordinator;
    if (typeof coordinator?.resolve !== 'function' || coordinator.store !== store)
      throw new CliProblem(`--tools ${path}: createCoordinator(store) must return a ResumeCoordinator over the store it is given`, 1);
    return { coordinator };
  }
  const toolkit = loaded.toolkit ?? loaded.default;
  if (typeof (toolkit as Partial<Toolkit> | undefined)?.execute !== 'function')
    throw new CliProblem(`--tools ${path} must export createCoordinator(store) or a Toolkit as \`toolkit\` (or default)`, 1);
  try {
    return { coordinator: new ResumeCoordinator({ toolkit: toolkit as Toolkit, store, ...(bindingKey ? { bindingKey } : {}) }) };
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new CliProblem(`--tools ${path}: ${error.message}`, 1);
    throw error;
  }
}
