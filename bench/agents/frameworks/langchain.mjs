// LangChain.js (langchain@1.5.14 createAgent) with @langchain/openai@1.5.8 ChatOpenAI.
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, WEATHER, ADD, add, getWeather } from '../scenario.cjs';

const tools = [
  tool(async (args) => JSON.stringify(getWeather(args)), {
    name: WEATHER.name,
    description: WEATHER.description,
    schema: z.object({ city: z.string().describe(WEATHER.city) }),
  }),
  tool(async (args) => String(add(args)), {
    name: ADD.name,
    description: ADD.description,
    schema: z.object({ a: z.number().describe(ADD.a), b: z.number().describe(ADD.b) }),
  }),
];

export async function create(baseUrl) {
  const model = new ChatOpenAI({ model: MODEL, apiKey: API_KEY, configuration: { baseURL: baseUrl } });
  const agent = createAgent({ model, tools, systemPrompt: SYSTEM_PROMPT });
  return async function ask() {
    const state = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, { recursionLimit: 12 });
    const last = state.messages[state.messages.length - 1];
    return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  };
}
