// Vercel AI SDK 6 (ai@6.0.326) with @ai-sdk/openai@3.0.141, chat-completions endpoint.
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAI } from 'ai-sdk-openai-v3';
import { z } from 'zod';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, WEATHER, ADD, add, getWeather } from '../scenario.cjs';

const tools = {
  [WEATHER.name]: tool({
    description: WEATHER.description,
    inputSchema: z.object({ city: z.string().describe(WEATHER.city) }),
    execute: async (args) => getWeather(args),
  }),
  [ADD.name]: tool({
    description: ADD.description,
    inputSchema: z.object({ a: z.number().describe(ADD.a), b: z.number().describe(ADD.b) }),
    execute: async (args) => add(args),
  }),
};

export async function create(baseUrl) {
  const model = createOpenAI({ baseURL: baseUrl, apiKey: API_KEY }).chat(MODEL);
  return async function ask() {
    const result = await generateText({ model, system: SYSTEM_PROMPT, prompt: PROMPT, tools, stopWhen: stepCountIs(5) });
    return result.text;
  };
}
