// Diagnostic row, not a peer: the library's OpenAIChatModel (over its node:http transport) and
// a Toolkit (argument validation ON) in a hand-written loop, no AgentRunner. Between the
// validated floor and the AgentRunner row: its distance to the first is the model's wire code
// and the Toolkit, its distance to the second the runner's own loop.
import { Toolkit } from '../../../dist';
import { OpenAIChatModel, type ChatMessage } from '../../../dist/models';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT } from '../scenario.cjs';
import { AddTool, GetWeatherTool } from './tools';

export async function create(baseUrl: string): Promise<() => Promise<string>> {
  const toolkit = new Toolkit().register(GetWeatherTool, AddTool);
  const model = new OpenAIChatModel({ baseUrl, apiKey: API_KEY, model: MODEL });
  const tools = toolkit.tools();
  return async function ask() {
    const messages: ChatMessage[] = [{ role: 'user', content: PROMPT }];
    for (let turn = 0; turn < 5; turn++) {
      const response = await model.complete({ system: SYSTEM_PROMPT, messages, tools });
      messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
      if (response.toolCalls.length === 0) return response.text;
      const results = await Promise.all(response.toolCalls.map((call) => toolkit.execute(call.name, call.arguments)));
      response.toolCalls.forEach((call, i) => {
        const result = results[i];
        if (result.isError) throw new Error(`tool ${call.name} failed: ${result.output}`);
        messages.push({ role: 'tool', callId: call.id, name: call.name, content: result.output, isError: false });
      });
    }
    throw new Error('model loop: no final answer in 5 turns');
  };
}
