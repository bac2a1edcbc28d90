// The floor: bare fetch + direct calls, no framework, no argument validation.
import { API_KEY, MODEL, OPENAI_TOOLS, PROMPT, SYSTEM_PROMPT, add, getWeather } from '../scenario.cjs';

export const tools = OPENAI_TOOLS;
const impl = { get_weather: getWeather, add };

export async function create(baseUrl) {
  const url = `${baseUrl}/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  return async function ask() {
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: PROMPT },
    ];
    for (let turn = 0; turn < 5; turn++) {
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ model: MODEL, messages, tools }) });
      if (!response.ok) throw new Error(`mock answered ${response.status}`);
      const message = (await response.json()).choices[0].message;
      messages.push(message);
      if (!message.tool_calls?.length) return message.content;
      const results = await Promise.all(
        message.tool_calls.map(async (call) => {
          const value = await impl[call.function.name](JSON.parse(call.function.arguments));
          return { role: 'tool', tool_call_id: call.id, content: typeof value === 'string' ? value : JSON.stringify(value) };
        }),
      );
      messages.push(...results);
    }
    throw new Error('floor: no final answer in 5 turns');
  };
}
