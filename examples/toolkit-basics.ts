/**
 * The Toolkit in one page: class tools with DTO arguments, one of them built by a DI
 * container (tsyringe), their OpenAI schema, a good call, a validation failure, a timeout.
 */
import 'reflect-metadata';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { container, injectable } from 'tsyringe';
import { Describe, Tool, Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';

/** A service the weather tool gets through its constructor. */
@injectable()
class WeatherService {
  private readonly readings: Record<string, number> = { paris: 18, oslo: 4, lima: 22 };
  temperature(city: string): number | undefined {
    return this.readings[city.toLowerCase()];
  }
}

class WeatherArgs {
  @IsString() @Describe('City name, e.g. "Paris"') city!: string;
  @IsOptional() @IsIn(['celsius', 'fahrenheit']) @Describe('Temperature unit') unit?: 'celsius' | 'fahrenheit';
}

@injectable()
@Tool({ description: 'Current temperature in a city', args: WeatherArgs })
class GetWeatherTool {
  constructor(private readonly weather: WeatherService) {}

  run(args: WeatherArgs) {
    const celsius = this.weather.temperature(args.city);
    if (celsius === undefined) throw new Error(`no station in ${args.city}`);
    return args.unit === 'fahrenheit' ? `${Math.round(celsius * 1.8 + 32)}°F in ${args.city}` : `${celsius}°C in ${args.city}`;
  }
}

class ReportArgs {
  @IsInt() @Min(1) @Max(31) @Describe('Day of the month') day!: number;
}

@Tool({ description: 'Builds the monthly report (slow)', args: ReportArgs, timeoutMs: 50 })
class BuildReportTool {
  run(args: ReportArgs, ctx?: ToolContext) {
    // Honour the deadline's signal so the work really stops.
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve(`report for day ${args.day}`), 1000);
      ctx?.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('stopped'));
      });
    });
  }
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  run: ({ a, b }) => Number(a) + Number(b),
});

export async function main(): Promise<void> {
  const toolkit = new Toolkit({ resolver: (cls) => container.resolve(cls) }).register(GetWeatherTool, BuildReportTool, add);

  section('Registered tools');
  for (const t of toolkit.tools()) console.log(`  • ${t.name.padEnd(14)} ${t.description}`);

  section('OpenAI schema of get_weather (derived from the DTO decorators)');
  console.log(indent(JSON.stringify(toolkit.toOpenAI()[0], null, 2)));

  section('A good call');
  await show(toolkit, 'get_weather', { city: 'Paris', unit: 'fahrenheit' });
  await show(toolkit, 'add', '{"a": 2, "b": 40}');

  section('Bad calls get clear error results, never exceptions');
  await show(toolkit, 'get_weather', { city: 42, unit: 'kelvin' });
  await show(toolkit, 'get_weather', '{"city": "Paris"');
  await show(toolkit, 'get_weather', { city: 'Atlantis' });
  await show(toolkit, 'send_email', { to: 'x' });

  section('A deadline (timeoutMs: 50 on the tool)');
  await show(toolkit, 'build_report', { day: 3 });
}

async function show(toolkit: Toolkit, name: string, args: unknown): Promise<void> {
  const result = await toolkit.execute(name, args);
  console.log(`  ${name}(${typeof args === 'string' ? args : JSON.stringify(args)})`);
  console.log(`    → ${result.isError ? '✗' : '✓'} ${result.output}`);
}

function section(title: string): void {
  console.log(`\n── ${title} ${'─'.repeat(Math.max(0, 70 - title.length))}`);
}

function indent(text: string): string {
  return text.replace(/^/gm, '    ');
}

if (require.main === module) void main();
