// Mastra (@mastra/core@0.24.9) with @ai-sdk/openai@2.0.131 (its AI SDK 5 provider line),
// chat-completions endpoint.
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { createOpenAI } from 'ai-sdk-openai-v2';
import { z } from 'zod';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, WEATHER, ADD, add, getWeather } from '../scenario.cjs';

const tools = {
  [WEATHER.name]: createTool({
    id: WEATHER.name,
    description: WEATHER.description,
    inputSchema: z.object({ city: z.string().describe(WEATHER.city) }),
    execute: async ({ context }) => getWeather(context),
  }),
  [ADD.name]: createTool({
    id: ADD.name,
    description: ADD.description,
    inputSchema: z.object({ a: z.number().describe(ADD.a), b: z.number().describe(ADD.b) }),
    execute: async ({ context }) => add(context),
  }),
};

export async function create(baseUrl) {
  const agent = new Agent({
    name: 'bench',
    instructions: SYSTEM_PROMPT,
    model: createOpenAI({ baseURL: baseUrl, apiKey: API_KEY }).chat(MODEL),
    tools,
  });
  return async function ask() {
    const result = await agent.generate(PROMPT, { maxSteps: 5 });
    return result.text;
  };
}
