// toolnexus-ts streamed, for guardrails.mjs: the AgentRunner row's runner (frameworks/toolnexus.ts)
// asked through `stream()` (the path hold-back changes), with guardrails as `mode` says:
//   off       none
//   holdback  one no-op output guardrail, hold-back by turn (the default)
//   segments  one no-op output guardrail, hold-back by sentence
// The options go in as a spread record, so this file compiles against a build from before
// guardrails too (GUARDRAILS_BASELINE), where only `off` is asked of it.
import { Toolkit } from '../../../dist';
import { AgentRunner } from '../../../dist/runner';
import { OpenAIChatModel } from '../../../dist/models';
import { API_KEY, MODEL, PROMPT, SYSTEM_PROMPT } from '../scenario.cjs';
import { AddTool, GetWeatherTool } from './tools';

const allow = () => ({ action: 'allow' as const });

export async function create(baseUrl: string, mode = 'off'): Promise<() => Promise<string>> {
  const toolkit = new Toolkit().register(GetWeatherTool, AddTool);
  const model = new OpenAIChatModel({ baseUrl, apiKey: API_KEY, model: MODEL });
  const guarded: Record<string, unknown> =
    mode === 'off' ? {} : { guardrails: { output: [allow], holdBack: mode === 'segments' ? 'segments' : 'turn' } };
  const runner = new AgentRunner({ model, toolkit, systemPrompt: SYSTEM_PROMPT, maxTurns: 5, ...guarded });
  return async function ask() {
    let text = '';
    let status = '';
    for await (const event of runner.stream(PROMPT)) {
      if (event.type === 'text') text += event.delta;
      else if (event.type === 'done') status = event.result.status;
    }
    if (status !== 'done') throw new Error(`toolnexus run ended ${status}`);
    return text;
  };
}
