// Diagnostic row, not the floor: the floor's hand-written loop with the same two tool
// functions, but each POST over node:http with a keep-alive Agent instead of `fetch`. Its
// distance to the floor is what `fetch` itself costs on this Node; the AgentRunner sends
// over node:http by default, so this is the bare program it is fairest to compare it with.
import { Agent, request } from 'node:http';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, add, getWeather } from '../scenario.cjs';
import { tools } from './floor.mjs';

const impl = { get_weather: getWeather, add };

function post(url, agent, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function create(baseUrl) {
  const url = new URL(`${baseUrl}/chat/completions`);
  const agent = new Agent({ keepAlive: true });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  return async function ask() {
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: PROMPT },
    ];
    for (let turn = 0; turn < 5; turn++) {
      const response = await post(url, agent, headers, JSON.stringify({ model: MODEL, messages, tools }));
      if (response.status !== 200) throw new Error(`mock answered ${response.status}`);
      const message = JSON.parse(response.text).choices[0].message;
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
    throw new Error('floor over node:http: no final answer in 5 turns');
  };
}
