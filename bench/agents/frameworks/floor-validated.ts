// Diagnostic row, not a peer: the floor over node:http with the least a class-validator
// checked loop must add — each tool call's arguments turned into its DTO by class-transformer
// and checked by class-validator's `validateSync` with the library's options (whitelist,
// forbidUnknownValues), no toolkit, no runner. Its distance to the floor is what argument
// validation alone costs; no framework that validates class-validator DTOs can go below it.
import { Agent, request } from 'node:http';
import { plainToInstance } from 'class-transformer';
import { IsNumber, IsString, validateSync } from 'class-validator';
import { ADD, API_KEY, MODEL, OPENAI_TOOLS, PROMPT, SYSTEM_PROMPT, WEATHER, add, getWeather } from '../scenario.cjs';

class WeatherArgs {
  @IsString() city!: string;
}
class AddArgs {
  @IsNumber() a!: number;
  @IsNumber() b!: number;
}

type Dto = new () => object;
const impl: Record<string, { dto: Dto; run: (args: never) => unknown }> = {
  [WEATHER.name]: { dto: WeatherArgs, run: getWeather },
  [ADD.name]: { dto: AddArgs, run: add },
};
const OPTIONS = { whitelist: true, forbidUnknownValues: true, validationError: { target: false, value: false } };

const tools = OPENAI_TOOLS;

interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

function post(url: URL, agent: Agent, headers: Record<string, string>, body: string): Promise<{ status?: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function create(baseUrl: string): Promise<() => Promise<string | null>> {
  const url = new URL(`${baseUrl}/chat/completions`);
  const agent = new Agent({ keepAlive: true });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  return async function ask() {
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: PROMPT },
    ];
    for (let turn = 0; turn < 5; turn++) {
      const response = await post(url, agent, headers, JSON.stringify({ model: MODEL, messages, tools }));
      if (response.status !== 200) throw new Error(`mock answered ${response.status}`);
      const message = (JSON.parse(response.text) as { choices: Array<{ message: ChatMessage }> }).choices[0].message;
      messages.push(message);
      if (!message.tool_calls?.length) return message.content;
      const results = await Promise.all(
        message.tool_calls.map(async (call) => {
          const tool = impl[call.function.name];
          const args = plainToInstance(tool.dto, JSON.parse(call.function.arguments) as Record<string, unknown>);
          const errors = validateSync(args, OPTIONS);
          if (errors.length > 0) throw new Error(`invalid arguments for ${call.function.name}`);
          const value = await tool.run(args as never);
          return { role: 'tool', tool_call_id: call.id, content: typeof value === 'string' ? value : JSON.stringify(value) };
        }),
      );
      messages.push(...results);
    }
    throw new Error('validated floor: no final answer in 5 turns');
  };
}
