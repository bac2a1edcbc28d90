// toolnexus-ts: the real library from the repository's dist/, an AgentRunner over an
// OpenAIChatModel, with the tools as classes whose class-validator DTOs are checked on
// every call (argument validation ON).
import { IsNumber, IsString } from 'class-validator';
import { AgentRunner, Describe, OpenAIChatModel, Tool, Toolkit } from '../../../dist';
import { ADD, API_KEY, MODEL, PROMPT, SYSTEM_PROMPT, WEATHER, add, getWeather } from '../scenario.cjs';

class WeatherArgs {
  @IsString() @Describe(WEATHER.city) city!: string;
}

@Tool({ name: WEATHER.name, description: WEATHER.description, args: WeatherArgs })
class GetWeatherTool {
  run(args: WeatherArgs) {
    return getWeather(args);
  }
}

class AddArgs {
  @IsNumber() @Describe(ADD.a) a!: number;
  @IsNumber() @Describe(ADD.b) b!: number;
}

@Tool({ name: ADD.name, description: ADD.description, args: AddArgs })
class AddTool {
  run(args: AddArgs) {
    return add(args);
  }
}

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
