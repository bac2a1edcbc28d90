/**
 * The tools the conformance suite's `tasks-*` scenarios (the tasks extension, SEP-2663) call,
 * as `@Tool` classes of examples/mcp/conformance-server.ts, which serves them with
 * `tasks: TASK_SUPPORT` and a short `taskAfterMs`. A call of a client that takes tasks becomes
 * a task when it suspends (`confirm_delete`) or is still running after `taskAfterMs` (the rest,
 * each of which works a second first); `greet` never does. Each honours `ctx.signal`, which
 * `tasks/cancel` aborts.
 */
import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { answerFor, Describe, failure, pending, Tool, type ToolContext } from 'toolnexus-ts';
import { inputRound, type McpTaskSupport, type McpToolContext } from 'toolnexus-ts/mcp';

/** Waits `ms`, or until `signal` aborts (then rejects: the call was cancelled). */
function work(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('cancelled'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('cancelled'));
      },
      { once: true },
    );
  });
}

/** The accepted `content[field]` of an elicitation answer, when it is a string. */
function accepted(answer: unknown, field: string): string | undefined {
  const { action, content } = (answer ?? {}) as { action?: unknown; content?: Record<string, unknown> };
  const value = action === 'accept' ? content?.[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function nameForm(message: string) {
  return {
    method: 'elicitation/create' as const,
    params: { message, requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  };
}

class GreetArgs {
  @IsString()
  @Describe('Who to greet')
  name!: string;
}

@Tool({ name: 'greet', description: 'Greets at once (never a task)', args: GreetArgs })
export class GreetTool {
  run(args: GreetArgs): string {
    return `Hello, ${args.name}!`;
  }
}

class ComputeArgs {
  @IsInt()
  @Min(0)
  @Describe('How long the computation takes, in seconds')
  seconds!: number;

  @IsOptional()
  @IsString()
  @Describe('A label for the result')
  label?: string;
}

@Tool({ name: 'slow_compute', description: 'Computes for `seconds` seconds: a task when it takes long', args: ComputeArgs })
export class SlowComputeTool {
  async run(args: ComputeArgs, ctx?: ToolContext): Promise<string> {
    await work(args.seconds * 1000, ctx?.signal);
    return `Computed ${args.label ?? 'result'} in ${args.seconds} s`;
  }
}

@Tool({ name: 'failing_job', description: 'Works a second, then fails (a tool error); runs only as a task' })
export class FailingJobTool {
  async run(_args: object, ctx?: ToolContext) {
    await work(1000, ctx?.signal);
    return failure('the job failed');
  }
}

/**
 * Works a second, then asks the client's roots in an input round: the suite's client declares
 * no roots, so the task fails with the protocol error `-32021` (a tool error would be a result).
 */
@Tool({ name: 'protocol_error_job', description: "Works a second, then asks for the client's roots" })
export class ProtocolErrorJobTool {
  async run(_args: object, ctx?: McpToolContext) {
    await work(1000, ctx?.signal);
    return inputRound({ inputRequests: { roots: { method: 'roots/list', params: {} } } });
  }
}

class DeleteArgs {
  @IsString()
  @Describe('The file to delete')
  filename!: string;
}

/** Asks for a confirmation as a suspension: for a client that takes tasks, the task is the suspension. */
@Tool({ name: 'confirm_delete', description: 'Deletes a file once confirmed', args: DeleteArgs })
export class ConfirmDeleteTool {
  run(args: DeleteArgs, ctx?: ToolContext) {
    const answer = answerFor(ctx, 'input');
    if (!answer) {
      const schema = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] };
      return pending({ kind: 'input', prompt: `Delete ${args.filename}?`, data: { schema } });
    }
    return answer.data?.confirm === true ? `Deleted ${args.filename}` : `Kept ${args.filename}`;
  }
}

/** Works a second, then asks two things at once in an input round: a task answered key by key. */
@Tool({ name: 'multi_input', description: 'Asks two names at once' })
export class MultiInputTool {
  async run(_args: object, ctx?: McpToolContext) {
    const answers = ctx?.mcp.inputResponses;
    const first = accepted(answers?.first, 'name');
    const second = accepted(answers?.second, 'name');
    if (first !== undefined && second !== undefined) return `Got ${first} and ${second}`;
    await work(1000, ctx?.signal);
    return inputRound({ inputRequests: { first: nameForm('First name?'), second: nameForm('Second name?') } });
  }
}

/** Asks a name in an input round (answered at once), then works a second with it: a task from the second round on. */
@Tool({ name: 'test_tool_with_task', description: 'Asks a name, then works with it as a task' })
export class ToolWithTask {
  async run(_args: object, ctx?: McpToolContext) {
    const name = ctx?.mcp.requestState === 'asked-name' ? accepted(ctx.mcp.inputResponses?.user_name, 'name') : undefined;
    if (name === undefined) return inputRound({ inputRequests: { user_name: nameForm('What is your name?') }, requestState: 'asked-name' });
    await work(1000, ctx?.signal);
    return `Hello, ${name}! (worked out in a task)`;
  }
}

/** Every tool of this file, for the server's Toolkit. */
export const TASK_TOOLS = [
  GreetTool,
  SlowComputeTool,
  FailingJobTool,
  ProtocolErrorJobTool,
  ConfirmDeleteTool,
  MultiInputTool,
  ToolWithTask,
];

/** Their task support: `greet` answers at once, two run only as tasks, the rest (`allowed`) may become one. */
export const TASK_SUPPORT: Record<string, McpTaskSupport> = { greet: 'never', failing_job: 'always', test_tool_with_task: 'always' };
