// Diagnostic row, not a peer: the AgentRunner row with `fetch: globalThis.fetch`, so its
// requests go over the same `fetch` as the floor's. Its distance to the floor is the
// runner's own cost on the floor's transport.
import { Toolkit } from '../../../dist';
import { AgentRunner } from '../../../dist/runner';
import { OpenAIChatModel } from '../../../dist/models';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT } from '../scenario.cjs';
import { AddTool, GetWeatherTool } from './tools';

export async function create(baseUrl: string): Promise<() => Promise<string>> {
  const toolkit = new Toolkit().register(GetWeatherTool, AddTool);
  const model = new OpenAIChatModel({ baseUrl, apiKey: API_KEY, model: MODEL, fetch: globalThis.fetch });
  const runner = new AgentRunner({ model, toolkit, systemPrompt: SYSTEM_PROMPT, maxTurns: 5 });
  return async function ask() {
    const result = await runner.run(PROMPT);
    if (result.status !== 'done') throw new Error(`toolnexus over fetch: run ended ${result.status}`);
    return result.text;
  };
}
