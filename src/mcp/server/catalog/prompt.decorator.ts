import 'reflect-metadata';
import { PROMPT_OPTIONS } from '../../../metadata/keys';
import type { AnyClass } from '../../../decorators/types';
import type { PromptOptions } from './types';

/**
 * Marks a class as an MCP prompt: a message template a client offers its user. It only
 * records `options`. The class has `get(args, ctx)` returning the messages (`args` validated
 * into the `args` DTO), and may have `complete(argument, value)` for suggestions.
 *
 * @example
 * ```ts
 * class ReviewArgs { @IsString() @Describe('The code to review') code!: string }
 * @Prompt({ description: 'Review a piece of code', args: ReviewArgs })
 * class CodeReviewPrompt { get(args: ReviewArgs) { return `Please review:\n\n${args.code}` } }
 * ```
 */
export function Prompt(options: PromptOptions = {}): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(PROMPT_OPTIONS, { ...options }, target);
  };
}

/** The options of the class's own `@Prompt`. */
export function promptOptionsOf(target: AnyClass): PromptOptions | undefined {
  return Reflect.getOwnMetadata(PROMPT_OPTIONS, target) as PromptOptions | undefined;
}
