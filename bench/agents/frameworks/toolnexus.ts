// toolnexus-ts: the real library from the repository's dist/, an AgentRunner over an
// OpenAIChatModel, with the tools as classes whose class-validator DTOs are checked on
// every call (argument validation ON).
import { Toolkit } from '../../../dist';
import { AgentRunner } from '../../../dist/runner';
import { OpenAIChatModel } from '../../../dist/models';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT } from '../scenario.cjs';
import { AddTool, GetWeatherTool } from './tools';

export async function create(baseUrl: string): Promise<() => Promise<string>> {
  const toolkit = new Toolkit().register(GetWeatherTool, AddTool);
  const model = new OpenAIChatModel({ baseUrl, apiKey: API_KEY, model: MODEL });
  const runner = new AgentRunner({ model, toolkit, systemPrompt: SYSTEM_PROMPT, maxTurns: 5 });
  return async function ask() {
    const result = await runner.run(PROMPT);
    if (result.status !== 'done') throw new Error(`toolnexus run ended ${result.status}`);
    return result.text;
  };
}
