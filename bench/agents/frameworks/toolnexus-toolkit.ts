// Diagnostic row, not a peer: the floor's hand-written loop, but with the tools as
// toolnexus-ts classes dispatched by a Toolkit (argument validation ON). Its distance to
// the floor is the Toolkit's own cost; the AgentRunner row adds the runner's loop on top.
import { Toolkit } from '../../../dist';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT } from '../scenario.cjs';
import { AddTool, GetWeatherTool } from './tools';

interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export async function create(baseUrl: string): Promise<() => Promise<string | null>> {
  const toolkit = new Toolkit().register(GetWeatherTool, AddTool);
  const tools = toolkit.toOpenAI();
  const url = `${baseUrl}/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  return async function ask() {
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: PROMPT },
    ];
    for (let turn = 0; turn < 5; turn++) {
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ model: MODEL, messages, tools }) });
      if (!response.ok) throw new Error(`mock answered ${response.status}`);
      const body = (await response.json()) as { choices: Array<{ message: ChatMessage }> };
      const message = body.choices[0].message;
      messages.push(message);
      if (!message.tool_calls?.length) return message.content;
      const results = await Promise.all(message.tool_calls.map((call) => toolkit.execute(call.function.name, call.function.arguments)));
      message.tool_calls.forEach((call, i) => {
        const result = results[i];
        if (result.isError) throw new Error(`tool ${call.function.name} failed: ${result.output}`);
        messages.push({ role: 'tool', tool_call_id: call.id, content: result.output });
      });
    }
    throw new Error('toolkit loop: no final answer in 5 turns');
  };
}
