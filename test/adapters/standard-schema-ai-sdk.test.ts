/**
 * A toolnexus DTO as the AI SDK's tool schema, with no adapter: `tool({ inputSchema:
 * standardSchemaOf(Dto) })` in `generateText` of ai 7, against the AI SDK's own test model
 * (`MockLanguageModelV4` of `ai/test`). The model is sent the DTO's schema; a valid call reaches
 * `execute` as the DTO instance; an invalid one never does and is the AI SDK's tool-error part
 * (its call marked invalid with an `InvalidToolInputError` whose cause carries our issues), which the model sees next turn.
 */
import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { schemaForClass, standardSchemaOf } from 'toolnexus-ts';

class WeatherArgs {
  @IsString() @MinLength(2) city!: string;
  @IsOptional() @IsInt() @Min(1) @Max(7) days?: number;
}

type Ai = typeof import('ai');
type AiTest = typeof import('ai/test');
/** ai is ES modules only: loaded by a real dynamic import (jest runs with --experimental-vm-modules). */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- ts-jest turns import() into require(), which cannot load ES modules here
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;

let ai: Ai;
let aiTest: AiTest;
beforeAll(async () => {
  ai = await importEsm<Ai>('ai');
  aiTest = await importEsm<AiTest>('ai/test');
});

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model that asks for `weather` with `input` once, then answers with the text of what it was sent back. */
function scriptedModel(input: unknown) {
  let turn = 0;
  return new aiTest.MockLanguageModelV4({
    doGenerate: async (options) => {
      turn++;
      if (turn === 1) {
        return {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: USAGE,
          warnings: [],
        };
      }
      const last = options.prompt.at(-1);
      return {
        content: [{ type: 'text', text: JSON.stringify(last?.content) }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

function weatherTool(seen: unknown[]) {
  return ai.tool({
    description: 'The weather in a city',
    inputSchema: standardSchemaOf(WeatherArgs),
    execute: (args) => {
      seen.push(args);
      return `sunny in ${args.city} for ${args.days ?? 1} days`;
    },
  });
}

test('the model is sent the DTO schema, and a valid call reaches execute as the DTO instance', async () => {
  const seen: unknown[] = [];
  const model = scriptedModel({ city: 'Oslo', days: 2, extra: 'stripped' });
  const result = await ai.generateText({ model, tools: { weather: weatherTool(seen) }, prompt: 'weather?', stopWhen: ai.stepCountIs(3) });
  const sent = model.doGenerateCalls[0]?.tools?.[0] as { name: string; inputSchema: unknown } | undefined;
  expect(sent?.name).toBe('weather');
  expect(sent?.inputSchema).toEqual(schemaForClass(WeatherArgs));
  expect(seen).toHaveLength(1);
  expect(seen[0]).toBeInstanceOf(WeatherArgs);
  expect(seen[0]).toEqual({ city: 'Oslo', days: 2 });
  expect(result.steps[0]?.toolResults.map((r) => r.output)).toEqual(['sunny in Oslo for 2 days']);
});

test('an invalid call never reaches execute: it is the AI SDK tool-error part, InvalidToolInputError carrying our issues', async () => {
  const seen: unknown[] = [];
  const model = scriptedModel({ city: 'O', days: 9 });
  const result = await ai.generateText({ model, tools: { weather: weatherTool(seen) }, prompt: 'weather?', stopWhen: ai.stepCountIs(3) });
  expect(seen).toEqual([]);
  const content = result.steps[0]?.content ?? [];
  // The call is kept, marked invalid, with the AI SDK's error; the tool-error part is its text.
  const call = content.find((part) => part.type === 'tool-call') as { invalid?: boolean; error?: unknown } | undefined;
  expect(call?.invalid).toBe(true);
  expect(ai.InvalidToolInputError.isInstance(call?.error)).toBe(true);
  const validation = (call?.error as { cause?: unknown }).cause;
  expect(ai.TypeValidationError.isInstance(validation)).toBe(true);
  expect((validation as { cause?: unknown }).cause).toEqual([
    { path: ['city'], message: 'city must be longer than or equal to 2 characters' },
    { path: ['days'], message: 'days must not be greater than 7' },
  ]);
  const errors = content.filter((part) => part.type === 'tool-error');
  expect(errors).toHaveLength(1);
  expect(String((errors[0] as { error: unknown }).error)).toMatch(/^AI_InvalidToolInputError: Invalid input for tool weather: /);
  // The model's next turn was told, in the AI SDK's words, with our messages in them.
  expect(result.text).toContain('city must be longer than or equal to 2 characters');
});
