// OpenAI Agents SDK (@openai/agents@0.20.0), chat-completions endpoint, tracing off
// (its exporter would otherwise try to reach the real API).
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { z } from 'zod';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, WEATHER, ADD, add, getWeather } from '../scenario.cjs';

const tools = [
  tool({
    name: WEATHER.name,
    description: WEATHER.description,
    parameters: z.object({ city: z.string().describe(WEATHER.city) }),
    execute: async (args) => JSON.stringify(getWeather(args)),
  }),
  tool({
    name: ADD.name,
    description: ADD.description,
    parameters: z.object({ a: z.number().describe(ADD.a), b: z.number().describe(ADD.b) }),
    execute: async (args) => String(add(args)),
  }),
];

export async function create(baseUrl) {
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ baseURL: baseUrl, apiKey: API_KEY, useResponses: false }),
    tracingDisabled: true,
  });
  const agent = new Agent({ name: 'bench', instructions: SYSTEM_PROMPT, model: MODEL, tools });
  return async function ask() {
    const result = await runner.run(agent, PROMPT, { maxTurns: 5 });
    return result.finalOutput;
  };
}
